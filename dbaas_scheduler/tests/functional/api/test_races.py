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
"""Races on the same policies end in 404/409, never a 500 or a bad state.

For each database backend the API is served by cheroot (the gabbi
stories' APIServer, with as many threads as there are clients) and
:data:`CLIENTS` threads send a mix of show, update, pause, resume, run,
delete and create requests over HTTP to the same few policies, while a
thread of the test ticks the engine on the same database (with a clock
that runs an hour ahead at every tick, so that every policy is due at
every tick and the engine writes the rows the requests change).

Then: no answer is a 5xx, no "database is locked" is logged (SQLite:
every transaction begins IMMEDIATE and waits its turn), every policy left
satisfies the invariants of the data model (see "Invariants" in
doc/source/contributor/exactly-once.rst), and a policy whose delete was
answered 204 stays deleted.  The request count and the status histogram
are attached as the detail ``statuses``.
"""

import collections
import http.client
import json
import logging
import os
import random
import threading

import fixtures as test_fixtures
from oslo_utils import timeutils
import testtools
from testtools import content

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.engine import tick
from dbaas_scheduler import schedule
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests.functional.api import fixtures

# Threads sending requests, requests each, policies they share.
CLIENTS = 20
REQUESTS = 40
POLICIES = 4

HEADERS = {'X-Project-Id': 'project-a', 'X-User-Id': 'alice',
           'X-Roles': 'member,reader', 'Content-Type': 'application/json'}
# Interval schedules (seconds): the engine runs every policy every few
# seconds while the clients race on it.
SCHEDULES = ('1', '2', '3')
REPORT_DIR = os.path.abspath(os.environ.get(
    'DBAAS_SCHEDULER_RACES_REPORT_DIR', 'races-report'))
# What a race may be answered: done, gone, or conflicting.
EXPECTED = {200, 201, 202, 204, 404, 409}


def policy_violations(policy, executions):
    """How ``policy`` breaks the invariants of the data model, if it does.

    ``executions`` maps execution ids to executions.
    """
    found = []
    if policy.enabled:
        if policy.next_execution_time is None:
            found.append('enabled without a next execution time')
        if policy.paused_reason is not None:
            found.append('enabled with a paused reason')
        if policy.remaining_runs is not None and policy.remaining_runs < 1:
            found.append('enabled with no runs remaining')
    else:
        if policy.next_execution_time is not None:
            found.append('disabled with a next execution time')
        if policy.paused_reason is None:
            found.append('disabled without a paused reason')
    resolved = schedule.resolve_hashed_fields(
        policy.schedule_type, policy.schedule, policy.id)
    if policy.resolved_schedule != resolved:
        found.append('resolved schedule %r is not that of %r'
                     % (policy.resolved_schedule, policy.schedule))
    if policy.last_execution_id is not None:
        last = executions.get(policy.last_execution_id)
        if last is None or last.policy_id != policy.id:
            found.append('last execution %s is not one of its own'
                         % policy.last_execution_id)
    return found


class RacesMixin:

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        fixtures.PORT = ports.free_port()
        server = fixtures.fixtures_for(self.DRIVER).APIServer()
        server.DEFAULT_BACKEND = 'fake'
        server.THREADS = CLIENTS
        # The races are over rows, not quotas: no limit on creates or runs.
        server.QUOTAS = {'policies_per_project': -1,
                         'manual_runs_per_policy_per_hour': -1}
        server.start_fixture()
        self.addCleanup(server.stop_fixture)
        # Schedules of a second: the engine has work at every tick.
        server.conf.set_override('min_schedule_interval', 1, group='api')
        self.dialect = db_api.get_engine().dialect.name
        self.logs = self.useFixture(test_fixtures.FakeLogger(
            name='dbaas_scheduler', level=logging.WARNING))
        self.context = dbaas_context.get_admin_context()
        self.statuses = collections.Counter()
        self.by_operation = collections.defaultdict(collections.Counter)
        self.deleted = set()
        self.runs = {}
        self.policies = []
        self.lock = threading.Lock()
        self.errors = []

    def request(self, method, path, body=None):
        connection = http.client.HTTPConnection('127.0.0.1', fixtures.PORT,
                                                timeout=120)
        try:
            connection.request(
                method, path, headers=HEADERS,
                body=json.dumps(body) if body is not None else None)
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        return response.status, json.loads(data) if data else None

    def create(self):
        status, body = self.request('POST', '/v1/backup-policies', {
            'backup_policy': {'instance_id': 'db-%d' % random.randrange(3),
                              'schedule_type': 'interval',
                              'schedule': '1'}})
        if status == 201:
            with self.lock:
                self.policies.append(body['backup_policy']['id'])
        return status, body

    def operation(self, rand):
        with self.lock:
            policy_id = rand.choice(self.policies[-POLICIES - 1:])
        name = rand.choices(
            ('show', 'update', 'pause', 'resume', 'run', 'delete', 'create'),
            (3, 3, 2, 2, 2, 1, 1))[0]
        try:
            self._operation(rand, name, policy_id)
        except Exception as exc:
            with self.lock:
                self.errors.append((name, policy_id, None, repr(exc)))

    def _operation(self, rand, name, policy_id):
        path = '/v1/backup-policies/%s' % policy_id
        if name == 'show':
            status, body = self.request('GET', path)
        elif name == 'update':
            changes = rand.choice((
                {'schedule': rand.choice(SCHEDULES)},
                {'timezone': rand.choice(('UTC', 'Asia/Tokyo'))},
                {'remaining_runs': rand.choice((None, 500))},
                {'name': 'renamed-%d' % rand.randrange(100)},
                {'instance_id': 'db-%d' % rand.randrange(3)}))
            status, body = self.request('PATCH', path,
                                        {'backup_policy': changes})
        elif name in ('pause', 'resume', 'run'):
            status, body = self.request('POST', '%s/%s' % (path, name), {})
            if name == 'run' and status == 202:
                with self.lock:
                    self.runs[body['execution']['id']] = policy_id
        elif name == 'delete':
            status, body = self.request('DELETE', path)
            if status == 204:
                with self.lock:
                    self.deleted.add(policy_id)
        else:
            status, body = self.create()
        with self.lock:
            self.statuses[status] += 1
            self.by_operation[name][status] += 1
            if status >= 500 or status not in EXPECTED:
                self.errors.append((name, policy_id, status, body))

    def client(self, seed, start):
        rand = random.Random(seed)
        start.wait()
        for _ in range(REQUESTS):
            self.operation(rand)

    def engine(self, stop, ticks):
        # The engine's loop, without its sleep (no run is ever due for
        # long): the due policies advanced and their executions inserted,
        # in transactions beside the requests'.
        while not stop.wait(0.02):
            try:
                result = tick.run_tick(self.context, timeutils.utcnow(True),
                                       50, 3600)
            except Exception as exc:
                ticks['failed'] += 1
                ticks.setdefault('errors', []).append(repr(exc)[:500])
                continue
            ticks['done'] += 1
            ticks['policies_advanced'] += result.claimed

    def test_races_end_in_404_or_409(self):
        for _ in range(POLICIES):
            self.assertEqual(201, self.create()[0])
        start, stop = threading.Event(), threading.Event()
        ticks = collections.Counter()
        clients = [threading.Thread(target=self.client, args=(n, start))
                   for n in range(CLIENTS)]
        engine = threading.Thread(target=self.engine, args=(stop, ticks))
        for thread in clients + [engine]:
            thread.start()
        start.set()
        for thread in clients:
            thread.join(600)
        stop.set()
        engine.join(120)

        executions = {e.id: e for e in db_api.list_executions(self.context)}
        violations = {}
        remaining = {p.id: p for p in db_api.list_policies(self.context)}
        for policy in remaining.values():
            found = policy_violations(policy, executions)
            if found:
                violations[policy.id] = found
        summary = {
            'backend': self.DRIVER, 'dialect': self.dialect,
            'requests': sum(self.statuses.values()),
            'statuses': {str(k): v for k, v in sorted(self.statuses.items())},
            'by_operation': {name: {str(k): v for k, v in sorted(c.items())}
                             for name, c in sorted(self.by_operation.items())},
            'engine_ticks': dict(ticks, errors=ticks.get('errors', [])[:5]),
            'policies_left': len(remaining), 'deleted': len(self.deleted),
            'manual_runs': len(self.runs),
            'database_refusals': self.logs.output.count(
                'the database refused it'),
        }
        report = json.dumps(summary, indent=2)
        self.addDetail('statuses', content.text_content(report))
        os.makedirs(REPORT_DIR, exist_ok=True)
        with open(os.path.join(REPORT_DIR, '%s.json' % self.DRIVER),
                  'w') as out:
            out.write(report)
        self.addDetail('log', content.text_content(self.logs.output))
        self.assertEqual([], self.errors)
        self.assertEqual({}, violations)
        self.assertEqual(set(), self.deleted & set(remaining))
        # Every run answered 202 was recorded, for the policy it was for.
        for execution_id, policy_id in self.runs.items():
            self.assertEqual(policy_id, executions[execution_id].policy_id)
        self.assertNotIn('database is locked', self.logs.output)
        self.assertNotIn('Unexpected error', self.logs.output)
        # A 409 the database decided (a row gone under an UPDATE, a
        # deadlock) is a change decided from a stale read: none.
        self.assertEqual(0, summary['database_refusals'], self.logs.output)
        self.assertEqual(0, ticks['failed'], ticks.get('errors'))
        self.assertGreater(ticks['policies_advanced'], 0)
        self.assertEqual(CLIENTS * REQUESTS, summary['requests'])


class TestRacesSQLite(RacesMixin, testtools.TestCase):
    DRIVER = 'sqlite'


class TestRacesPostgreSQL(RacesMixin, testtools.TestCase):
    DRIVER = 'postgresql'


class TestRacesMySQL(RacesMixin, testtools.TestCase):
    DRIVER = 'mysql'
