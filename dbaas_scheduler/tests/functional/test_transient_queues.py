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
"""The expiry of the fanout queue an RPC server leaves on RabbitMQ.

RabbitMQ refuses to declare a queue again with other arguments
(``PRECONDITION_FAILED``, 406): declaring the server's fanout queue with
an ``x-expires`` tells whether that is the one it has.
"""

import logging
import re

import amqp
import fixtures
import kombu
import oslo_messaging as messaging

from dbaas_scheduler import rpc
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures


class TestFanoutQueueExpiry(base.TestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='oslo.messaging._drivers.impl_rabbit', level=logging.DEBUG,
            format='%(message)s'))
        self.messaging = self.useFixture(
            messaging_fixtures.Messaging(self, self.conf))

    def _fanout_queue(self):
        server = rpc.get_server(
            messaging.Target(topic=self.conf.worker.topic,
                             server=self.conf.host),
            [messaging_fixtures.RecordingEndpoint()])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        pattern = re.compile(r'Creating fanout queue: (\S+)')
        self.assertTrue(process_fixtures.wait_until(
            lambda: pattern.search(self.log.output), 30))
        name = pattern.search(self.log.output).group(1)
        self.messaging.extra_queues.append(name)
        return name

    def _declare(self, name, seconds):
        url = messaging_fixtures.transport_url().replace('rabbit://',
                                                         'amqp://', 1)
        with kombu.Connection(url) as connection:
            connection.channel().queue_declare(
                queue=name, durable=False, auto_delete=False,
                arguments={'x-expires': seconds * 1000})

    def test_default_expiry_reaches_rabbitmq(self):
        name = self._fanout_queue()
        self._declare(name, rpc.TRANSIENT_QUEUE_TTL)
        # oslo.messaging's own default would be another queue.
        error = self.assertRaises(amqp.exceptions.PreconditionFailed,
                                  self._declare, name, 1800)
        self.assertIn('x-expires', str(error))

    def test_the_operator_s_value_wins(self):
        self.flags(rabbit_transient_queues_ttl=600,
                   group='oslo_messaging_rabbit')
        name = self._fanout_queue()
        self._declare(name, 600)
        self.assertRaises(amqp.exceptions.PreconditionFailed,
                          self._declare, name, rpc.TRANSIENT_QUEUE_TTL)
