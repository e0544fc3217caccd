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
"""Options of ``[quota]``: the limits used where Keystone sets none."""

from oslo_config import cfg

quota_group = cfg.OptGroup(
    'quota', title='Quotas and rate limits',
    help='How many backup policies a project may have, and how many manual '
         'runs each policy may take in an hour. With Keystone unified '
         'limits configured ([oslo_limit] endpoint_id, or its '
         'endpoint_service_type/endpoint_service_name, and auth) a limit '
         'registered in Keystone for the resource backup_policies or '
         'backup_policy_manual_runs_per_hour wins; these options apply to '
         'the resources Keystone has no limit for, and to every resource '
         'when unified limits are not configured or auth_strategy is noauth '
         '(the all-in-one). '
         'See "Quotas and rate limits" in the administration guide.')

quota_opts = [
    cfg.IntOpt(
        'policies_per_project',
        default=100,
        min=-1,
        mutable=True,
        help='Backup policies a project may have at once; creating one more '
             'is refused with 403 naming the limit and the usage. Default: '
             '100. -1 means no limit, 0 forbids creating policies. Counts '
             'every policy of the project, paused ones too; Keystone\'s '
             'limit for the resource backup_policies replaces it.'),
    cfg.IntOpt(
        'manual_runs_per_policy_per_hour',
        default=10,
        min=-1,
        mutable=True,
        help='Manual runs (POST .../run) one policy may take in any 60 '
             'minutes; one more is refused with 429 and a Retry-After '
             'header saying when the oldest run of the hour leaves the '
             'window. Default: 10. -1 means no limit, 0 forbids manual '
             'runs (403). Scheduled runs do not count. Keystone\'s limit '
             'for the resource backup_policy_manual_runs_per_hour (a '
             'per-project value, applied to each policy of the project) '
             'replaces it.'),
]


def register_opts(conf):
    conf.register_group(quota_group)
    conf.register_opts(quota_opts, group=quota_group)


def list_opts():
    return {quota_group: quota_opts}
