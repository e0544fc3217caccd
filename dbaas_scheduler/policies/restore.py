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
"""Policy rules of restores (/v1/executions/{id}/restore, /v1/restores)."""

from dbaas_scheduler.policies import base

PREFIX = 'dbaas_scheduler:restore:%s'
CREATE = PREFIX % 'create'
LIST = PREFIX % 'list'
LIST_ALL_PROJECTS = PREFIX % 'list:all_projects'
SHOW = PREFIX % 'show'

_READ = (base.SYSTEM_OR_PROJECT_READER, base.PROJECT_READER)
# Restoring makes instances (or overwrites databases): a member's act, in
# the project of the policy the backup belongs to.
_CHANGE = (base.SYSTEM_ADMIN_OR_PROJECT_MEMBER, base.PROJECT_MEMBER)

rules = [
    base.rule(CREATE, _CHANGE[0], _CHANGE[1],
              'Restore the backup of an execution (a new Trove instance, '
              'or a local restore target).',
              [('POST', '/v1/executions/{execution_id}/restore')],
              base.SYSTEM_AND_PROJECT),
    base.rule(LIST, _READ[0], _READ[1],
              'List the restores of the project (a system-scoped token '
              'lists every project\'s).',
              [('GET', '/v1/restores')], base.SYSTEM_AND_PROJECT),
    base.rule(LIST_ALL_PROJECTS, base.SYSTEM_ADMIN, base.ADMIN,
              'List the restores of every project.',
              [('GET', '/v1/restores?all_projects=true')],
              base.SYSTEM_AND_PROJECT),
    base.rule(SHOW, _READ[0], _READ[1], 'Show one restore.',
              [('GET', '/v1/restores/{restore_id}')],
              base.SYSTEM_AND_PROJECT),
]


def list_rules():
    return rules
