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
"""RabbitMQ for functional tests: a transport, private topics, a recorder.

The broker is the real RabbitMQ of this machine
(``DBAAS_SCHEDULER_TEST_TRANSPORT_URL``, by default
``rabbit://guest:guest@127.0.0.1:5672/``).  Queue names do not depend on
the exchange, so every test gets topics of its own: tests running in
parallel never consume each other's messages.  The queues are deleted when
the test ends.  An unreachable broker skips the tests, or fails them when
``DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS=1``.
"""

import os
import threading
import time

import fixtures
import kombu
import oslo_messaging as messaging
from oslo_messaging import conffixture
from oslo_utils import uuidutils

from dbaas_scheduler import rpc
from dbaas_scheduler.testing import broker
from dbaas_scheduler.tests.functional import db_fixtures

TRANSPORT_URL_ENV = 'DBAAS_SCHEDULER_TEST_TRANSPORT_URL'
DEFAULT_TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'


def transport_url():
    return os.environ.get(TRANSPORT_URL_ENV, DEFAULT_TRANSPORT_URL)


def broker_unavailable_reason(url=None):
    """None if the broker answers, else why not."""
    url = url or transport_url()
    try:
        with kombu.Connection(broker.kombu_url(url),
                              connect_timeout=5) as conn:
            conn.ensure_connection(max_retries=1)
    except Exception as exc:
        return 'RabbitMQ at %s is unavailable: %s' % (url, exc)
    return None


class Messaging(fixtures.Fixture):
    """oslo.messaging on the real broker, with this test's own topics."""

    def __init__(self, test, conf, url=None):
        super().__init__()
        self.test = test
        self.conf = conf
        self.url = url or transport_url()

    def _setUp(self):
        reason = broker_unavailable_reason(self.url)
        if reason:
            if db_fixtures.backends_required():
                self.test.fail(reason)
            self.test.skipTest(reason)
        self.useFixture(conffixture.ConfFixture(self.conf,
                                                transport_url=self.url))
        prefix = 'dbaas-test-%s' % uuidutils.generate_uuid()[:12]
        self.conf.set_override('topic', prefix + '-worker', group='worker')
        self.conf.set_override('topic', prefix + '-engine', group='engine')
        self.conf.set_override('rpc_transport', 'oslo')
        self.topics = [prefix + '-worker', prefix + '-engine']
        # Anything else a test declares (notification exchanges, ...).
        self.extra_queues, self.extra_exchanges = [], []
        self.addCleanup(self._delete_queues)
        rpc.init(self.conf)
        self.addCleanup(rpc.cleanup)

    def _delete_queues(self):
        """Leave nothing behind on the shared broker.

        Fanout queues are transient (they expire on their own); the topic
        queues and the fanout exchanges would stay.
        """
        queues = [name for topic in self.topics
                  for name in (topic, '%s.%s' % (topic, self.conf.host))]
        exchanges = ['%s_fanout' % topic for topic in self.topics]
        try:
            with kombu.Connection(broker.kombu_url(self.url)) as conn:
                channel = conn.channel()
                for name in queues + self.extra_queues:
                    channel.queue_delete(name)
                for name in exchanges + self.extra_exchanges:
                    channel.exchange_delete(name)
        except Exception:
            pass


class RecordingEndpoint:
    """Stands in for the worker: records every execution id it is sent."""

    target = messaging.Target(version='1.1')

    def __init__(self):
        self.received = []
        self.messages = 0
        self._lock = threading.Lock()

    def backup_database_instance(self, context, execution_id):
        self._record([execution_id])

    def backup_database_instances(self, context, execution_ids):
        self._record(execution_ids)

    def _record(self, execution_ids):
        now = time.time()
        with self._lock:
            self.messages += 1
            self.received.extend((execution_id, now)
                                 for execution_id in execution_ids)

    def ids(self):
        with self._lock:
            return [execution_id for execution_id, _ in self.received]

    def wait_for(self, execution_ids, timeout=60):
        """Wait until every id has been received at least once."""
        wanted = set(execution_ids)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if wanted <= set(self.ids()):
                return True
            time.sleep(0.05)
        return False


class RecordingWorker(fixtures.Fixture):
    """An RPC server on the worker topic serving a RecordingEndpoint.

    Or ``endpoint``, to serve another one.
    """

    def __init__(self, conf, endpoint=None):
        super().__init__()
        self.conf = conf
        self.endpoint = endpoint or RecordingEndpoint()

    def _setUp(self):
        target = messaging.Target(topic=self.conf.worker.topic,
                                  server=self.conf.host)
        self.server = rpc.get_server(target, [self.endpoint])
        self.server.start()
        self.addCleanup(self._stop)

    def _stop(self):
        self.server.stop()
        self.server.wait()
