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
"""Notifications over the real RabbitMQ, as a consumer receives them.

The service's Notifier with the ``messagingv2`` driver on an exchange and a
topic of this test; an oslo.messaging notification listener in its own
pool, as another service would run it.  Both queues and the exchange are
deleted when the test ends.
"""

import threading
import time

import oslo_messaging as messaging
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests import notification_fixtures


class _Consumer:
    filter_rule = messaging.NotificationFilter(
        event_type=r'^backup_policy\.')

    def __init__(self):
        self.received = []
        self.lock = threading.Lock()

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        with self.lock:
            self.received.append({'event_type': event_type,
                                  'payload': payload, 'priority': 'INFO',
                                  'publisher_id': publisher_id,
                                  'context': ctxt})
        return messaging.NotificationResult.HANDLED


class TestNotificationsOverRabbitMQ(db_fixtures.DatabaseMixin,
                                    base.TestCase):

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        broker = self.useFixture(messaging_fixtures.Messaging(self,
                                                              self.conf))
        name = 'dbaas-test-%s' % uuidutils.generate_uuid()[:12]
        pool = name + '-consumer'
        broker.extra_exchanges.append(name)
        broker.extra_queues.extend(['%s.info' % name,
                                    pool])
        self.conf.set_override('control_exchange', name)
        self.flags(group='oslo_messaging_notifications',
                   driver=['messagingv2'], topics=[name], retry=3)
        self.flags(group='api', default_backend='fake')
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        self.addCleanup(loader.reset)
        notifications.reset()
        self.addCleanup(notifications.reset)

        # Another service's consumer, in a pool of its own.
        self.consumer = _Consumer()
        transport = messaging.get_notification_transport(self.conf)
        self.addCleanup(transport.cleanup)
        listener = messaging.get_notification_listener(
            transport, [messaging.Target(topic=name)], [self.consumer],
            executor='threading', pool=pool)
        listener.start()
        self.addCleanup(listener.wait)
        self.addCleanup(listener.stop)
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='user-a', auth_token='secret')

    def wait_for(self, count, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.consumer.lock:
                if len(self.consumer.received) >= count:
                    return list(self.consumer.received)
            time.sleep(0.05)
        self.fail('received %d of %d notifications'
                  % (len(self.consumer.received), count))

    def test_a_consumer_receives_the_documented_payloads(self):
        policy = backup_policy_obj.create_policy(
            self.context, self.conf,
            {'instance_id': 'instance-1', 'schedule': '@daily'})
        policy = backup_policy_obj.pause_policy(self.context, self.conf,
                                                policy)
        backup_policy_obj.delete_policy(self.context, self.conf, policy)
        received = self.wait_for(3)
        # The listener hands each message to a thread of its pool: they
        # can be recorded in any order.
        self.assertEqual(sorted(['backup_policy.create.end',
                                 'backup_policy.pause.end',
                                 'backup_policy.delete.end']),
                         sorted(message['event_type']
                                for message in received))
        for message in received:
            notification_fixtures.assert_matches_sample(self, message)
            data = message['payload'][notification_fixtures.WRAPPER + 'data']
            self.assertEqual(policy.id, data['id'])
            self.assertEqual('dbaas-scheduler.%s' % self.conf.host,
                             message['publisher_id'])
            self.assertEqual(('project-a', 'user-a'),
                             (message['context'].get('project_id'),
                              message['context'].get('user')))
            self.assertNotIn('secret', repr(message['context']))
