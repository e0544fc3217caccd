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
"""Stopping a worker and starting it again loses no time.

A real dbaas-scheduler-worker process over the real RabbitMQ, its service
database on the real PostgreSQL or MariaDB, with the ``local`` backend
dumping a large SQLite database (a dump of a few seconds, which runs in a
job process of its own and outlives the worker).  No engine runs: nothing
but the worker's own stop and start can hand the execution over, and the
lease (60 s) is far longer than the test waits.

Stopped mid-backup by ``SIGTERM``, by Ctrl-C (``SIGINT`` to the process
group, as a terminal sends it) or by ``SIGKILL``, then started again at
once, the worker finishes the execution within a few seconds of the dump
ending, with exactly one backup file.  A second Ctrl-C exits at once.
"""

import datetime
import json
import os
import signal
import sqlite3
import time

from oslo_utils import timeutils
from testtools import content

from dbaas_scheduler.db import services as db_services
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.worker import test_worker_processes

FINAL = ('SUCCEEDED', 'FAILED', 'SKIPPED')
# Seconds from the dump's end to the execution's final state, at most
# (the lease is 60 s, the poll interval 60 s).
LAG = 5


class _StopRestartTests(test_worker_processes.WorkerProcessMixin):

    # Bytes of incompressible data to dump: longer at level 9 than a
    # worker takes to stop and start again (about 7 s here).
    BIG = 96 * 1024 * 1024

    def setUp(self):
        super().setUp()
        self.database = os.path.join(self.tempdir, 'big.db')
        connection = sqlite3.connect(self.database)
        connection.execute('CREATE TABLE notes (body BLOB)')
        for _ in range(self.BIG // (1024 * 1024)):
            connection.execute('INSERT INTO notes VALUES (?)',
                               (os.urandom(1024 * 1024),))
        connection.commit()
        connection.close()
        self.backups = os.path.join(self.tempdir, 'backups')

    def worker(self, stop_wait=0):
        return self.start('worker', name='worker-%d' % len(self.processes),
                          local_backend={
                              'instances': 'big:sqlite:///' + self.database,
                              'backup_dir': self.backups,
                              'compression_level': 9},
                          worker={'lease_duration': 60, 'poll_interval': 60,
                                  'stop_wait': stop_wait})

    def start_backup(self, process):
        """A running local backup of a worker; (execution, backup id)."""
        self.wait_for_workers(1)
        policy = self.add_policy(instance_id='big', backend='local')
        execution = self.add_execution(policy)
        rpcapi.WorkerAPI(self.conf).backup_database_instance(self.context,
                                                             execution.id)
        self.wait_for(lambda: self.execution(execution.id).backup_id, 30,
                      lambda: 'no backup id was recorded')
        return execution, self.execution(execution.id).backup_id

    def manifest(self, backup_id):
        path = os.path.join(self.backups, 'big', backup_id + '.json')
        with open(path) as stream:
            return json.load(stream)

    def freeze(self, backup_id):
        """Freeze the backup's dump job; the callable that lets it go.

        So that it is still mid-backup when the worker has stopped and
        started again, however fast this machine dumps (on a quiet one a
        dump can end before a graceful stop does).
        """
        return process_fixtures.freeze(self, self.manifest(backup_id)['pid'])

    def assert_still_dumping(self, backup_id):
        self.assertEqual('BUILDING', self.manifest(backup_id)['status'],
                         'the dump ended before the stop: make BIG larger')

    def wait_final(self, execution_id, timeout=90):
        self.wait_for(
            lambda: self.execution(execution_id).status in FINAL, timeout,
            lambda: 'execution %s is still %s' % (
                execution_id, self.execution(execution_id).status))
        return self.execution(execution_id)

    def assert_finished_at_once(self, execution_id, backup_id, label):
        """SUCCEEDED within LAG s of the dump's end, one backup file."""
        done = self.wait_final(execution_id)
        self.assertEqual('SUCCEEDED', done.status, done.fault)
        self.assertEqual(backup_id, done.backup_id)
        manifest = self.manifest(backup_id)
        self.assertEqual('COMPLETED', manifest['status'])
        dumped = datetime.datetime.fromisoformat(manifest['finished_at'])
        if dumped.tzinfo is None:
            dumped = dumped.replace(tzinfo=datetime.timezone.utc)
        # From the dump's end, or from the newest worker's start if a
        # loaded machine took longer to start it than the dump to end.
        started = max((row.started_at for row in self.worker_rows()),
                      default=dumped)
        lag = (done.finished_at - max(dumped, started)).total_seconds()
        self.addDetail('%s: seconds from dump end to SUCCEEDED' % label,
                       content.text_content('%.2f' % lag))
        self.assertLess(lag, LAG)
        self.assertEqual(1, len([
            name for name in os.listdir(os.path.join(self.backups, 'big'))
            if name.endswith('.gz')]))
        return done, lag

    def _handed_back_and_resumed(self, stop, label):
        first = self.worker()
        execution, backup_id = self.start_backup(first)
        let_go = self.freeze(backup_id)
        stop(first)
        self.assert_still_dumping(backup_id)
        second = self.worker()
        let_go()
        done, _ = self.assert_finished_at_once(execution.id, backup_id, label)
        self.assertEqual(2, done.attempts)
        return first, second, done

    def test_sigterm_hands_the_backup_back(self):
        def stop(process):
            self.assertEqual(0, process.terminate())
        first, _, _ = self._handed_back_and_resumed(stop, 'SIGTERM')
        self.assertIn('Gave up the leases of 1 running executions',
                      first.log())

    def test_sigkill_then_restart_takes_over_at_once(self):
        def stop(process):
            process.kill(signal.SIGKILL)
        first, second, done = self._handed_back_and_resumed(stop, 'SIGKILL')
        self.assertIn('on this host is gone; took over 1 of its 1 running '
                      'executions', second.log())
        # The dead worker's row went with it.
        self.assertEqual(1, len(db_services.list_services(self.context)))


class _SignalTests:
    """How the worker takes Ctrl-C, and a stop that waits for a backup.

    On one database: what they add to the SIGTERM and SIGKILL tests above
    (which run on each) is the worker's handling of signals; the
    database work after them (leases given up, an execution taken over
    or finished) is the same as theirs.
    """

    def test_ctrl_c_stops_gracefully(self):
        def stop(process):
            process.kill(signal.SIGINT)
            self.assertEqual(0, process.process.wait(60))
        first, _, _ = self._handed_back_and_resumed(stop, 'Ctrl-C')
        log = first.log()
        self.assertIn('Caught SIGINT (Ctrl-C): stopping gracefully', log)
        self.assertIn('Gave up the leases of 1 running executions', log)
        self.assertNotIn('instantaneous exiting', log)

    def test_second_ctrl_c_exits_at_once(self):
        # A long stop_wait: the first Ctrl-C leaves the worker waiting for
        # the backup, the second ends it.
        first = self.worker(stop_wait=45)
        execution, backup_id = self.start_backup(first)
        let_go = self.freeze(backup_id)
        first.kill(signal.SIGINT)
        self.wait_for(lambda: 'waiting up to' in first.log(), 30,
                      lambda: 'the worker did not start waiting')
        pressed = time.monotonic()
        first.kill(signal.SIGINT)
        self.assertEqual(1, first.process.wait(10))
        exited = time.monotonic() - pressed
        self.addDetail('seconds from the second Ctrl-C to exit',
                       content.text_content('%.3f' % exited))
        self.assertLess(exited, 2)
        self.assertIn('Caught SIGINT (Ctrl-C) again: exiting at once',
                      first.log())
        self.assert_still_dumping(backup_id)
        # What it left RUNNING is taken over by the next start.
        self.worker()
        let_go()
        done, _ = self.assert_finished_at_once(execution.id, backup_id,
                                               'second Ctrl-C')
        self.assertEqual(2, done.attempts)

    def test_sigterm_lets_a_backup_about_to_end_finish(self):
        first = self.worker(stop_wait=45)
        execution, backup_id = self.start_backup(first)
        started = self.execution(execution.id)
        self.assertEqual(0, first.terminate())
        stopped = timeutils.utcnow(True)
        done, _ = self.assert_finished_at_once(execution.id, backup_id,
                                               'SIGTERM, waited for')
        # Recorded by the stopping worker itself, before it exited.
        self.assertEqual(started.owner, done.owner)
        self.assertEqual(1, done.attempts)
        self.assertLessEqual(done.finished_at, stopped)
        self.assertIn('every backup waited for has finished', first.log())


class TestStopRestartMySQL(_SignalTests, _StopRestartTests,
                           base.TestCase):
    DRIVER = 'mysql'


class TestStopRestartPostgreSQL(_StopRestartTests, base.TestCase):
    DRIVER = 'postgresql'
