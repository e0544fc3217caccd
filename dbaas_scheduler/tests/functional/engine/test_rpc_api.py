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
"""The engines' RPC API and Trove notification listener, over RabbitMQ."""

from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging import conffixture
from oslo_utils import uuidutils

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.engine import manager
from dbaas_scheduler.engine import notification_listener
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import template as template_obj
from dbaas_scheduler import policy
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures


def serve_engine_rpc(test):
    """An engine's RPC server on ``test.conf``'s topic, for the test."""
    # Its rules are read from the test's configuration.
    policy.reset()
    test.addCleanup(policy.reset)
    target = messaging.Target(topic=test.conf.engine.topic,
                              server=test.conf.host)
    server = rpc.get_server(target, [manager.EngineManager(test.conf)])
    server.start()
    test.addCleanup(server.wait)
    test.addCleanup(server.stop)


class _EngineRPCTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        serve_engine_rpc(self)
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        self.api = rpcapi.EngineAPI(self.conf, timeout=30)
        # Another service acting for a user of project trove-user.
        self.context = dbaas_context.RequestContext(
            project_id='trove-user', user_id='alice',
            roles=['member', 'reader'])

    def create(self, **values):
        values.setdefault('instance_id', 'instance-1')
        values.setdefault('backend', 'fake')
        values.setdefault('schedule', '0 3 * * *')
        return self.api.create_policy(self.context, values)

    def test_create_update_list_delete(self):
        created = self.create(name='nightly', timezone='Asia/Tokyo')
        self.assertEqual(('nightly', 'trove-user', 'alice', True),
                         (created['name'], created['project_id'],
                          created['user_id'], created['enabled']))
        self.assertTrue(created['next_execution_time'].endswith('18:00:00'
                                                                '+00:00'))
        changed = self.api.update_policy(self.context, created['id'],
                                         {'schedule': '0 4 * * *'})
        self.assertEqual('0 4 * * *', changed['schedule'])
        listed = self.api.list_policies(self.context,
                                        instance_id='instance-1')
        self.assertEqual([created['id']], [p['id'] for p in listed])
        self.assertEqual([], self.api.list_policies(
            self.context, instance_id='instance-2'))
        self.assertIsNone(self.api.delete_policy(self.context,
                                                 created['id']))
        self.assertEqual([], self.api.list_policies(self.context))

    def test_times_travel_as_iso_8601_text(self):
        created = self.create(schedule_type='interval', schedule='3600',
                              start_at='2030-01-01T00:00:00Z',
                              end_at='2030-02-01T00:00:00+01:00')
        self.assertEqual('2030-01-01T00:00:00+00:00', created['start_at'])
        self.assertEqual('2030-01-31T23:00:00+00:00', created['end_at'])
        self.assertEqual('2030-01-01T00:00:00+00:00',
                         created['next_execution_time'])
        changed = self.api.update_policy(self.context, created['id'],
                                         {'end_at': '2030-03-01T00:00:00'})
        self.assertEqual('2030-03-01T00:00:00+00:00', changed['end_at'])
        error = self.assertRaises(exception.Invalid, self.api.update_policy,
                                  self.context, created['id'],
                                  {'end_at': 'next tuesday'})
        self.assertIn('end_at must be an ISO 8601 date and time', str(error))

    def test_errors_come_back_as_they_are(self):
        error = self.assertRaises(exception.Invalid, self.create,
                                  schedule='0 0 30 2 *')
        self.assertIn('never runs', str(error))
        self.assertRaises(exception.PolicyNotFound, self.api.delete_policy,
                          self.context, uuidutils.generate_uuid())

    def test_delete_policies_for_instance(self):
        kept = self.create(instance_id='instance-2')
        gone = [self.create()['id'], self.create()['id']]
        deleted = self.api.delete_policies_for_instance(self.context,
                                                        'instance-1')
        self.assertEqual(sorted(gone), sorted(deleted))
        self.assertEqual([kept['id']], [p['id'] for p in
                                        self.api.list_policies(self.context)])


class TestEngineRPCSQLite(_EngineRPCTests, base.TestCase):
    DRIVER = 'sqlite'


class TestEngineRPCMySQL(_EngineRPCTests, base.TestCase):
    DRIVER = 'mysql'


class TestEngineRPCPostgreSQL(_EngineRPCTests, base.TestCase):
    DRIVER = 'postgresql'


class TestTroveNotifications(db_fixtures.DatabaseMixin, base.TestCase):

    # Not SQLite: the test's in-memory database is one connection, which
    # the RPC server's and the listener's threads cannot share.
    DRIVER = 'postgresql'

    # What Trove's taskmanager sends trove.instance.delete as: its
    # [DEFAULT] host (trove/common/notification.py, TroveBaseTraits).
    TROVE = '0.0.0.0'

    def setUp(self):
        super().setUp()
        broker = self.useFixture(messaging_fixtures.Messaging(self,
                                                              self.conf))
        self.exchange = 'dbaas-test-%s' % uuidutils.generate_uuid()[:12]
        broker.extra_exchanges.append(self.exchange)
        broker.extra_queues.extend(
            '%s.%s' % (self.exchange, priority)
            for priority in ('info', 'warn', 'error', 'audit', 'debug',
                             'critical', 'sample'))
        broker.extra_queues.append(notification_listener.pool_name(
            self.conf))
        self.flags(trove_notifications=True, group='engine')
        self.flags(trove_notification_exchange=self.exchange,
                   trove_notification_topics=[self.exchange],
                   group='engine')
        # The engine's RPC server runs beside the listener, as in an
        # engine: neither may take the other's messages.
        serve_engine_rpc(self)
        self.listener = self.start_listener()
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        self.context = dbaas_context.RequestContext(project_id='p',
                                                    user_id='u')
        self.admin = dbaas_context.get_admin_context()

    def start_listener(self):
        """An engine's notification listener, stopped after the test."""
        listener = notification_listener.get_listener(self.conf)
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)
        return listener

    def policy(self, instance_id, project_id='p', backend='trove'):
        """A policy of ``backend`` (stored as Trove's would be)."""
        created = backup_policy_obj.create_policy(self.context, self.conf, {
            'instance_id': instance_id, 'backend': 'fake',
            'schedule': '@daily', 'project_id': project_id})
        if backend != 'fake':
            db_api.update_policy(self.admin, created.id,
                                 {'backend': backend})
        return created.id

    def notify(self, event_type, payload, publisher=TROVE):
        # Trove's side: its own configuration, its own exchange.
        trove_conf = cfg.ConfigOpts()
        fixture = self.useFixture(conffixture.ConfFixture(
            trove_conf, transport_url=messaging_fixtures.transport_url()))
        fixture.conf.set_override('control_exchange', self.exchange)
        transport = messaging.get_notification_transport(trove_conf)
        self.addCleanup(transport.cleanup)
        notifier = messaging.Notifier(transport, publisher,
                                      driver='messagingv2',
                                      topics=[self.exchange])
        notifier.info({}, event_type, payload)

    def left(self):
        return {p.id for p in db_api.list_policies(self.admin)}

    def wait_left(self, expected, timeout=30):
        process_fixtures.wait_until(lambda: self.left() == expected, timeout)
        return self.left()

    def settle(self, marker_instance):
        """Wait until the listener handled what was sent before.

        A trusted deletion sent last: once its policy is gone, every
        notification sent before it was handled (one queue, in order,
        one listener).
        """
        marker = self.policy(marker_instance)
        self.notify('trove.instance.delete', {
            'instance_id': marker_instance, 'tenant_id': 'p'})
        process_fixtures.wait_until(lambda: marker not in self.left(), 30)
        self.assertNotIn(marker, self.left())

    def test_deleted_instance_takes_its_policies(self):
        gone = {self.policy('deleted'), self.policy('deleted')}
        alive = self.policy('alive')
        self.notify('trove.instance.create',
                    {'instance_id': 'alive', 'tenant_id': 'p'})
        self.notify('trove.instance.delete',
                    {'instance_id': 'deleted', 'tenant_id': 'p'})
        self.assertEqual({alive}, self.wait_left({alive}))
        self.assertTrue(gone.isdisjoint(self.left()))

    def test_a_forged_notification_deletes_nothing(self):
        # Issue 23: a forged trove.instance.delete deleted every project's
        # policies of that instance, local and fake ones included.
        victim = self.policy('shared', project_id='victim')
        other = self.policy('shared', project_id='p')
        fake = self.policy('shared', project_id='victim', backend='fake')
        local = self.policy('shared', project_id='victim', backend='local')
        everything = {victim, other, fake, local}
        # Another publisher than Trove's.
        self.notify('trove.instance.delete', {
            'instance_id': 'shared', 'tenant_id': 'victim'},
            publisher='nova-compute.attacker')
        # The right publisher, no tenant_id.
        self.notify('trove.instance.delete', {'instance_id': 'shared'})
        # The right publisher, another tenant (no trove policy there).
        self.notify('trove.instance.delete', {
            'instance_id': 'shared', 'tenant_id': 'bystander'})
        self.settle('marker-1')
        self.assertEqual(everything, self.left())
        # Trove's own, for the victim's project: only its trove policy.
        self.notify('trove.instance.delete', {
            'instance_id': 'shared', 'tenant_id': 'victim'})
        self.assertEqual({other, fake, local},
                         self.wait_left({other, fake, local}))

    def test_a_new_instance_is_enrolled_once(self):
        # Behind Keystone: the policy waits paused for a member's trust.
        self.flags(auth_strategy='keystone')
        manager_context = dbaas_context.RequestContext(
            project_id='p', user_id='m', roles=['manager', 'member'])
        template_obj.create_template(manager_context, self.conf, {
            'name': 'nightly', 'backend': 'trove', 'schedule': 'H 2 * * *'})
        instance = uuidutils.generate_uuid()
        created = {'instance_id': instance, 'tenant_id': 'p'}
        for _ in range(2):
            self.notify('trove.instance.create.end', created)
        self.settle('marker-1')
        # The engine restarts: its listener stops, a new one starts, and
        # Trove's notification comes again.
        self.listener.stop()
        self.listener.wait()
        self.listener = self.start_listener()
        self.notify('trove.instance.create.end', created)
        self.settle('marker-2')
        made = db_api.list_policies(self.admin, instance_id=instance)
        self.assertEqual(1, len(made))
        self.assertEqual((False, template_obj.ADOPT_REASON, None),
                         (made[0].enabled, made[0].paused_reason,
                          made[0].trust_id))

    def test_rpc_calls_and_notifications_keep_to_their_queues(self):
        self.assertNotEqual(self.conf.engine.topic,
                            notification_listener.pool_name(self.conf))
        api = rpcapi.EngineAPI(self.conf, timeout=15)
        caller = dbaas_context.RequestContext(project_id='p', user_id='u',
                                              roles=['reader'])
        for number in range(6):
            self.policy('gone-%d' % number)
            self.notify('trove.instance.delete',
                        {'instance_id': 'gone-%d' % number,
                         'tenant_id': 'p'})
            # Every call is answered (none lands with the listener).
            self.assertIsInstance(api.list_policies(caller), list)
        self.assertEqual(set(), self.wait_left(set()))
