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
"""Backups finish when they finish, and a restart loses no time.

dbaas-scheduler-all in a process with the ``local`` backend and a poll
interval of 60 seconds: the end of a dump job is reported at once, so the
execution finishes within a second or two, not at the next poll; and a
worker stopped (SIGTERM) mid-backup gives its leases up, so that the
process started again resumes the execution and finishes it as soon as the
job, which outlived the worker, ends.  Ctrl-C stops it as SIGTERM does;
after SIGKILL, the process started again takes the execution over at
once, seeing that the process that held it is gone.
"""

import datetime
import json
import os
import signal
import sqlite3
import time

import fixtures
from testtools import content

from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import process_fixtures

FINAL = ('SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED')


class TestFinishEarly(base.TestCase):

    # Bytes of incompressible data in the "big" database: a dump at
    # compression level 9 of a few seconds.
    BIG = 48 * 1024 * 1024

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.notes = self._database('notes.db', 1)
        self.big = self._database('big.db', self.BIG // (1024 * 1024))
        self.backups = os.path.join(self.tempdir, 'backups')
        self.service = self.useFixture(process_fixtures.AllInOneProcess(
            self.tempdir, {
                # Hand running backups back at once when stopped (the wait
                # for them is test_stop_restart's).
                'worker': {'poll_interval': 60, 'stop_wait': 0},
                'local_backend': {
                    'instances': 'notes:sqlite:///%s,big:sqlite:///%s'
                                 % (self.notes, self.big),
                    'backup_dir': self.backups,
                    'compression_level': 9},
            }))
        self.process = self.service.process

    def _database(self, name, megabytes):
        path = os.path.join(self.tempdir, name)
        database = sqlite3.connect(path)
        database.execute('CREATE TABLE notes (body BLOB)')
        for _ in range(megabytes):
            database.execute('INSERT INTO notes VALUES (?)',
                             (os.urandom(1024 * 1024),))
        database.commit()
        database.close()
        return path

    def _policy(self, instance):
        status, body = self.service.request('POST', '/v1/backup-policies', {
            'backup_policy': {'name': instance, 'instance_id': instance,
                              'backend': 'local',
                              'schedule': '0 3 * * *', 'keep_last': 5}})
        self.assertEqual(201, status, body)
        return body['backup_policy']['id']

    def _run(self, policy_id):
        status, body = self.service.request(
            'POST', '/v1/backup-policies/%s/run' % policy_id)
        self.assertEqual(202, status, body)
        return body['execution']['id']

    def _execution(self, execution_id):
        return self.service.request(
            'GET', '/v1/executions/%s' % execution_id)[1]['execution']

    def _wait_final(self, execution_id, timeout):
        def final():
            found = self._execution(execution_id)
            return found if found['status'] in FINAL else None
        return process_fixtures.wait_until(final, timeout, 0.05)

    def _manifest(self, instance, backup_id):
        path = os.path.join(self.backups, instance, backup_id + '.json')
        try:
            with open(path) as stream:
                return json.load(stream)
        except (OSError, ValueError):
            return None

    def test_a_finished_backup_is_seen_at_once(self):
        policy_id = self._policy('notes')
        for run in range(2):
            started = time.monotonic()
            execution_id = self._run(policy_id)
            execution = self._wait_final(execution_id, 30)
            elapsed = time.monotonic() - started
            # Not the 60 s of the poll interval (well under a second on an
            # idle machine; a loaded one takes seconds to start the job).
            self.assertIsNotNone(execution, 'not finished within 30 s')
            self.assertEqual('SUCCEEDED', execution['status'], execution)
            self.assertLess(elapsed, 20)
            self.addDetail('run %d: seconds to SUCCEEDED' % run,
                           content.text_content('%.2f' % elapsed))

    def test_a_restart_mid_backup_loses_no_time(self):
        # SIGTERM (systemd, docker stop): the worker gives its leases up.
        self._restart_mid_backup(
            lambda: self.assertEqual(0, self.process.terminate()))

    def test_ctrl_c_mid_backup_loses_no_time(self):
        # SIGINT to the process group, as a terminal sends it: stopped
        # gracefully, as on SIGTERM.
        def stop():
            self.process.kill(signal.SIGINT)
            self.assertEqual(0, self.process.process.wait(60))
        self._restart_mid_backup(stop)
        self.assertIn('Caught SIGINT (Ctrl-C): stopping gracefully',
                      self.process.log())

    def test_sigkill_mid_backup_loses_no_time(self):
        # Nothing given up: the next start finds the process gone and
        # takes its execution over, without waiting for the lease.
        self._restart_mid_backup(lambda: self.process.kill(signal.SIGKILL))
        self.assertIn('on this host is gone; took over 1 of its 1 running '
                      'executions', self.process.log())

    def _restart_mid_backup(self, stop):
        policy_id = self._policy('big')
        execution_id = self._run(policy_id)
        running = process_fixtures.wait_until(
            lambda: self._execution(execution_id)['backup_id'], 30, 0.05)
        self.assertTrue(running, 'no backup started within 30 s')
        backup_id = self._execution(execution_id)['backup_id']
        manifest = process_fixtures.wait_until(
            lambda: self._manifest('big', backup_id), 30, 0.05)
        self.assertEqual('BUILDING', manifest['status'],
                         'the dump ended before the stop: make BIG larger')
        # The dump job is frozen while the service stops and starts again,
        # so that it is mid-backup however fast this machine dumps (on a
        # quiet one the 48 MiB took less than a graceful stop), and let go
        # once the service is back: its end is then what the restarted
        # worker must see at once.
        let_go = process_fixtures.freeze(self, manifest['pid'])

        # Stopped mid-backup: the job outlives the worker.
        stop()
        manifest = self._manifest('big', backup_id)
        self.assertEqual('BUILDING', manifest['status'])
        self.process.start()
        self.service.wait_up()
        up = datetime.datetime.now(datetime.timezone.utc)
        let_go()

        execution = self._wait_final(execution_id, 60)
        seen = datetime.datetime.now(datetime.timezone.utc)
        self.assertIsNotNone(execution, 'not finished within 60 s')
        self.assertEqual('SUCCEEDED', execution['status'], execution)
        manifest = self._manifest('big', backup_id)
        self.assertEqual('COMPLETED', manifest['status'])
        done = datetime.datetime.fromisoformat(manifest['finished_at'])
        if done.tzinfo is None:
            done = done.replace(tzinfo=datetime.timezone.utc)
        # From the dump's end, or from the restarted process answering if
        # a loaded machine took longer to start it than the dump to end.
        lag = (seen - max(done, up)).total_seconds()
        self.addDetail('seconds from dump end (or restart) to SUCCEEDED',
                       content.text_content('%.2f' % lag))
        # Not the 300 s of a lease, nor the 60 s of the poll interval.
        self.assertLess(lag, 5)
        self.assertEqual(1, len([
            name for name in os.listdir(os.path.join(self.backups, 'big'))
            if name.endswith('.sqlite.gz')]))
