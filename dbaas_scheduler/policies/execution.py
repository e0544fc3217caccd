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
"""Policy rules of /v1/executions."""

from dbaas_scheduler.policies import base

PREFIX = 'dbaas_scheduler:execution:%s'
LIST = PREFIX % 'list'
LIST_ALL_PROJECTS = PREFIX % 'list:all_projects'
SHOW = PREFIX % 'show'
HOLD = PREFIX % 'hold'
RELEASE = PREFIX % 'release'

_READ = (base.SYSTEM_OR_PROJECT_READER, base.PROJECT_READER)

rules = [
    base.rule(LIST, _READ[0], _READ[1],
              'List the executions (backup history) of the project (a '
              'system-scoped token lists every project\'s).',
              [('GET', '/v1/executions')], base.SYSTEM_AND_PROJECT),
    base.rule(LIST_ALL_PROJECTS, base.SYSTEM_ADMIN, base.ADMIN,
              'List the executions of every project.',
              [('GET', '/v1/executions?all_projects=true')],
              base.SYSTEM_AND_PROJECT),
    base.rule(SHOW, _READ[0], _READ[1], 'Show one execution.',
              [('GET', '/v1/executions/{execution_id}')],
              base.SYSTEM_AND_PROJECT),
    base.rule(HOLD, base.SYSTEM_ADMIN_OR_PROJECT_MEMBER,
              base.PROJECT_MEMBER,
              'Hold the backup of an execution: retention never deletes '
              'it.',
              [('POST', '/v1/executions/{execution_id}/hold')],
              base.SYSTEM_AND_PROJECT),
    base.rule(RELEASE, base.SYSTEM_ADMIN_OR_PROJECT_MEMBER,
              base.PROJECT_MEMBER,
              'Release the hold on the backup of an execution.',
              [('POST', '/v1/executions/{execution_id}/release')],
              base.SYSTEM_AND_PROJECT),
]


def list_rules():
    return rules
