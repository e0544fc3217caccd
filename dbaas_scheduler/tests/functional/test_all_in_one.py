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
"""The embedded default, end to end: dbaas-scheduler-all in a process.

What the README's quick start does, over real HTTP: a SQLite database of
its own under ``state_path``, a ``local`` policy created through the API,
a manual run taken by the worker in the same process, and the backup file
on disk.
"""

import gzip
import os
import random
import re
import sqlite3
import threading
import urllib.error
import urllib.request

import fixtures
from testtools import content

from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import process_fixtures


class TestAllInOne(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.notes = os.path.join(self.tempdir, 'notes.db')
        database = sqlite3.connect(self.notes)
        database.execute('CREATE TABLE notes (body TEXT)')
        database.execute("INSERT INTO notes VALUES ('remember the milk')")
        database.commit()
        database.close()
        self.backups = os.path.join(self.tempdir, 'backups')
        self.service = self.useFixture(process_fixtures.AllInOneProcess(
            self.tempdir, {
                # Schedules of seconds: the engine has work at every tick
                # of the concurrency test.
                'api': {'min_schedule_interval': 1},
                'engine': {'scan_interval': 0.2, 'sweep_interval': 1},
                'worker': {'poll_interval': 0.2},
                'local_backend': {
                    'instances': 'notes:sqlite:///' + self.notes,
                    'backup_dir': self.backups},
                # The concurrency test runs its policies by hand more often
                # than the default rate allows (test_quota_races tests it).
                'quota': {'manual_runs_per_policy_per_hour': -1},
            }))

    def test_a_manual_run_becomes_a_backup_file(self):
        status, body = self.service.request('POST', '/v1/backup-policies', {
            'backup_policy': {'name': 'notes', 'instance_id': 'notes',
                              'backend': 'local',
                              'schedule': '0 3 * * *', 'keep_last': 3}})
        self.assertEqual(201, status, body)
        policy_id = body['backup_policy']['id']

        status, body = self.service.request(
            'POST', '/v1/backup-policies/%s/run' % policy_id)
        self.assertEqual(202, status, body)
        execution_id = body['execution']['id']

        def finished():
            found = self.service.request(
                'GET', '/v1/executions/%s' % execution_id)[1]['execution']
            return found if found['status'] not in (
                'PENDING', 'DISPATCHED', 'RUNNING') else None

        execution = process_fixtures.wait_until(finished, 60, 0.2)
        self.assertIsNotNone(execution, 'the run did not finish in 60 s')
        self.assertEqual('SUCCEEDED', execution['status'], execution)
        self.assertEqual('manual', execution['trigger'])
        self.assertIsNotNone(execution['dispatched_at'])
        self.assertLessEqual(execution['dispatched_at'],
                             execution['started_at'])
        policy = self.service.request(
            'GET', '/v1/backup-policies/%s' % policy_id)[1]['backup_policy']
        self.assertEqual(execution_id, policy['last_execution_id'])

        # The backup is a real, complete copy of the database.
        backup = os.path.join(self.backups, 'notes',
                              execution['backup_id'] + '.sqlite.gz')
        restored = os.path.join(self.tempdir, 'restored.db')
        with gzip.open(backup) as source, open(restored, 'wb') as target:
            target.write(source.read())
        database = sqlite3.connect(restored)
        self.assertEqual([('remember the milk',)], database.execute(
            'SELECT body FROM notes').fetchall())
        database.close()

    def test_twenty_writers_while_the_engine_ticks(self):
        # The embedded default under load: 20 clients change the same
        # policies at once while the engine runs them every second or two
        # and the worker backs them up, all on one SQLite file.  Every
        # transaction begins IMMEDIATE and waits its turn: no "database is
        # locked" reaches a client or the log.
        policies = []
        for n in range(4):
            status, body = self.service.request(
                'POST', '/v1/backup-policies', {'backup_policy': {
                    'name': 'busy-%d' % n, 'instance_id': 'notes',
                    'backend': 'local', 'schedule_type': 'interval',
                    'schedule': '2', 'keep_last': 2}})
            self.assertEqual(201, status, body)
            policies.append(body['backup_policy']['id'])
        statuses, lock = {}, threading.Lock()

        def writer(seed):
            rand = random.Random(seed)
            for _ in range(15):
                path = '/v1/backup-policies/%s' % rand.choice(policies)
                action = rand.choice(('update', 'pause', 'resume', 'run'))
                try:
                    if action == 'update':
                        status = self.service.request('PATCH', path, {
                            'backup_policy': {
                                'schedule': rand.choice(('1', '2', '3')),
                                'description': 'w%d' % seed}})[0]
                    else:
                        status = self.service.request(
                            'POST', '%s/%s' % (path, action))[0]
                except OSError as exc:
                    status = repr(exc)
                with lock:
                    statuses[status] = statuses.get(status, 0) + 1

        writers = [threading.Thread(target=writer, args=(n,))
                   for n in range(20)]
        for thread in writers:
            thread.start()
        for thread in writers:
            thread.join(300)
        self.addDetail('statuses', content.text_content(repr(statuses)))
        self.assertEqual(300, sum(statuses.values()))
        self.assertEqual(set(), set(statuses) - {200, 202})

        # The engine and the worker went on: backups were taken.
        def succeeded():
            listed = self.service.request('GET',
                                          '/v1/executions?status=SUCCEEDED')
            return listed[1]['executions']
        self.assertTrue(process_fixtures.wait_until(succeeded, 60, 0.5))
        log = self.service.log()
        self.assertNotIn('database is locked', log)
        self.assertEqual([], [line for line in log.splitlines()
                              if ' ERROR ' in line])

    def test_the_log_says_what_it_does(self):
        log = self.service.log()
        database = os.path.join(self.tempdir, 'state',
                                'dbaas_scheduler.sqlite')
        summary = [line for line in log.splitlines()
                   if 'dbaas-scheduler-all: data in' in line]
        self.assertEqual(1, len(summary), log)
        self.assertIn(' INFO ', summary[0])
        for part in ('data in SQLite file %s;' % database,
                     'REST API on http://127.0.0.1:%d/;' % self.service.port,
                     'authentication: noauth;', 'local (the default)',
                     'local backend instances: notes'):
            self.assertIn(part, summary[0])
        # The instance's URL may hold a password: only its name is shown.
        self.assertNotIn(self.notes, summary[0])
        self.assertTrue(any(
            ' WARNING ' in line and 'Authentication is off' in line
            and 'acts as the admin' in line for line in log.splitlines()),
            log)

        # Each request: one INFO line with its method, path, status, time
        # and request id -- not its query string.
        sent = []
        for path, query in (('/v1/backup-policies', '?name=notes'),
                            ('/v1/executions/no-such-execution', '')):
            request = urllib.request.Request(
                'http://127.0.0.1:%d%s%s' % (self.service.port, path, query),
                headers=self.service.headers)
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    sent.append((path, answer.status, answer.headers[
                        'X-OpenStack-Request-ID']))
            except urllib.error.HTTPError as error:
                sent.append((path, error.code,
                             error.headers['X-OpenStack-Request-ID']))
        self.assertEqual([200, 404], [status for _, status, _ in sent])

        def logged():
            lines = [line for line in self.service.log().splitlines()
                     if 'dbaas_scheduler.api.requestlog' in line]
            found = [[line for line in lines if request_id in line]
                     for _, _, request_id in sent]
            return found if all(found) else None

        found = process_fixtures.wait_until(logged, 10, 0.1)
        self.assertTrue(found, self.service.log()[-3000:])
        for (path, status, request_id), lines in zip(sent, found):
            self.assertEqual(1, len(lines), lines)
            self.assertRegex(lines[0], r' INFO .* GET %s %d \d+\.\d{3} s %s$'
                             % (re.escape(path), status, request_id))
            self.assertNotIn('name=notes', lines[0])
