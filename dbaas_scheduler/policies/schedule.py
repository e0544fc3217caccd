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

from oslo_policy import policy

from dbaas_scheduler.policies import base

PREVIEW = 'dbaas_scheduler:schedule:preview'

rules = [
    policy.DocumentedRuleDefault(
        name=PREVIEW, check_str=base.PROJECT_READER,
        description='Preview the run times of a schedule, before creating '
                    'a backup policy with it.',
        operations=[{'method': 'GET', 'path': '/v1/schedule-preview'}],
        scope_types=['project']),
]


def list_rules():
    return rules
