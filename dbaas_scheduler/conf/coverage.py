# Licensed under the Apache License, Version 2.0 (the "License"); you may
# not use this file except in compliance with the License. You may obtain
# a copy of the License at
#
#      http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS, WITHOUT
# WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied. See the
# License for the specific language governing permissions and limitations
# under the License.
"""Options of the ``[coverage]`` group: what the coverage report demands."""

from oslo_config import cfg

coverage_group = cfg.OptGroup(
    'coverage', title='Coverage report',
    help='What GET /v1/coverage (openstack database backup coverage) and '
         'the dbaas_scheduler_coverage_instances metric demand of every '
         'instance of a project: a backup recent enough, often enough, '
         'kept long enough (see "Coverage" in the administration guide).')

# Upper bounds: a larger value is surely a typo, and no instance could
# ever be protected by it (every one would be reported below_minimum or
# stale, or a metric would serve counts nobody refreshed for months).
# The largest RPO a policy takes (api/schemas/backup_policy.py).
MAX_AGE = 10 * 366 * 86400
# One backup a minute.
MAX_DAILY = 24 * 60
# Hourly backups kept for more than ten years.
MAX_KEEP = 100000
# A week.
MAX_COUNTS_AGE = 7 * 86400

coverage_opts = [
    cfg.IntOpt(
        'max_age',
        default=36 * 3600,
        min=60,
        max=MAX_AGE,
        help='Seconds: an instance whose newest successful backup (or, '
             'before its first, whose oldest policy) is older than this '
             'is stale. Default: 129600 (36 hours: one failed night of a '
             'daily schedule is not yet stale); at most 316224000 (ten '
             'years, the largest RPO a policy takes). An instance with a '
             'policy that has an RPO of its own (rpo) is judged by the '
             'shortest such RPO instead.'),
    cfg.FloatOpt(
        'min_daily',
        default=1.0,
        min=0,
        max=MAX_DAILY,
        help='Backups a day the enabled policies of an instance must take '
             'together, on average over their next slots; fewer is '
             'below_minimum. Default: 1 (daily); at most 1440 (one a '
             'minute). 0 turns the check off. A '
             'shortfall of up to 1% is tolerated, so that a daily schedule '
             'in a time zone with daylight saving time passes.'),
    cfg.IntOpt(
        'min_keep',
        default=0,
        min=0,
        max=MAX_KEEP,
        help='Successful backups at least one enabled policy of an '
             'instance must keep by its retention (the largest of its '
             'keep_last, keep_daily, keep_weekly, keep_monthly, min_keep, '
             'and max_age_days times its backups a day); fewer is '
             'below_minimum. A policy without retention rules keeps every '
             'backup. Default: 0 (no check); at most 100000 (hourly '
             'backups kept for more than ten years).'),
    cfg.IntOpt(
        'counts_max_age',
        default=3600,
        min=60,
        max=MAX_COUNTS_AGE,
        help='Seconds a project\'s counts of instances per coverage state, '
             'stored by its last coverage report, stay in the '
             'dbaas_scheduler_coverage_instances metric. Default: 3600; '
             'at most 604800 (a week). '
             'A project whose report is older drops out of the metric; '
             'have a monitoring job ask each project\'s report (GET '
             '/v1/coverage) more often than this.'),
    cfg.IntOpt(
        'metrics_projects',
        default=20,
        min=0,
        max=1000,
        help='Projects named in the metric '
             'dbaas_scheduler_coverage_project_instances: those with the '
             'most instances not protected, their counts per state other '
             'than protected. Default: 20. Each project named adds up to '
             'five series; 0 names none (the totals per state remain).'),
]


def register_opts(conf):
    conf.register_group(coverage_group)
    conf.register_opts(coverage_opts, group=coverage_group)


def list_opts():
    return {coverage_group: coverage_opts}
