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
"""A frozen worker and a slow backend, with real processes.

The faults that made a slot end up with two backups: a worker paused
(SIGSTOP) in the middle of a create for longer than its lease, and backend
creates slower than the client's timeout at the tail of a message.  Short
timing knobs (a 10 s lease) keep each test within about 20 seconds.
"""

import signal

from dbaas_scheduler import rpcapi
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.worker import test_worker_processes

PROJECT = test_worker_processes.PROJECT
FAST = {'reconcile_interval': 2, 'reconcile_window': 60}


class _FencingProcessTests(test_worker_processes.WorkerProcessMixin):

    def creates_sent(self):
        return len([r for r in self.trove.requests
                    if r.method == 'POST' and r.path.endswith('/backups')])

    def retained(self, instance_id):
        return [b['id'] for b in self.trove.backups(PROJECT)
                if b['instance_id'] == instance_id]

    def test_a_worker_frozen_while_creating_leaves_one_backup(self):
        instance = self.trove.add_instance(build_seconds=0)
        policy = self.add_policy(instance_id=instance)
        execution = self.add_execution(policy)
        # The frozen worker's create reaches Trove, and lands there only
        # once its lease has expired and another worker has made the
        # execution's backup (as a VM paused with the request in flight).
        serve, held = self.trove._create_backup, []

        def land_after_another(*args):
            if not held:
                held.append(True)
                test_worker_processes.wait_until(
                    lambda: self.trove.create_count(instance) >= 1, 90)
            return serve(*args)
        self.trove._create_backup = land_after_another
        frozen = self.start('worker', worker=FAST)
        self.wait_for_workers(1)
        rpcapi.WorkerAPI(self.conf).backup_database_instance(self.context,
                                                             execution.id)
        self.wait_for(lambda: self.creates_sent() == 1, 30,
                      lambda: 'no create was sent')
        frozen.kill(signal.SIGSTOP)
        self.addCleanup(frozen.kill, signal.SIGCONT)
        self.start('worker', worker=FAST)
        self.start('engine')
        done = self.wait_for_status(execution.id, 'SUCCEEDED', timeout=60)
        self.wait_for(lambda: len(self.trove.history()) == 2, 30,
                      lambda: 'the late create never landed')
        frozen.kill(signal.SIGCONT)

        # It wakes up, finds its claim gone, and deletes what it made --
        # or reconciliation does.
        def one_left():
            return self.retained(instance) == [done.backup_id]
        self.wait_for(one_left, 30, lambda: 'backups left: %s' % (
            self.retained(instance)))
        [late] = [record for record in self.trove.history()
                  if record.id != done.backup_id]
        self.assertIsNotNone(late.deleted)

        def recorded():
            return self.execution(execution.id).deleted_backups
        self.wait_for(recorded, 10, lambda: 'the deletion is not recorded')
        [entry] = recorded()
        self.assertEqual((late.id, 'duplicate'),
                         (entry['id'], entry['reason']))
        final = self.execution(execution.id)
        self.assertEqual(('SUCCEEDED', done.backup_id),
                         (final.status, final.backup_id))

    def test_creates_slower_than_the_lease_at_the_tail_of_a_message(self):
        # Each create is answered after 5 s (Trove has the backup from the
        # start), the client gives up after 3 s and finds the backup by its
        # tag; the last of the message's executions starts some 14 s after
        # the claim, beyond the 10 s lease.  The leases of those waiting are
        # renewed: none is taken over, none gets two backups.
        self.trove.inject_delay(5, operation=fake_trove.BACKUP_CREATE,
                                after=True)
        policies = [self.add_policy() for _ in range(4)]
        executions = [self.add_execution(policy) for policy in policies]
        options = dict(FAST, pool_size=1)
        self.start('worker', worker=options,
                   service_credentials={'timeout': 3})
        self.wait_for_workers(1)
        self.start('worker', worker=options,
                   service_credentials={'timeout': 3})
        self.start('engine')
        rpcapi.WorkerAPI(self.conf).backup_database_instances(
            self.context, [execution.id for execution in executions])
        for execution in executions:
            done = self.wait_for_status(execution.id, 'SUCCEEDED', timeout=60)
            self.assertEqual(1, done.attempts)
        for policy in policies:
            self.assertEqual(1, self.trove.create_count(policy.instance_id))
            self.assertEqual(1, len(self.retained(policy.instance_id)))


class TestFencingProcessesMySQL(_FencingProcessTests, base.TestCase):
    DRIVER = 'mysql'


class TestFencingProcessesPostgreSQL(_FencingProcessTests, base.TestCase):
    DRIVER = 'postgresql'
