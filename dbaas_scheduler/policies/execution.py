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

from oslo_policy import policy

from dbaas_scheduler.policies import base

PREFIX = 'dbaas_scheduler:execution:%s'
LIST = PREFIX % 'list'
LIST_ALL_PROJECTS = PREFIX % 'list:all_projects'
SHOW = PREFIX % 'show'

rules = [
    policy.DocumentedRuleDefault(
        name=LIST, check_str=base.PROJECT_READER,
        description='List the executions (backup history) of the project.',
        operations=[{'method': 'GET', 'path': '/v1/executions'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=LIST_ALL_PROJECTS, check_str=base.ADMIN,
        description='List the executions of every project.',
        operations=[{'method': 'GET',
                     'path': '/v1/executions?all_projects=true'}],
        scope_types=['project']),
    policy.DocumentedRuleDefault(
        name=SHOW, check_str=base.PROJECT_READER,
        description='Show one execution.',
        operations=[{'method': 'GET',
                     'path': '/v1/executions/{execution_id}'}],
        scope_types=['project']),
]


def list_rules():
    return rules
