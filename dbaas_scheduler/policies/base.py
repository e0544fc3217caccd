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
"""Rules every other policy module builds on: who is admin, reader, member.

Secure-RBAC defaults, project scoped: a project's readers look, its members
change, and admins see and change every project.  Keystone's default roles
imply each other (admin > member > reader), so a member is also a reader.
"""

from oslo_policy import policy

ADMIN = 'rule:context_is_admin'
PROJECT_READER = 'rule:admin_or_project_reader'
PROJECT_MEMBER = 'rule:admin_or_project_member'

rules = [
    policy.RuleDefault(
        'context_is_admin', 'role:admin',
        description='An administrator of the cloud.'),
    policy.RuleDefault(
        'admin_or_project_reader',
        'role:admin or (role:reader and project_id:%(project_id)s)',
        description='An administrator, or a reader of the project that owns '
                    'the object.'),
    policy.RuleDefault(
        'admin_or_project_member',
        'role:admin or (role:member and project_id:%(project_id)s)',
        description='An administrator, or a member of the project that owns '
                    'the object.'),
]


def list_rules():
    return rules
