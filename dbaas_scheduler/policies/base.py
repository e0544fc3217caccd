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
"""Personas every policy rule is built from, new defaults and legacy ones.

Secure RBAC as OpenStack defines it: a *system*-scoped admin (a token
scoped to ``system: all``) runs the cloud -- the cluster view, lists
across projects, and any project's objects; a system reader looks at
them.  A *project*-scoped token acts in its own project only: its readers
look, its members change, its managers and admins too.  Keystone's roles
imply each other (admin > manager > member > reader), so a member is also
a reader.

Every rule carries the legacy default as a :class:`DeprecatedRule`: until
``[oslo_policy] enforce_new_defaults`` is set, oslo.policy allows what
either allows, so ``admin`` in any project is still admin of every
project, as before.  With it set, only the new defaults hold.
"""

from oslo_policy import policy

# The legacy defaults: ``admin`` in any project is admin of everything.
ADMIN = 'rule:context_is_admin'
PROJECT_READER = 'rule:admin_or_project_reader'
PROJECT_MEMBER = 'rule:admin_or_project_member'

# The new defaults.
SYSTEM_ADMIN = 'rule:system_admin'
SYSTEM_READER = 'rule:system_reader'
PROJECT_ADMIN = 'rule:project_admin'
PROJECT_MANAGER = 'rule:project_manager'
SYSTEM_OR_PROJECT_READER = 'rule:system_reader or rule:project_reader'
SYSTEM_ADMIN_OR_PROJECT_MEMBER = 'rule:system_admin or rule:project_member'
SYSTEM_ADMIN_OR_PROJECT_MANAGER = ('rule:system_admin or '
                                   'rule:project_manager')

# Who may use a rule's operation: a project's token, a system token.
PROJECT = ['project']
SYSTEM_AND_PROJECT = ['system', 'project']

DEPRECATED_REASON = (
    'dbaas-scheduler follows secure RBAC: "admin" in any project is no '
    'longer admin of every project; the cloud is run with system-scoped '
    'tokens, and project-scoped tokens act in their own project only.')
DEPRECATED_SINCE = '2027.1'

rules = [
    policy.RuleDefault(
        'context_is_admin', 'role:admin',
        description='An administrator (legacy default: the admin role in '
                    'any project).'),
    policy.RuleDefault(
        'admin_or_project_reader',
        'role:admin or (role:reader and project_id:%(project_id)s)',
        description='Legacy default: an administrator, or a reader of the '
                    'project that owns the object.'),
    policy.RuleDefault(
        'admin_or_project_member',
        'role:admin or (role:member and project_id:%(project_id)s)',
        description='Legacy default: an administrator, or a member of the '
                    'project that owns the object.'),
    policy.RuleDefault(
        'system_admin', 'role:admin and system_scope:all',
        description='An administrator of the cloud: the admin role on a '
                    'system-scoped token.'),
    policy.RuleDefault(
        'system_reader', 'role:reader and system_scope:all',
        description='A reader of the whole cloud: the reader role (implied '
                    'by admin) on a system-scoped token.'),
    policy.RuleDefault(
        'project_admin', 'role:admin and project_id:%(project_id)s',
        description='An administrator of the project that owns the object.'),
    policy.RuleDefault(
        'project_manager',
        '(role:manager or role:admin) and project_id:%(project_id)s',
        description='A manager (or administrator) of the project that owns '
                    'the object.'),
    policy.RuleDefault(
        'project_member', 'role:member and project_id:%(project_id)s',
        description='A member of the project that owns the object (a '
                    'manager and an admin are members too).'),
    policy.RuleDefault(
        'project_reader', 'role:reader and project_id:%(project_id)s',
        description='A reader of the project that owns the object (every '
                    'member is a reader too).'),
]


def rule(name, check_str, legacy_check_str, description, operations,
         scope_types):
    """A documented rule whose legacy default lives on as deprecated.

    ``operations`` is a list of ``(method, path)``.
    """
    return policy.DocumentedRuleDefault(
        name=name, check_str=check_str, description=description,
        operations=[{'method': method, 'path': path}
                    for method, path in operations],
        scope_types=scope_types,
        deprecated_rule=policy.DeprecatedRule(
            name=name, check_str=legacy_check_str,
            deprecated_reason=DEPRECATED_REASON,
            deprecated_since=DEPRECATED_SINCE))


def list_rules():
    return rules
