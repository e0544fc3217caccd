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
"""Policy rules of the coverage report (/v1/coverage)."""

from dbaas_scheduler.policies import base

PREFIX = 'dbaas_scheduler:coverage:%s'
GET = PREFIX % 'get'
GET_ALL_PROJECTS = PREFIX % 'get:all_projects'

rules = [
    base.rule(GET, base.SYSTEM_OR_PROJECT_READER, base.PROJECT_READER,
              'Show the coverage report of the project: every instance '
              'and its protection state (a system-scoped token shows '
              'every project\'s).',
              [('GET', '/v1/coverage')], base.SYSTEM_AND_PROJECT),
    base.rule(GET_ALL_PROJECTS, base.SYSTEM_ADMIN, base.ADMIN,
              'Show the coverage report of every project.',
              [('GET', '/v1/coverage?all_projects=true')],
              base.SYSTEM_AND_PROJECT),
]


def list_rules():
    return rules
