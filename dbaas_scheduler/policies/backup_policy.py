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
LIFECYCLE = PREFIX % 'lifecycle'

_COLLECTION = '/v1/backup-policies'
_ITEM = '/v1/backup-policies/{policy_id}'


_READ = (base.SYSTEM_OR_PROJECT_READER, base.PROJECT_READER)
_CHANGE = (base.SYSTEM_ADMIN_OR_PROJECT_MEMBER, base.PROJECT_MEMBER)


def _rule(name, checks, description, method, path,
          scope_types=base.SYSTEM_AND_PROJECT):
    return base.rule(name, checks[0], checks[1], description,
                     [(method, path)], scope_types)


rules = [
    _rule(LIST, _READ,
          'List the backup policies of the project (a system-scoped token '
          'lists every project\'s, as with all_projects=true).', 'GET',
          _COLLECTION),
    _rule(LIST_ALL_PROJECTS, (base.SYSTEM_ADMIN, base.ADMIN),
          'List the backup policies of every project (all_projects=true).',
          'GET', _COLLECTION + '?all_projects=true'),
    # A policy belongs to a project: only a project's token can make one.
    _rule(CREATE, ('rule:project_member', base.PROJECT_MEMBER),
          'Create a backup policy in the project.', 'POST', _COLLECTION,
          scope_types=base.PROJECT),
    _rule(SHOW, _READ, 'Show a backup policy.', 'GET', _ITEM),
    _rule(UPDATE, _CHANGE, 'Change a backup policy.', 'PATCH', _ITEM),
    _rule(DELETE, _CHANGE,
          'Delete a backup policy (its executions stay as history).',
          'DELETE', _ITEM),
    _rule(PAUSE, _CHANGE, 'Pause a backup policy.', 'POST',
          _ITEM + '/pause'),
    _rule(RESUME, _CHANGE, 'Resume a paused backup policy.', 'POST',
          _ITEM + '/resume'),
    _rule(RUN, _CHANGE, 'Take a backup now (a manual execution).', 'POST',
          _ITEM + '/run'),
    _rule(NEXT_RUNS, _READ, 'Preview the next run times of a backup policy.',
          'GET', _ITEM + '/next-runs'),
    _rule(LIFECYCLE, _READ,
          'Preview the lifecycle of a backup policy: its next slots with '
          'their windows and exclusions, the RPO coverage they give and '
          'what retention will delete at its next runs.', 'GET',
          _ITEM + '/lifecycle'),
]


def list_rules():
    return rules
