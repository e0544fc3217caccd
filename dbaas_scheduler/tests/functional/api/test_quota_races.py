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
"""Concurrent creates and runs at the limit never pass the quota or rate.

For each database backend the API is served by cheroot (the gabbi
stories' APIServer, a thread per client) with ``[quota]`` limits of
:data:`LIMIT`; :data:`CLIENTS` threads released at once by a barrier each
send one create, or one run of the same policy, over HTTP.  What the
database holds afterwards is compared with the answers.
"""

import collections
import http.client
import json
import threading

import testtools

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import quota as db_quota
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests.functional.api import fixtures

CLIENTS = 16
LIMIT = 5
PROJECT = 'project-q'
HEADERS = {'X-Project-Id': PROJECT, 'X-User-Id': 'quinn',
           'X-Roles': 'member,reader', 'Content-Type': 'application/json'}


class QuotaRacesMixin:

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        fixtures.PORT = ports.free_port()
        server = fixtures.fixtures_for(self.DRIVER).APIServer()
        server.DEFAULT_BACKEND = 'fake'
        server.THREADS = CLIENTS
        server.QUOTAS = {'policies_per_project': LIMIT,
                         'manual_runs_per_policy_per_hour': LIMIT}
        server.start_fixture()
        self.addCleanup(server.stop_fixture)
        self.context = dbaas_context.get_admin_context()

    def request(self, method, path, body=None):
        connection = http.client.HTTPConnection('127.0.0.1', fixtures.PORT,
                                                timeout=120)
        try:
            connection.request(method, path, headers=HEADERS,
                               body=json.dumps(body))
            response = connection.getresponse()
            data = response.read()
        finally:
            connection.close()
        return (response.status, json.loads(data) if data else None,
                response.getheader('Retry-After'))

    def create(self, instance_id):
        return self.request('POST', '/v1/backup-policies', {
            'backup_policy': {'instance_id': instance_id,
                              'schedule': '@daily'}})

    def all_at_once(self, send):
        """``send(i)`` from CLIENTS threads at once; the answers."""
        barrier = threading.Barrier(CLIENTS)
        answers = [None] * CLIENTS

        def client(i):
            barrier.wait()
            try:
                answers[i] = send(i)
            except Exception as exc:
                answers[i] = (None, repr(exc), None)

        threads = [threading.Thread(target=client, args=(i,))
                   for i in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(180)
        return answers

    def stored_ids(self):
        return {policy.id for policy in db_api.list_policies(
            self.context, project_id=PROJECT, limit=1000)}

    def test_creates_racing_for_the_last_place(self):
        for i in range(LIMIT - 1):
            self.assertEqual(201, self.create('db-%d' % i)[0])
        answers = self.all_at_once(lambda i: self.create('racer-%d' % i))
        statuses = collections.Counter(answer[0] for answer in answers)
        self.assertLessEqual(statuses[201], 1, answers)
        self.assertEqual(CLIENTS, statuses[201] + statuses[403], answers)
        created = {body['backup_policy']['id']
                   for status, body, _ in answers if status == 201}
        stored = self.stored_ids()
        self.assertEqual(LIMIT - 1 + len(created), len(stored))
        self.assertLessEqual(created, stored)
        for status, body, _ in answers:
            if status == 403:
                self.assertEqual('dbaas_scheduler.quota_exceeded',
                                 body['errors'][0]['code'])

    def test_creates_racing_from_empty(self):
        answers = self.all_at_once(lambda i: self.create('racer-%d' % i))
        statuses = collections.Counter(answer[0] for answer in answers)
        self.assertEqual(CLIENTS, statuses[201] + statuses[403], answers)
        self.assertLessEqual(statuses[201], LIMIT, answers)
        created = {body['backup_policy']['id']
                   for status, body, _ in answers if status == 201}
        # Refused creates left nothing behind; accepted ones stay.
        self.assertEqual(created, self.stored_ids())

    def test_runs_racing_for_the_hour(self):
        status, body, _ = self.create('orders-db')
        self.assertEqual(201, status, body)
        policy_id = body['backup_policy']['id']
        answers = self.all_at_once(lambda i: self.request(
            'POST', '/v1/backup-policies/%s/run' % policy_id, {}))
        statuses = collections.Counter(answer[0] for answer in answers)
        # Runs of one policy queue on its row's lock: exactly the limit
        # passes, whatever the interleaving.
        self.assertEqual({202: LIMIT, 429: CLIENTS - LIMIT}, dict(statuses),
                         answers)
        for status, body, retry_after in answers:
            if status == 429:
                self.assertEqual('dbaas_scheduler.rate_limit_exceeded',
                                 body['errors'][0]['code'])
                self.assertTrue(3000 < int(retry_after) <= 3600,
                                retry_after)
        started = {body['execution']['id']
                   for status, body, _ in answers if status == 202}
        policy = db_api.get_policy(self.context, policy_id)
        times = db_quota.manual_run_times(self.context, policy_id,
                                          policy.created_at)
        self.assertEqual(LIMIT, len(times))
        self.assertIn(policy.last_execution_id, started)


class TestQuotaRacesSQLite(QuotaRacesMixin, testtools.TestCase):
    DRIVER = 'sqlite'


class TestQuotaRacesPostgreSQL(QuotaRacesMixin, testtools.TestCase):
    DRIVER = 'postgresql'


class TestQuotaRacesMySQL(QuotaRacesMixin, testtools.TestCase):
    DRIVER = 'mysql'
