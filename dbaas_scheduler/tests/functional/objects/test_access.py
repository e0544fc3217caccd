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
"""Which backends and instances a caller may give a policy, at every door.

The REST API's stories (``backend-access.yaml``, ``local-owners.yaml``)
ask over HTTP; these ask the domain functions and the engine's RPC
endpoint, which every other interface goes through.
"""

import json
import os

import fixtures
import oslo_messaging as messaging
from oslo_policy import opts as policy_opts
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.engine import manager as engine_manager
from dbaas_scheduler import exception
from dbaas_scheduler.objects import access
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.policies import backend as backend_rules
from dbaas_scheduler import policy
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures


def _context(project_id, *roles):
    return dbaas_context.RequestContext(
        project_id=project_id, user_id='user-of-%s' % project_id,
        roles=list(roles))


class TestEnabledBackends(base.TestCase):

    def test_the_defaults_follow_the_auth_strategy(self):
        self.assertEqual(['trove'], access.enabled_backends(self.conf))
        self.flags(auth_strategy='noauth')
        self.assertEqual(['local'], access.enabled_backends(self.conf))
        self.flags(group='api', enabled_backends=['trove', 'fake'])
        self.assertEqual(['trove', 'fake'],
                         access.enabled_backends(self.conf))


class TestBackendAccess(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        self.flags(group='local_backend',
                   instances={'orders': 'sqlite:////nonexistent/orders.db',
                              'wiki': 'sqlite:////nonexistent/wiki.db'},
                   instance_projects={'orders': 'project-a'})
        policy.reset()
        self.addCleanup(policy.reset)
        policy.get_enforcer(self.conf)
        loader.reset()
        self.addCleanup(loader.reset)
        self.member_a = _context('project-a', 'member', 'reader')
        self.member_b = _context('project-b', 'member', 'reader')
        self.admin = _context('project-b', 'admin', 'member', 'reader')

    def create(self, context, **values):
        values.setdefault('schedule', '@daily')
        return backup_policy_obj.create_policy(context, self.conf, values)

    def over_rpc(self, context, **values):
        """The engine's RPC endpoint, as a forged or real call reaches it."""
        values.setdefault('schedule', '@daily')
        try:
            return engine_manager.EngineManager(self.conf).create_policy(
                context, values)
        except messaging.ExpectedException as wrapped:
            # What the RPC server sends back to the caller.
            raise wrapped.exc_info[1]

    def test_behind_keystone_only_trove_is_offered(self):
        for backend, instance in (('local', 'orders'), ('fake', 'x')):
            for create in (self.create, self.over_rpc):
                error = self.assertRaises(
                    exception.BackendNotEnabled, create, self.admin,
                    instance_id=instance, backend=backend)
                self.assertEqual('The %s backend is not offered here; this '
                                 'cloud offers trove.' % backend, str(error))
        self.assertEqual([], db_api.list_policies(self.admin))

    def test_local_and_fake_are_admin_only(self):
        self.flags(group='api', enabled_backends=['local', 'fake', 'trove'])
        for backend, instance in (('local', 'orders'), ('fake', 'x')):
            for context in (self.member_a, self.member_b):
                for create in (self.create, self.over_rpc):
                    error = self.assertRaises(
                        exception.BackendForbidden, create, context,
                        instance_id=instance, backend=backend)
                    self.assertIn('dbaas_scheduler:backup_policy:backend:%s'
                                  % backend, str(error))
        self.assertEqual([], db_api.list_policies(self.admin))
        self.assertEqual('local', self.create(
            self.admin, instance_id='orders', backend='local').backend)
        self.assertEqual('fake', self.over_rpc(
            self.admin, instance_id='x', backend='fake')['backend'])

    def test_moving_a_policy_to_a_backend_is_checked(self):
        self.flags(group='api', enabled_backends=['local', 'trove'])
        created = self.create(self.admin, instance_id='orders',
                              backend='local')
        self.assertRaises(exception.BackendForbidden,
                          backup_policy_obj.update_policy, self.member_b,
                          self.conf, created, {'instance_id': 'wiki'})
        self.assertRaises(exception.BackendNotEnabled,
                          backup_policy_obj.update_policy, self.admin,
                          self.conf, created, {'backend': 'fake'})
        self.assertEqual(('local', 'orders'), (
            db_api.get_policy(self.admin, created.id).backend,
            db_api.get_policy(self.admin, created.id).instance_id))

    def test_instance_ids_have_their_backends_form(self):
        self.flags(group='api', enabled_backends=['local', 'fake', 'trove'])
        cases = [
            ('trove', 'orders', exception.InvalidInstanceId,
             'Trove names its instances by UUID'),
            ('local', '../etc', exception.InvalidInstanceId,
             'a local instance is named by letters, digits'),
            ('trove', uuidutils.generate_uuid() + '\r\nforged',
             exception.Invalid, 'without control characters'),
            ('fake', 'a\tb', exception.Invalid,
             'without control characters'),
            ('fake', 'x\x85y', exception.Invalid,
             'without control characters'),
        ]
        for backend, instance, error_class, words in cases:
            error = self.assertRaises(error_class, self.create, self.admin,
                                      instance_id=instance, backend=backend)
            self.assertIn(words, str(error), (backend, instance))
        self.assertRaises(exception.Invalid, self.over_rpc, self.admin,
                          instance_id=['not', 'a', 'string'], backend='fake')
        # The fake backend takes any printable id.
        self.assertEqual('any id: ü', self.create(
            self.admin, instance_id='any id: ü', backend='fake').instance_id)

    def test_a_project_uses_the_local_instances_it_owns(self):
        self.flags(group='api', enabled_backends=['local'])
        self.useFixture(_LocalOpenToMembers(self.conf))
        self.assertEqual('orders', self.create(
            self.member_a, instance_id='orders', backend='local').instance_id)
        refusals = []
        for context, instance in ((self.member_b, 'orders'),
                                  (self.member_b, 'nosuch'),
                                  (self.member_a, 'wiki')):
            refusals.append(str(self.assertRaises(
                exception.InvalidInstance, self.over_rpc, context,
                instance_id=instance, backend='local')))
        # Owned by another project or not there at all: the same words.
        self.assertEqual(refusals[0].replace('orders', 'nosuch'),
                         refusals[1])
        self.assertNotIn('wiki', refusals[0] + refusals[1])
        self.assertEqual('wiki', self.create(
            self.admin, instance_id='wiki', backend='local').instance_id)


class _LocalOpenToMembers(fixtures.Fixture):
    """The operator opened the local backend's rule to project members."""

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'policy.json')
        with open(path, 'w') as stream:
            json.dump({backend_rules.rule_name('local'):
                       'role:admin or (role:member and '
                       'project_id:%(project_id)s)'}, stream)
        policy_opts.set_defaults(self.conf)
        self.conf.set_override('policy_file', path, group='oslo_policy')
        self.addCleanup(self.conf.clear_override, 'policy_file',
                        group='oslo_policy')
        policy.reset()
        self.addCleanup(policy.reset)
        policy.get_enforcer(self.conf)
