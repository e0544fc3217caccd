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
"""Enrolment from Trove's own notification, redelivered, across a restart.

``tox -e trove`` has Trove (fake mode) send its notifications to the local
RabbitMQ (``DBAAS_SCHEDULER_TEST_TROVE_NOTIFICATIONS``: its exchange and
topic).  Trove's task manager announces an instance once it is ACTIVE
(``trove.instance.create``, publisher its ``[DEFAULT] host``); the
engine's real listener (``notification_listener.get_listener``) consumes
it from its pool's queue.  A recorder in a pool of its own keeps what
Trove sent, which is published again, byte for byte the same context,
publisher, event and payload: once to the running listener, once while it
is stopped, to the listener started after it.
"""

import logging
import os
import threading

import fixtures
import kombu
import oslo_messaging as messaging
from oslo_utils import uuidutils

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.engine import notification_listener
from dbaas_scheduler.objects import template as template_obj
from dbaas_scheduler.testing import broker
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import trove_fixtures

NOTIFICATIONS_ENV = 'DBAAS_SCHEDULER_TEST_TROVE_NOTIFICATIONS'


class _Recorder:
    filter_rule = messaging.NotificationFilter(
        event_type=r'^trove\.instance\.')

    def __init__(self):
        self.received = []
        self.lock = threading.Lock()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        with self.lock:
            self.received.append((ctxt, publisher_id, event_type, payload))
        return messaging.NotificationResult.HANDLED

    def created(self, instance_id):
        with self.lock:
            return [message for message in self.received
                    if message[3].get('instance_id') == instance_id and
                    message[2].startswith('trove.instance.create')]


class TestEnrolmentFromTrove(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'mysql'

    def setUp(self):
        super().setUp()
        self.trove = trove_fixtures.use_trove(self)
        where = os.environ.get(NOTIFICATIONS_ENV)
        if not where:
            message = ('Trove sends no notifications: run with tox -e '
                       'trove and RabbitMQ, which set %s' % NOTIFICATIONS_ENV)
            if db_fixtures.backends_required():
                self.fail(message)
            self.skipTest(message)
        self.exchange, self.topic = where.split()
        self.trove.configure(self)
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        # Behind Keystone: a template's trove policy waits for adoption.
        self.flags(auth_strategy='keystone')
        self.broker = self.useFixture(
            messaging_fixtures.Messaging(self, self.conf))
        self.flags(group='engine', trove_notifications=True,
                   trove_notification_exchange=self.exchange,
                   trove_notification_topics=[self.topic])
        # The engines' pool names their queue; the recorder's is its own.
        self.broker.extra_queues.append(
            notification_listener.pool_name(self.conf))
        recorder_pool = 'dbaas-test-%s-recorder' % (
            uuidutils.generate_uuid()[:12])
        self.broker.extra_queues.append(recorder_pool)
        self.transport = messaging.get_notification_transport(self.conf)
        self.addCleanup(self.transport.cleanup)
        self.recorder = _Recorder()
        self.start(messaging.get_notification_listener(
            self.transport, [messaging.Target(topic=self.topic,
                                              exchange=self.exchange)],
            [self.recorder], executor='threading', pool=recorder_pool))
        # The engine says what it did with each delivery.
        self.log = self.useFixture(fixtures.FakeLogger(
            name=notification_listener.__name__, level=logging.INFO,
            format='%(message)s'))
        self.admin = dbaas_context.get_admin_context()
        manager = dbaas_context.RequestContext(
            project_id=self.trove.project_id, user_id='manager-user',
            roles=['manager', 'member', 'reader'])
        self.templates = [
            template_obj.create_template(manager, self.conf, {
                'name': name, 'backend': 'trove', 'schedule': schedule,
                'timezone': 'Europe/Berlin', 'keep_daily': 7})
            for name, schedule in (('nightly', 'H 2 * * *'),
                                   ('weekly', 'H 3 * * 0'))]

    def start(self, listener):
        listener.start()
        stopped = []

        def stop():
            if not stopped:
                stopped.append(True)
                listener.stop()
                listener.wait()
        self.addCleanup(stop)
        return stop

    def engine_listener(self):
        """The engine's listener, started; returns how to stop it."""
        return self.start(notification_listener.get_listener(self.conf))

    def republish(self, message):
        """What Trove sent, sent again to its exchange and topic."""
        ctxt, publisher_id, event_type, payload = message
        self.conf.set_override('control_exchange', self.exchange)
        transport = messaging.get_notification_transport(self.conf)
        try:
            messaging.Notifier(transport, publisher_id=publisher_id,
                               driver='messagingv2', topics=[self.topic],
                               retry=3).info(ctxt, event_type, payload)
        finally:
            transport.cleanup()
            self.conf.clear_override('control_exchange')

    def handled(self, instance_id):
        """How many policies each delivery of the creation made."""
        prefix = 'Trove created instance %s of project %s: ' % (
            instance_id, self.trove.project_id)
        return [int(line[len(prefix):].split()[0])
                for line in self.log.output.splitlines()
                if line.startswith(prefix)]

    def waiting_in_engine_queue(self):
        with kombu.Connection(broker.kombu_url(self.broker.url)) as conn:
            return conn.channel().queue_declare(
                notification_listener.pool_name(self.conf),
                passive=True).message_count

    def policies(self, instance_id):
        return db_api.list_policies(self.admin, instance_id=instance_id)

    def test_one_policy_per_template_however_often_trove_announces(self):
        stop = self.engine_listener()
        instance_id = self.trove.create_instance()
        [announced] = self.trove.wait(
            lambda: self.recorder.created(instance_id), 60,
            what='Trove announcing instance %s' % instance_id)
        ctxt, publisher_id, event_type, payload = announced
        # What Trove 26 sends, and from whom.
        self.assertEqual('trove.instance.create', event_type)
        self.assertEqual(self.trove.project_id, payload['tenant_id'])
        self.assertTrue(notification_listener.trusted_publisher(
            self.conf, publisher_id), publisher_id)

        made = self.trove.wait(
            lambda: len(self.policies(instance_id)) == 2 and
            self.policies(instance_id), 60,
            what='the policies of instance %s' % instance_id)
        # Delivered again to the running engine...
        self.republish(announced)
        self.trove.wait(lambda: len(self.handled(instance_id)) == 2, 60,
                        what='the second delivery handled')
        # ... and once more while it is down (other tests' instances are
        # announced on the same topic: it waits with theirs): the
        # restarted engine has it.
        stop()
        self.republish(announced)
        self.trove.wait(lambda: len(self.recorder.created(instance_id)) == 3,
                        60, what='the third delivery')
        self.assertGreaterEqual(self.waiting_in_engine_queue(), 1)
        self.assertEqual(2, len(self.handled(instance_id)))
        stop = self.engine_listener()
        self.trove.wait(lambda: len(self.handled(instance_id)) == 3, 60,
                        what='the restarted engine handling the third')
        stop()
        # The first delivery made the two policies, the others none.
        self.assertEqual([2, 0, 0], self.handled(instance_id))

        policies = self.policies(instance_id)
        self.assertEqual(sorted(p.id for p in made),
                         sorted(p.id for p in policies))
        self.assertEqual(
            sorted(template.id for template in self.templates),
            sorted(p.description.split('(')[1].split(')')[0]
                   for p in policies))
        for policy in policies:
            self.assertEqual((False, template_obj.ADOPT_REASON,
                              self.trove.project_id, 'trove'),
                             (policy.enabled, policy.paused_reason,
                              policy.project_id, policy.backend))
