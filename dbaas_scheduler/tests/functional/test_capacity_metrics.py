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
"""The fair-capacity metrics, scraped over HTTP, on each database.

Executions queued by a real claim under ``[worker]
max_running_per_project`` and backoffs recorded as a worker records them,
beside rows written as the other queues write them (the region's limit,
a backoff's release, the overlap queue, which is not capacity); every
figure of a scrape is compared with what the rows say.
"""

import datetime
import threading
import urllib.request

from cheroot import wsgi as cheroot_wsgi
from oslo_utils import timeutils
from oslo_utils import uuidutils
from prometheus_client import parser

from dbaas_scheduler.api import deploy
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import capacity as db_capacity
from dbaas_scheduler.db import models
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import policy
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

MINUTE = datetime.timedelta(minutes=1)
PREFIX = 'dbaas_scheduler_capacity_'
REASONS = ('project_limit', 'region_limit', 'backoff')


class _CapacityMetrics(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.now = timeutils.utcnow(True)
        self.flags(auth_strategy='noauth', rpc_transport='none')
        self.flags(group='metrics', enabled=True, path='/metrics',
                   cache_time=0)
        policy.reset()
        self.addCleanup(policy.reset)
        policy.get_enforcer(self.conf)
        self.port = ports.free_port()
        # One thread: the in-memory SQLite database is one connection.
        server = cheroot_wsgi.Server(('127.0.0.1', self.port),
                                     deploy.deploy(self.conf), numthreads=1)
        server.prepare()
        thread = threading.Thread(target=server.serve, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 10)
        self.addCleanup(server.stop)

    def scrape(self):
        with urllib.request.urlopen(
                'http://127.0.0.1:%d/metrics' % self.port,
                timeout=30) as response:
            self.assertEqual(200, response.status)
            text = response.read().decode()
        return {(sample.name, tuple(sorted(sample.labels.items()))):
                sample.value
                for family in parser.text_string_to_metric_families(text)
                for sample in family.samples}

    def insert(self, table, **values):
        with self.engine.begin() as connection:
            connection.execute(table.insert().values(**values))

    def run_row(self, project_id, status, scheduled_ago, reason=None):
        execution_id = uuidutils.generate_uuid()
        scheduled_at = self.now - scheduled_ago
        self.insert(models.BackupExecution.__table__, id=execution_id,
                    policy_id=uuidutils.generate_uuid(),
                    project_id=project_id,
                    instance_id='instance-%s' % execution_id,
                    scheduled_at=scheduled_at, status=status,
                    status_reason=reason, attempts=0,
                    created_at=scheduled_at)
        return execution_id

    def figure(self, samples, name, **labels):
        return samples[(PREFIX + name, tuple(sorted(labels.items())))]

    def named(self, samples, name):
        return {dict(labels)['project_id'] for key, labels in samples
                if key == PREFIX + name}

    def test_nothing_waits(self):
        samples = self.scrape()
        for reason in REASONS:
            self.assertEqual(0, self.figure(
                samples, 'queued_executions', reason=reason))
        self.assertEqual(0, self.figure(samples, 'queued_projects'))
        self.assertEqual(0, self.figure(samples, 'queued_oldest_seconds'))
        self.assertEqual(0, self.figure(samples, 'backoff_projects'))
        self.assertEqual(0, self.figure(
            samples, 'backoff_longest_remaining_seconds'))
        self.assertEqual(set(), self.named(
            samples, 'project_queued_executions'))
        self.assertEqual(set(), self.named(
            samples, 'backoff_end_timestamp_seconds'))

    def test_queued_and_backing_off(self):
        self.flags(group='metrics', capacity_projects=1)
        context = dbaas_context.get_admin_context()
        # Project A: one backup running, its limit; a claim of three more
        # queues them (project_limit), the earliest slot 10 minutes ago.
        self.run_row('project-a', 'RUNNING', 20 * MINUTE)
        ids = [self.run_row('project-a', 'DISPATCHED', ago * MINUTE)
               for ago in (10, 5, 1)]
        claimed = db_worker.claim_executions(
            context, ids, 'worker-1', uuidutils.generate_uuid(), self.now,
            60, db_capacity.Limits(per_project=1))
        self.assertEqual([], claimed)
        # One of A's released by a backoff, waiting for its end.
        until_a = self.now + 5 * MINUTE
        self.run_row('project-a', 'PENDING', 2 * MINUTE,
                     db_capacity.BACKED_OFF % ('project-a',
                                               until_a.isoformat(), '413'))
        # Project B: two waiting 30 minutes for the region (the longest).
        for _ in range(2):
            self.run_row('project-b', 'PENDING', 30 * MINUTE,
                         db_capacity.REGION_FULL % 200)
        # Not capacity: the overlap queue, a running and a finished one.
        self.run_row('project-c', 'PENDING', 60 * MINUTE,
                     'queued: execution x of the same instance is still '
                     'running')
        self.run_row('project-c', 'EXPIRED', 90 * MINUTE,
                     db_capacity.PROJECT_FULL % ('project-c', 3))
        # Backoffs: A's for 5 minutes, D's for 10 (ends last), E's over.
        db_capacity.record_backoff(context, 'project-a', until_a, '413')
        until_d = self.now + 10 * MINUTE
        db_capacity.record_backoff(context, 'project-d', until_d, 'quota')
        db_capacity.record_backoff(context, 'project-e',
                                   self.now - MINUTE, 'over')

        samples = self.scrape()
        self.assertEqual(3, self.figure(samples, 'queued_executions',
                                        reason='project_limit'))
        self.assertEqual(2, self.figure(samples, 'queued_executions',
                                        reason='region_limit'))
        self.assertEqual(1, self.figure(samples, 'queued_executions',
                                        reason='backoff'))
        self.assertEqual(2, self.figure(samples, 'queued_projects'))
        # B's, from its slot 30 minutes ago (the scrape comes later).
        oldest = self.figure(samples, 'queued_oldest_seconds')
        self.assertGreaterEqual(oldest, 30 * 60)
        self.assertLess(oldest, 40 * 60)
        # One project named ([metrics] capacity_projects): B, the longest.
        self.assertEqual({'project-b'}, self.named(
            samples, 'project_queued_executions'))
        self.assertEqual(2, self.figure(
            samples, 'project_queued_executions', project_id='project-b',
            reason='region_limit'))
        self.assertEqual(0, self.figure(
            samples, 'project_queued_executions', project_id='project-b',
            reason='project_limit'))
        self.assertEqual(oldest, self.figure(
            samples, 'project_queued_oldest_seconds',
            project_id='project-b'))

        self.assertEqual(2, self.figure(samples, 'backoff_projects'))
        remaining = self.figure(samples,
                                'backoff_longest_remaining_seconds')
        self.assertLessEqual(remaining, 10 * 60)
        self.assertGreater(remaining, 5 * 60)
        self.assertEqual({'project-d'}, self.named(
            samples, 'backoff_end_timestamp_seconds'))
        self.assertAlmostEqual(until_d.timestamp(), self.figure(
            samples, 'backoff_end_timestamp_seconds',
            project_id='project-d'), places=0)

        # All of them named when the option allows.
        self.flags(group='metrics', capacity_projects=10)
        samples = self.scrape()
        self.assertEqual({'project-a', 'project-b'}, self.named(
            samples, 'project_queued_executions'))
        self.assertEqual(3, self.figure(
            samples, 'project_queued_executions', project_id='project-a',
            reason='project_limit'))
        self.assertEqual(1, self.figure(
            samples, 'project_queued_executions', project_id='project-a',
            reason='backoff'))
        self.assertEqual({'project-a', 'project-d'}, self.named(
            samples, 'backoff_end_timestamp_seconds'))
        # None named: the totals stay.
        self.flags(group='metrics', capacity_projects=0)
        samples = self.scrape()
        self.assertEqual(set(), self.named(
            samples, 'project_queued_executions'))
        self.assertEqual(set(), self.named(
            samples, 'backoff_end_timestamp_seconds'))
        self.assertEqual(2, self.figure(samples, 'backoff_projects'))
        self.assertGreater(self.figure(
            samples, 'backoff_longest_remaining_seconds'), 5 * 60)


class TestCapacityMetricsSQLite(_CapacityMetrics, base.TestCase):
    DRIVER = 'sqlite'


class TestCapacityMetricsMySQL(_CapacityMetrics, base.TestCase):
    DRIVER = 'mysql'


class TestCapacityMetricsPostgreSQL(_CapacityMetrics, base.TestCase):
    DRIVER = 'postgresql'
