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
"""Policy rules of /v1/schedule-preview."""

from dbaas_scheduler.policies import base

PREVIEW = 'dbaas_scheduler:schedule:preview'

rules = [
    base.rule(PREVIEW, base.SYSTEM_OR_PROJECT_READER, base.PROJECT_READER,
              'Preview the run times of a schedule, before creating a '
              'backup policy with it.',
              [('GET', '/v1/schedule-preview')], base.SYSTEM_AND_PROJECT),
]


def list_rules():
    return rules
