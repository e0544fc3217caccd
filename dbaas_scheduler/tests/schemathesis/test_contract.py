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
"""schemathesis against the live API: no 5xx, answers as documented.

For each database backend the API is served by cheroot without
authentication, on a fresh database (the gabbi stories' APIServer), and
schemathesis -- its command line, in a process of its own -- reads the
OpenAPI document the API serves at /v1/openapi.json and sends what it
generates from it, twice: once the examples, coverage and fuzzing phases,
once the stateful phase, which follows the document's links from
creating a policy to showing, changing and deleting it.  Its settings
(fixed seed, bounded counts, the checks) are in schemathesis.toml.

Every answer must conform to the document (status, content type, headers,
body), no answer may be a 5xx, a request the document calls invalid must
be refused, a deleted policy must stay deleted, and no database error may
reach the fault wrapper (the API's own checks must refuse the value
first).  The test also counts
the requests and their statuses, writes them to
``schemathesis-report/<backend>.json`` and fails below
:data:`MIN_REQUESTS` requests.
"""

import base64
import collections
import json
import logging
import os
import re
import subprocess
import sys

import fixtures as test_fixtures
import testtools
from testtools import content

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests.functional.api import fixtures

HERE = os.path.dirname(__file__)
CONFIG = os.path.join(HERE, 'schemathesis.toml')
REPORT_DIR = os.path.abspath(os.environ.get(
    'DBAAS_SCHEDULER_SCHEMATHESIS_REPORT_DIR', 'schemathesis-report'))
# Requests schemathesis must have sent per backend, all phases together.
MIN_REQUESTS = 2000
# A whole run must not hang CI.
TIMEOUT = 900

_ID = re.compile('[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-'
                 '[0-9a-f]{12}')


def interactions(ndjson_path):
    """(phase, method, path, status, response body) of every request."""
    with open(ndjson_path) as events:
        for line in events:
            finished = json.loads(line).get('ScenarioFinished')
            if not finished:
                continue
            recorded = finished['recorder'].get('interactions', {})
            for interaction in recorded.values():
                request = interaction['request']
                response = interaction.get('response') or {}
                path = re.sub('^https?://[^/]+', '', request['uri'])
                yield (finished['phase'], request['method'],
                       path.split('?')[0], response.get('status_code'),
                       response.get('content'))


def _body(recorded):
    if not recorded:
        return None
    try:
        return json.loads(base64.b64decode(recorded['$base64']))
    except (KeyError, ValueError):
        return None


def summarize(ndjson_paths):
    """Counts of one backend's runs, and the life of created policies."""
    statuses = collections.Counter()
    phases = collections.Counter()
    created, lifecycle = set(), collections.defaultdict(set)
    for path in ndjson_paths:
        for phase, method, url, status, body in interactions(path):
            statuses[str(status)] += 1
            phases[phase] += 1
            if phase != 'stateful':
                continue
            if (method, url, status) == ('POST', '/v1/backup-policies', 201):
                created.add((_body(body) or {}).get(
                    'backup_policy', {}).get('id'))
                continue
            match = re.fullmatch('/v1/backup-policies/(%s)' % _ID.pattern,
                                 url)
            if match and status in (200, 204):
                lifecycle[match.group(1)].add(method)
    steps = collections.Counter()
    for policy_id in created:
        for method in lifecycle.get(policy_id, ()):
            steps[method] += 1
    full = sum(1 for policy_id in created
               if {'GET', 'PATCH', 'DELETE'} <= lifecycle.get(policy_id,
                                                              set()))
    return {'requests': sum(statuses.values()),
            'statuses': dict(sorted(statuses.items())),
            'phases': dict(phases),
            'stateful': {'created': len(created),
                         'shown': steps['GET'], 'updated': steps['PATCH'],
                         'deleted': steps['DELETE'],
                         'created_shown_updated_deleted': full}}


class ContractMixin:
    """Runs schemathesis against the API on the database ``DRIVER``."""

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        fixtures.PORT = ports.free_port()
        server = fixtures.fixtures_for(self.DRIVER).APIServer()
        # A policy created without a backend gets the fake one, which takes
        # any instance: the local backend (noauth's default) backs up only
        # the instances of its configuration, and would refuse every
        # instance_id schemathesis makes up -- the stateful phase would
        # never create a policy to follow the links from.
        server.DEFAULT_BACKEND = 'fake'
        # One project makes every policy and run: the [quota] defaults
        # would turn the later creates and runs into 403 and 429, and
        # leave the links after them unexplored.
        server.QUOTAS = {'policies_per_project': -1,
                         'manual_runs_per_policy_per_hour': -1}
        # Skips, or fails with DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS=1, when
        # the database server is down.
        server.start_fixture()
        self.addCleanup(server.stop_fixture)
        # What the API really talks to, for the report.
        self.dialect = db_api.get_engine().dialect.name
        # A database error the fault wrapper answers is a value the API's
        # checks let through: there must be none.
        self.faults = self.useFixture(test_fixtures.FakeLogger(
            name='dbaas_scheduler.api.fault', level=logging.WARNING))
        self.url = 'http://127.0.0.1:%d/v1/openapi.json' % fixtures.PORT
        os.makedirs(REPORT_DIR, exist_ok=True)

    def _schemathesis(self, name, phases):
        report = os.path.join(REPORT_DIR, '%s-%s.ndjson' % (self.DRIVER,
                                                            name))
        command = [sys.executable, '-m', 'schemathesis.cli',
                   '--config-file', CONFIG, '--no-color', 'run', self.url,
                   '--phases', phases, '--report', 'ndjson',
                   '--report-ndjson-path', report]
        run = subprocess.run(command, capture_output=True, text=True,
                             timeout=TIMEOUT, cwd=REPORT_DIR)
        self.addDetail('schemathesis %s' % name,
                       content.text_content(run.stdout + run.stderr))
        self.assertEqual(0, run.returncode,
                         'schemathesis (%s) found failures on %s; its '
                         'output is attached' % (name, self.DRIVER))
        return report

    def _forget_policies(self):
        # Names are unique in a project: the policies the first phase made
        # (all in one project, many with the example's name) would answer
        # the stateful phase's creates 409, and leave no policy to follow.
        with db_api.get_engine().begin() as connection:
            connection.execute(models.BackupPolicy.__table__.delete())

    def test_the_api_keeps_its_document(self):
        reports = [self._schemathesis('fuzzing', 'examples,coverage,fuzzing')]
        self._forget_policies()
        reports.append(self._schemathesis('stateful', 'stateful'))
        summary = dict(summarize(reports), backend=self.DRIVER,
                       dialect=self.dialect)
        with open(os.path.join(REPORT_DIR, '%s.json' % self.DRIVER),
                  'w') as out:
            json.dump(summary, out, indent=2)
        self.addDetail('summary', content.json_content(summary))
        server_errors = {status: count for status, count
                         in summary['statuses'].items()
                         if status.startswith('5')}
        self.assertEqual({}, server_errors)
        self.assertEqual('', self.faults.output)
        self.assertGreaterEqual(summary['requests'], MIN_REQUESTS)
        # The stateful phase followed every link of a policy's life, from
        # policies it created, and took one policy through all of it.
        for step in ('created', 'shown', 'updated', 'deleted',
                     'created_shown_updated_deleted'):
            self.assertGreater(summary['stateful'][step], 0, step)


class TestContractSQLite(ContractMixin, testtools.TestCase):
    DRIVER = 'sqlite'


class TestContractPostgreSQL(ContractMixin, testtools.TestCase):
    DRIVER = 'postgresql'


class TestContractMySQL(ContractMixin, testtools.TestCase):
    DRIVER = 'mysql'
