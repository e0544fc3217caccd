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
"""Options of ``[verify]``: scheduled verification of backups."""

from oslo_config import cfg

verify_group = cfg.OptGroup(
    'verify', title='Scheduled verification of backups',
    help='A policy with verify_every set has every Nth successful backup '
         'restored into a scratch target, checked and deleted; one with '
         'verify_schedule (API 1.8) has its newest backup verified so '
         'at each slot of that cron schedule, in the policy\'s time zone '
         '(see '
         '"Restoring" in the user guide). These options bound what the '
         'verifications may cost the region.')

verify_opts = [
    cfg.IntOpt(
        'max_concurrent',
        default=2,
        min=1,
        mutable=True,
        help='Verifications that may run at once in the whole region, and '
             'again at most this many in any one project; enforced in the '
             'database, so every worker and engine counts alike. Default: '
             '2. Each running verification holds a scratch database (or a '
             'Trove instance) and a worker thread; a verification beyond '
             'the limit waits, PENDING, and is cast again by the engine\'s '
             'sweep ([engine] dispatch_timeout later).'),
    cfg.IntOpt(
        'max_concurrent_per_project',
        default=1,
        min=1,
        mutable=True,
        help='Verifications that may run at once in one project (and no '
             'more than max_concurrent). Default: 1.'),
    cfg.StrOpt(
        'flavor',
        help='Trove flavor (ID) of the scratch instances that verifications '
             'of Trove backups restore into, in the policy\'s project (the '
             'smallest flavor that restores your largest database; each '
             'counts in the project\'s quotas while it exists). Default: '
             'unset: the flavor of the backup\'s source instance. Its volume '
             'is the backup\'s size rounded up to whole GB.'),
    cfg.IntOpt(
        'check_timeout',
        default=60,
        min=1,
        help='Seconds the user\'s SQL check of a local verification may run '
             'on the scratch database before it counts as failed; for a '
             'Trove verification, seconds the scratch instance\'s database '
             'may take to report HEALTHY once the instance is ACTIVE (the '
             'build itself is bounded by [worker] restore_timeout). '
             'Default: 60.'),
]


def register_opts(conf):
    conf.register_group(verify_group)
    conf.register_opts(verify_opts, group=verify_group)


def list_opts():
    return {verify_group: verify_opts}
