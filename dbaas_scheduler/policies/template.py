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
"""Policy rules of /v1/policy-templates: a project's default policies.

A template makes policies for every new instance of its project: a
project's manager (or admin) decides that, not each member.
"""

from dbaas_scheduler.policies import base

PREFIX = 'dbaas_scheduler:policy_template:%s'
LIST = PREFIX % 'list'
LIST_ALL_PROJECTS = PREFIX % 'list:all_projects'
CREATE = PREFIX % 'create'
SHOW = PREFIX % 'show'
DELETE = PREFIX % 'delete'
APPLY = PREFIX % 'apply'

_COLLECTION = '/v1/policy-templates'
_ITEM = '/v1/policy-templates/{template_id}'

_READ = (base.SYSTEM_OR_PROJECT_READER, base.PROJECT_READER)

rules = [
    base.rule(LIST, _READ[0], _READ[1],
              'List the policy templates of the project (a system-scoped '
              'token lists every project\'s).', [('GET', _COLLECTION)],
              base.SYSTEM_AND_PROJECT),
    base.rule(LIST_ALL_PROJECTS, base.SYSTEM_ADMIN, base.ADMIN,
              'List the policy templates of every project.',
              [('GET', _COLLECTION + '?all_projects=true')],
              base.SYSTEM_AND_PROJECT),
    # A template belongs to a project: only a project's token makes one.
    base.rule(CREATE, base.PROJECT_MANAGER, base.ADMIN,
              'Create a policy template: the default policy every new '
              'instance of the project is given.',
              [('POST', _COLLECTION)], base.PROJECT),
    base.rule(SHOW, _READ[0], _READ[1], 'Show a policy template.',
              [('GET', _ITEM)], base.SYSTEM_AND_PROJECT),
    base.rule(DELETE, base.SYSTEM_ADMIN_OR_PROJECT_MANAGER, base.ADMIN,
              'Delete a policy template (the policies it made stay).',
              [('DELETE', _ITEM)], base.SYSTEM_AND_PROJECT),
    # The project's instances are listed with the caller's own token.
    base.rule(APPLY, base.PROJECT_MANAGER, base.ADMIN,
              'Apply a policy template to existing instances of the '
              'project (or list what it would create, dry_run).',
              [('POST', _ITEM + '/apply')], base.PROJECT),
]


def list_rules():
    return rules
