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
import urllib.request

import fixtures as test_fixtures
import testtools
from testtools import content

from dbaas_scheduler.api import microversion
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


_METHODS = {'get', 'head', 'post', 'put', 'patch', 'delete'}


def _newer(node, version):
    since = isinstance(node, dict) and node.get(microversion.SINCE)
    return bool(since) and microversion.Version.parse(since) > version


def _operation_ids(document):
    return {operation['operationId']
            for item in document.get('paths', {}).values()
            for method, operation in item.items() if method in _METHODS}


def _drop_links(node, operation_ids):
    """Drop the links to operations not in ``operation_ids``."""
    if isinstance(node, list):
        for item in node:
            _drop_links(item, operation_ids)
    elif isinstance(node, dict):
        if isinstance(node.get('links'), dict):
            # A response's links (a schema may have a "links" property).
            node['links'] = {
                name: link for name, link in node['links'].items()
                if not isinstance(link, dict)
                or link.get('operationId') in operation_ids | {None}}
        for value in node.values():
            _drop_links(value, operation_ids)


def document_as_of(document, version):
    """The OpenAPI ``document`` as a client of ``version`` sees it."""
    document = as_of(document, version)
    _drop_links(document, _operation_ids(document))
    return document


def as_of(node, version):
    """The part of the OpenAPI document ``node`` served at ``version``.

    Drops each operation, property and parameter marked
    ``x-openstack-since`` a newer version (and its name from ``required``).
    """
    if isinstance(node, list):
        return [as_of(item, version) for item in node
                if not (_newer(item, version)
                        or (isinstance(item, dict)
                            and _newer(item.get('schema'), version)))]
    if not isinstance(node, dict):
        return node
    kept = {key: as_of(value, version) for key, value in node.items()
            if not _newer(value, version)}
    if 'paths' in kept:
        kept['paths'] = {path: item for path, item in kept['paths'].items()
                         if set(item) & _METHODS}
    if isinstance(kept.get('required'), list) and isinstance(
            kept.get('properties'), dict):
        kept['required'] = [name for name in kept['required']
                            if name in kept['properties']]
    return kept


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

    def _document_as_of(self, version):
        """A file holding the served document as of ``version``."""
        with urllib.request.urlopen(self.url, timeout=60) as answer:
            document = document_as_of(json.load(answer),
                                      microversion.Version.parse(version))
        path = os.path.join(REPORT_DIR,
                            '%s-openapi-%s.json' % (self.DRIVER, version))
        with open(path, 'w') as out:
            json.dump(document, out)
        return path

    def _schemathesis(self, name, phases, version=None):
        report = os.path.join(REPORT_DIR, '%s-%s.ndjson' % (self.DRIVER,
                                                            name))
        location = self.url
        if version:
            location = self._document_as_of(version)
        command = [sys.executable, '-m', 'schemathesis.cli',
                   '--config-file', CONFIG, '--no-color', 'run', location,
                   '--url', 'http://127.0.0.1:%d/' % fixtures.PORT,
                   '--phases', phases, '--report', 'ndjson',
                   '--report-ndjson-path', report]
        if version:
            # In place of the configuration's (the newest).
            command += ['--header',
                        '%s: %s' % (microversion.HEADER,
                                    microversion.header_value(version))]
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
        # The stateful phase at 1.0, from the document as of 1.0: at the
        # newest microversion a generated policy has a dozen more optional
        # fields, and nearly every create is refused for one of them,
        # leaving no policy to follow the links from.
        reports.append(self._schemathesis('stateful', 'stateful',
                                          version='1.0'))
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
