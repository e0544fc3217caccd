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
"""Policy rules of /v1/backup-policies."""

from oslo_policy import policy

from dbaas_scheduler.policies import base

PREFIX = 'dbaas_scheduler:backup_policy:%s'
LIST = PREFIX % 'list'
LIST_ALL_PROJECTS = PREFIX % 'list:all_projects'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
UPDATE = PREFIX % 'update'
DELETE = PREFIX % 'delete'
PAUSE = PREFIX % 'pause'
RESUME = PREFIX % 'resume'
RUN = PREFIX % 'run'
NEXT_RUNS = PREFIX % 'next_runs'

_COLLECTION = '/v1/backup-policies'
_ITEM = '/v1/backup-policies/{policy_id}'


def _rule(name, check_str, description, method, path):
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}],
        scope_types=['project'])


rules = [
    _rule(LIST, base.PROJECT_READER,
          'List the backup policies of the project.', 'GET', _COLLECTION),
    _rule(LIST_ALL_PROJECTS, base.ADMIN,
          'List the backup policies of every project (all_projects=true).',
          'GET', _COLLECTION + '?all_projects=true'),
    _rule(CREATE, base.PROJECT_MEMBER,
          'Create a backup policy in the project.', 'POST', _COLLECTION),
    _rule(SHOW, base.PROJECT_READER, 'Show a backup policy.', 'GET', _ITEM),
    _rule(UPDATE, base.PROJECT_MEMBER, 'Change a backup policy.', 'PATCH',
          _ITEM),
    _rule(DELETE, base.PROJECT_MEMBER,
          'Delete a backup policy (its executions stay as history).',
          'DELETE', _ITEM),
    _rule(PAUSE, base.PROJECT_MEMBER, 'Pause a backup policy.', 'POST',
          _ITEM + '/pause'),
    _rule(RESUME, base.PROJECT_MEMBER, 'Resume a paused backup policy.',
          'POST', _ITEM + '/resume'),
    _rule(RUN, base.PROJECT_MEMBER,
          'Take a backup now (a manual execution).', 'POST', _ITEM + '/run'),
    _rule(NEXT_RUNS, base.PROJECT_READER,
          'Preview the next run times of a backup policy.', 'GET',
          _ITEM + '/next-runs'),
]


def list_rules():
    return rules
