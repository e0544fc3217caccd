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
"""The policy rules, persona by persona, under the new and legacy defaults."""

import warnings

from oslo_policy import policy as oslo_policy

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import exception
from dbaas_scheduler import policies
from dbaas_scheduler.policies import backup_policy
from dbaas_scheduler.policies import execution
from dbaas_scheduler.policies import schedule
from dbaas_scheduler.policies import service
from dbaas_scheduler import policy
from dbaas_scheduler.tests import base

PROJECT_A = 'project-a'
# Keystone expands implied roles into the token: admin > manager > member
# > reader.
IMPLIED = {'admin': ['admin', 'manager', 'member', 'reader'],
           'manager': ['manager', 'member', 'reader'],
           'member': ['member', 'reader'],
           'reader': ['reader']}


def _persona(role, project_id=None, system=False):
    return dbaas_context.RequestContext(
        user_id='user-%s' % role, project_id=project_id,
        roles=IMPLIED.get(role, []), system_scope='all' if system else None)


PERSONAS = {
    'system_admin': _persona('admin', system=True),
    'system_reader': _persona('reader', system=True),
    'a_admin': _persona('admin', PROJECT_A),
    'a_manager': _persona('manager', PROJECT_A),
    'a_member': _persona('member', PROJECT_A),
    'a_reader': _persona('reader', PROJECT_A),
    'a_no_role': _persona('none', PROJECT_A),
    # An admin and a member of other projects.
    'c_admin': _persona('admin', 'project-c'),
    'b_member': _persona('member', 'project-b'),
}

READ = (backup_policy.LIST, backup_policy.SHOW, backup_policy.NEXT_RUNS,
        execution.LIST, execution.SHOW, schedule.PREVIEW)
CHANGE = (backup_policy.UPDATE, backup_policy.DELETE, backup_policy.PAUSE,
          backup_policy.RESUME, backup_policy.RUN)
CREATE = (backup_policy.CREATE,)
CLOUD = (backup_policy.LIST_ALL_PROJECTS, execution.LIST_ALL_PROJECTS,
         service.LIST)

# Who may do what on project A's objects under the new defaults.
NEW = {
    READ: {'system_admin', 'system_reader', 'a_admin', 'a_manager',
           'a_member', 'a_reader'},
    CHANGE: {'system_admin', 'a_admin', 'a_manager', 'a_member'},
    CREATE: {'a_admin', 'a_manager', 'a_member'},
    CLOUD: {'system_admin'},
}
# The legacy defaults add: the admin role in any project is admin of all.
LEGACY = {
    READ: NEW[READ] | {'c_admin'},
    CHANGE: NEW[CHANGE] | {'c_admin'},
    CREATE: NEW[CREATE] | {'c_admin'},
    CLOUD: NEW[CLOUD] | {'a_admin', 'c_admin'},
}


class _PolicyTest(base.TestCase):

    new_defaults = None

    def setUp(self):
        super().setUp()
        policy.reset()
        self.addCleanup(policy.reset)
        policy.set_defaults(self.conf)
        if self.new_defaults is not None:
            self.flags(group='oslo_policy',
                       enforce_new_defaults=self.new_defaults)
        # oslo.policy before 5.0 enforces scope only when told to.
        if 'enforce_scope' in self.conf.oslo_policy:
            self.flags(group='oslo_policy', enforce_scope=True)
        policy.get_enforcer(self.conf)
        warnings.simplefilter('ignore', FutureWarning)
        warnings.simplefilter('ignore', UserWarning)

    def allowed(self, persona, rule, project_id=PROJECT_A):
        try:
            policy.authorize(PERSONAS[persona], rule,
                             {'project_id': project_id})
        except exception.Forbidden:
            return False
        return True

    def assertMatrix(self, table):
        for rules, expected in table.items():
            for rule in rules:
                allowed = {persona for persona in PERSONAS
                           if self.allowed(persona, rule)}
                self.assertEqual(sorted(expected), sorted(allowed), rule)


class TestNewDefaults(_PolicyTest):

    new_defaults = True

    def test_persona_matrix(self):
        self.assertMatrix(NEW)

    def test_an_admin_of_another_project_manages_nothing_here(self):
        for rule in READ + CHANGE + CREATE + CLOUD:
            self.assertFalse(self.allowed('c_admin', rule), rule)

    def test_a_system_token_without_project_is_not_a_project_reader(self):
        # "project_id:%(project_id)s" against no project on either side.
        context = dbaas_context.RequestContext(
            user_id='u', roles=['reader'], system_scope='all')
        self.assertRaises(exception.Forbidden, policy.authorize, context,
                          'project_reader', {'project_id': None})
        self.assertRaises(exception.Forbidden, policy.authorize, context,
                          backup_policy.CREATE, {'project_id': None})


class TestLegacyDefaults(_PolicyTest):

    new_defaults = False

    def test_persona_matrix(self):
        self.assertMatrix(LEGACY)


class TestServiceDefault(_PolicyTest):
    """Without [oslo_policy] in the file: the legacy defaults hold."""

    def test_enforce_new_defaults_is_off_by_default(self):
        self.assertFalse(self.conf.oslo_policy.enforce_new_defaults)
        self.assertMatrix(LEGACY)


class TestListScope(_PolicyTest):

    new_defaults = True

    def test_a_system_token_lists_every_project(self):
        self.assertIsNone(policy.authorize_list(
            PERSONAS['system_admin'], backup_policy.LIST,
            backup_policy.LIST_ALL_PROJECTS, False))

    def test_a_system_reader_is_refused_the_list_of_every_project(self):
        self.assertRaises(exception.Forbidden, policy.authorize_list,
                          PERSONAS['system_reader'], backup_policy.LIST,
                          backup_policy.LIST_ALL_PROJECTS, False)

    def test_a_project_token_lists_its_project(self):
        self.assertEqual(PROJECT_A, policy.authorize_list(
            PERSONAS['a_admin'], backup_policy.LIST,
            backup_policy.LIST_ALL_PROJECTS, False))
        self.assertRaises(exception.Forbidden, policy.authorize_list,
                          PERSONAS['a_admin'], backup_policy.LIST,
                          backup_policy.LIST_ALL_PROJECTS, True)


class TestRules(base.TestCase):

    def test_every_operation_rule_is_documented_with_scope_types(self):
        for rule in policies.list_rules():
            if rule.name.startswith('dbaas_scheduler:'):
                self.assertIsInstance(rule, oslo_policy.DocumentedRuleDefault,
                                      rule.name)
                self.assertTrue(rule.operations, rule.name)
                self.assertTrue(rule.scope_types, rule.name)
                self.assertIsNotNone(rule.deprecated_rule, rule.name)
