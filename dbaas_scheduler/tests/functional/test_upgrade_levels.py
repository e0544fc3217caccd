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
"""[upgrade_levels] over the real RabbitMQ: old and new workers side by side.

During a rolling upgrade the upgraded engines are pinned to the version
the old workers speak; what they send must reach workers of both releases.
"""

import threading
import time

import oslo_messaging as messaging

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.worker import manager


class RecordingRunner:
    """Stands in for the ExecutionRunner: one entry per message handled."""

    def __init__(self):
        self.messages = []
        self._lock = threading.Lock()

    def run(self, context, execution_ids):
        with self._lock:
            self.messages.append(list(execution_ids))

    def ids(self):
        with self._lock:
            return [id_ for message in self.messages for id_ in message]


class OldWorkerEndpoint:
    """The worker endpoint of a release that only speaks version 1.0."""

    target = messaging.Target(version='1.0')

    def __init__(self):
        self.recorder = messaging_fixtures.RecordingEndpoint()

    def backup_database_instance(self, context, execution_id):
        self.recorder.backup_database_instance(context, execution_id)


def wait_until(predicate, timeout=30):
    deadline = time.time() + timeout
    while not predicate() and time.time() < deadline:
        time.sleep(0.05)
    return predicate()


class TestWorkerUpgradeLevel(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        self.context = dbaas_context.get_admin_context()

    def client(self, pin=None):
        self.flags(worker=pin, group='upgrade_levels')
        return rpcapi.WorkerAPI(self.conf)

    def test_current_worker_serves_a_pinned_client(self):
        runner = RecordingRunner()
        self.useFixture(messaging_fixtures.RecordingWorker(
            self.conf, manager.WorkerManager(runner)))
        newest, pinned = self.client(), self.client('1.0')

        newest.backup_database_instances(self.context, ['a', 'b', 'c'])
        self.assertTrue(wait_until(lambda: len(runner.ids()) == 3))
        self.assertEqual([['a', 'b', 'c']], runner.messages)

        ids = ['d', 'e', 'f', 'g']
        pinned.backup_database_instances(self.context, ids)
        self.assertTrue(wait_until(lambda: len(runner.ids()) == 7),
                        runner.messages)
        # One message per execution.
        self.assertEqual(sorted([id_] for id_ in ids),
                         sorted(runner.messages[1:]))

    def test_old_worker_gets_what_a_pinned_client_sends(self):
        old = OldWorkerEndpoint()
        self.useFixture(messaging_fixtures.RecordingWorker(self.conf, old))
        newest, pinned = self.client(), self.client('1.0')

        # Unpinned, a group travels as a 1.1 message, which the old worker
        # refuses: this is what the pin is for.
        newest.backup_database_instances(self.context, ['x', 'y'])
        ids = ['a', 'b', 'c']
        pinned.backup_database_instances(self.context, ids)
        pinned.backup_database_instance(self.context, 'd')
        self.assertTrue(old.recorder.wait_for(ids + ['d'], timeout=30),
                        old.recorder.ids())
        self.assertEqual(4, old.recorder.messages)
        # The refused message was sent first; give it time all the same.
        time.sleep(1)
        self.assertEqual(sorted(ids + ['d']), sorted(old.recorder.ids()))
