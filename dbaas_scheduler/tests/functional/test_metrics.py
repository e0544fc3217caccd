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
"""The Prometheus endpoint, scraped over HTTP from the API, on each database.

A database with policies, executions, reconciliations and services is
served by the real API pipeline (cheroot, noauth); the text a scrape
returns is parsed with prometheus_client's own parser and every figure
compared with what the rows say.
"""

import datetime
import json
import os
import re
import threading
import urllib.error
import urllib.request

from cheroot import wsgi as cheroot_wsgi
from oslo_utils import timeutils
from oslo_utils import uuidutils
from prometheus_client import parser
import sqlalchemy as sa
import yaml

from dbaas_scheduler.api import deploy
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import policy
from dbaas_scheduler import stats as process_stats
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

MINUTE = datetime.timedelta(minutes=1)
SECOND = datetime.timedelta(seconds=1)
BUCKETS = [1.0, 5.0, 60.0, 300.0]
ALERTS = os.path.join(os.path.dirname(__file__), '..', '..', '..', 'doc',
                      'source', 'admin', 'alerts.yaml')


class _MetricsEndpoint(db_fixtures.DatabaseMixin):

    REQUIRE_AUTHENTICATION = False

    def setUp(self):
        super().setUp()
        self.now = timeutils.utcnow(True)
        self.flags(auth_strategy='noauth', rpc_transport='none')
        self.flags(group='metrics', enabled=True, path='/metrics',
                   cache_time=0, window=3600, lateness_buckets=BUCKETS,
                   require_authentication=self.REQUIRE_AUTHENTICATION)
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

    def _get(self, path='/metrics', method='GET'):
        request = urllib.request.Request(
            'http://127.0.0.1:%d%s' % (self.port, path), method=method)
        with urllib.request.urlopen(request, timeout=30) as response:
            return (response.status, response.headers['Content-Type'],
                    response.read().decode())

    def scrape(self):
        status, content_type, text = self._get()
        self.assertEqual(200, status)
        self.assertTrue(content_type.startswith('text/plain'), content_type)
        samples = {}
        for family in parser.text_string_to_metric_families(text):
            for sample in family.samples:
                key = (sample.name, tuple(sorted(
                    (name, value) for name, value in sample.labels.items()
                    if name != 'window')))
                samples[key] = sample.value
        return samples

    def insert(self, table, **values):
        with self.engine.begin() as connection:
            connection.execute(table.insert().values(**values))

    def policy(self, enabled=True, next_time=None, last_execution_id=None,
               protection=None, last_success_ago=None):
        policy_id = uuidutils.generate_uuid()
        self.insert(models.BackupPolicy.__table__,
                    id=policy_id, name='p-%s' % policy_id,
                    last_execution_id=last_execution_id,
                    protection=protection,
                    last_success_at=(self.now - last_success_ago
                                     if last_success_ago else None),
                    project_id='project-a', instance_id='instance-a',
                    schedule_type='cron', schedule='0 * * * *',
                    timezone='UTC', enabled=enabled,
                    next_execution_time=next_time,
                    created_at=self.now)
        return policy_id

    def execution(self, status, scheduled_ago, dispatched=None,
                  started=None, finished_ago=None, trigger='schedule',
                  reason=None, fault=None, deleted_backups=None,
                  policy_id=None, execution_id=None):
        scheduled_at = self.now - scheduled_ago
        execution_id = execution_id or uuidutils.generate_uuid()
        self.insert(
            models.BackupExecution.__table__,
            id=execution_id,
            policy_id=policy_id or uuidutils.generate_uuid(),
            project_id='project-a',
            instance_id='instance-a', scheduled_at=scheduled_at,
            trigger=trigger, status=status, status_reason=reason,
            fault=fault, attempts=1, created_at=scheduled_at,
            dispatched_at=(scheduled_at + dispatched
                           if dispatched is not None else None),
            started_at=(scheduled_at + started
                        if started is not None else None),
            finished_at=(self.now - finished_ago
                         if finished_ago is not None else None))
        if deleted_backups:
            # As the workers record them (and mark stray_deleted_at).
            db_worker.record_deleted_backups(
                dbaas_context.get_admin_context(), execution_id,
                deleted_backups)
        return (dispatched.total_seconds() if dispatched else None,
                started.total_seconds() if started else None)

    def service(self, binary, heartbeat_ago, stats=None):
        service_id = uuidutils.generate_uuid()
        self.insert(models.Service.__table__, id=service_id,
                    host='node-1', binary=binary, pid=1,
                    started_at=self.now - 60 * MINUTE,
                    heartbeat_at=self.now - heartbeat_ago, stats=stats)
        return service_id

    def processes(self):
        """A live worker and engine, and a dead worker, with their stats."""
        registry = process_stats.REGISTRY
        registry.reset()
        self.addCleanup(registry.reset)
        process_stats.BACKEND_CALL_SECONDS.observe(0.3, 'create_backup')
        process_stats.BACKEND_ERRORS.inc('get_backups', 'timeout')
        process_stats.ENGINE_TICK_SECONDS.observe(0.02)
        worker = json.dumps(registry.snapshot(process_stats.WORKER_METRICS))
        engine = json.dumps(registry.snapshot(process_stats.ENGINE_METRICS))
        return (self.service('dbaas-scheduler-worker', 5 * SECOND, worker),
                self.service('dbaas-scheduler-engine', 5 * SECOND, engine),
                self.service('dbaas-scheduler-worker', 10 * MINUTE, worker))

    def test_the_live_processes_own_figures(self):
        worker, engine, dead = self.processes()
        self.service('dbaas-scheduler-api', 5 * SECOND)
        samples = self.scrape()

        def labels(service_id, binary, **extra):
            return tuple(sorted(dict(
                service_id=service_id, binary=binary, host='node-1',
                **extra).items()))

        worker_labels = labels(worker, 'dbaas-scheduler-worker')
        self.assertEqual(1, samples[(
            'dbaas_scheduler_backend_call_seconds_count',
            labels(worker, 'dbaas-scheduler-worker', call='create_backup'))])
        self.assertEqual(1, samples[(
            'dbaas_scheduler_backend_errors_total',
            labels(worker, 'dbaas-scheduler-worker', call='get_backups',
                   kind='timeout'))])
        self.assertEqual(0, samples[(
            'dbaas_scheduler_lease_renewals_lost_total', worker_labels)])
        self.assertEqual(1, samples[(
            'dbaas_scheduler_engine_tick_seconds_bucket',
            labels(engine, 'dbaas-scheduler-engine', le='0.025'))])
        self.assertEqual(0, samples[(
            'dbaas_scheduler_engine_tick_seconds_bucket',
            labels(engine, 'dbaas-scheduler-engine', le='0.01'))])
        # Only the live processes with figures: not the dead worker, not
        # the API.
        self.assertEqual({worker, engine}, {
            dict(key).get('service_id') for _, key in samples} - {None})
        self.assertNotIn(dead, str(samples))

    def test_empty_database(self):
        samples = self.scrape()
        self.assertEqual(1, samples[('dbaas_scheduler_database_up', ())])
        self.assertEqual(0, samples[('dbaas_scheduler_backlog_policies',
                                     ())])
        self.assertEqual(0, samples[('dbaas_scheduler_services', (
            ('binary', 'dbaas-scheduler-engine'), ('state', 'up')))])
        self.assertEqual(0, samples[(
            'dbaas_scheduler_executions_finished',
            (('reason', 'none'), ('status', 'FAILED')))])
        self.assertEqual(0, samples[(
            'dbaas_scheduler_dispatch_lateness_seconds_bucket',
            (('le', '+Inf'),))])

    def test_figures_match_the_rows(self):
        # Policies: three due and unclaimed, two in the future, one paused.
        # Protection states: two ok, one at risk, one breached, two
        # without a state.
        for ago, state in ((10, 'ok'), (5, 'at_risk'), (1, None)):
            self.policy(next_time=self.now - ago * MINUTE, protection=state,
                        last_success_ago=ago * 60 * MINUTE)
        for ahead, state in ((5, None), (50, 'ok')):
            self.policy(next_time=self.now + ahead * MINUTE,
                        protection=state,
                        last_success_ago=ahead * 60 * MINUTE)
        self.policy(enabled=False, protection='breached',
                    last_success_ago=100 * 60 * MINUTE)

        orphaned, retained = (uuidutils.generate_uuid(),
                              uuidutils.generate_uuid())
        lateness = [
            self.execution('SUCCEEDED', 30 * MINUTE, 2 * SECOND,
                           10 * SECOND, 20 * MINUTE, execution_id=retained,
                           deleted_backups=[
                               {'id': 'r1',
                                'created_at': self.now.isoformat()}]),
            self.execution('SUCCEEDED', 25 * MINUTE, 100 * SECOND,
                           200 * SECOND, 15 * MINUTE,
                           reason='coalesced 3 missed runs since '
                                  '2026-11-23T10:00:00+00:00'),
            self.execution('SKIPPED', 40 * MINUTE, finished_ago=39 * MINUTE,
                           reason='missed', execution_id=orphaned,
                           deleted_backups=[
                               {'id': 'b4', 'reason': 'orphan',
                                'created_at': self.now.isoformat(),
                                'deleted_at': (
                                    self.now - 10 * MINUTE).isoformat()}]),
            self.execution('SKIPPED', 20 * MINUTE, 1 * SECOND,
                           finished_ago=19 * MINUTE,
                           reason='overlap: execution x of the same '
                                  'instance is still running'),
            self.execution('FAILED', 50 * MINUTE, 3 * SECOND, 4 * SECOND,
                           10 * MINUTE,
                           fault='timed out: backup b is BUILDING after '
                                 '7200 seconds ([worker] backup_timeout)'),
            self.execution('FAILED', 45 * MINUTE, 20 * SECOND, 30 * SECOND,
                           40 * MINUTE,
                           fault='the trove backend reports backup b '
                                 'ERROR: disk full'),
            self.execution('FAILED', 35 * MINUTE, 0.5 * SECOND,
                           finished_ago=34 * MINUTE,
                           fault='Unauthorized (HTTP 401)'),
            self.execution('SUCCEEDED', 55 * MINUTE, 4 * SECOND,
                           6 * SECOND, 9 * MINUTE,
                           reason='worker lease expired; resuming',
                           deleted_backups=[
                               {'id': 'b1', 'reason': 'duplicate',
                                'created_at': self.now.isoformat(),
                                'deleted_at': (
                                    self.now - 5 * MINUTE).isoformat()},
                               {'id': 'b2', 'reason': 'duplicate',
                                'created_at': self.now.isoformat(),
                                'deleted_at': (
                                    self.now - 200 * MINUTE).isoformat()},
                               {'id': 'b3',
                                'created_at': self.now.isoformat()}]),
            self.execution('RUNNING', 5 * MINUTE, 1 * SECOND, 2 * SECOND),
        ]
        # Not in the lateness histograms: manual, or outside the window.
        self.execution('PENDING', 2 * MINUTE, trigger='manual')
        self.execution('DISPATCHED', 1 * MINUTE, 1 * SECOND,
                       trigger='manual')
        self.execution('SUCCEEDED', 200 * MINUTE, 1 * SECOND, 1 * SECOND,
                       190 * MINUTE)

        # An older stray recorded later: the latest deletion still marks
        # the execution; a retention entry marks none.
        db_worker.record_deleted_backups(
            dbaas_context.get_admin_context(), orphaned,
            [{'id': 'b5', 'reason': 'orphan',
              'created_at': self.now.isoformat(),
              'deleted_at': (self.now - 100 * MINUTE).isoformat()}])
        table = models.BackupExecution.__table__
        with self.engine.connect() as connection:
            marked = dict(connection.execute(
                sa.select(table.c.id, table.c.stray_deleted_at)
                .where(table.c.id.in_((orphaned, retained)))).all())
        self.assertEqual(self.now - 10 * MINUTE, marked[orphaned])
        self.assertIsNone(marked[retained])

        recon = models.BackupReconciliation.__table__
        self.insert(recon, backend='fake', project_id='project-a',
                    instance_id='i-1', policy_id='p',
                    due_at=self.now - MINUTE, until=self.now + 60 * MINUTE)
        self.insert(recon, backend='fake', project_id='project-a',
                    instance_id='i-2', policy_id='p',
                    due_at=self.now + MINUTE, until=self.now + 60 * MINUTE)
        self.service('dbaas-scheduler-engine', 5 * SECOND)
        self.service('dbaas-scheduler-worker', 5 * SECOND)
        self.service('dbaas-scheduler-worker', 20 * SECOND)
        self.service('dbaas-scheduler-worker', 10 * MINUTE)

        samples = self.scrape()

        def value(name, **labels):
            return samples[('dbaas_scheduler_' + name,
                            tuple(sorted(labels.items())))]

        self.assertEqual(1, value('database_up'))
        self.assertEqual(5, value('policies', enabled='true'))
        self.assertEqual(1, value('policies', enabled='false'))
        self.assertEqual(3, value('backlog_policies'))
        self.assertAlmostEqual(600, value('backlog_oldest_seconds'),
                               delta=30)
        hour = 3600
        self.assertEqual(2, value('policies_protection', state='ok'))
        self.assertAlmostEqual(50 * hour, value(
            'protection_oldest_success_age_seconds', state='ok'), delta=30)
        self.assertEqual(1, value('policies_protection', state='at_risk'))
        self.assertAlmostEqual(5 * hour, value(
            'protection_oldest_success_age_seconds', state='at_risk'),
            delta=30)
        self.assertEqual(1, value('policies_protection', state='breached'))
        self.assertAlmostEqual(100 * hour, value(
            'protection_oldest_success_age_seconds', state='breached'),
            delta=30)
        self.assertEqual(1, value('executions_in_flight', status='PENDING'))
        self.assertEqual(1, value('executions_in_flight',
                                  status='DISPATCHED'))
        self.assertEqual(1, value('executions_in_flight', status='RUNNING'))
        self.assertAlmostEqual(120, value('executions_oldest_seconds',
                                          status='PENDING'), delta=30)

        def finished(status, reason):
            return value('executions_finished', status=status,
                         reason=reason)

        self.assertEqual(1, finished('SUCCEEDED', 'none'))
        self.assertEqual(1, finished('SUCCEEDED', 'coalesced'))
        self.assertEqual(1, finished('SUCCEEDED', 'lease_expired'))
        self.assertEqual(1, finished('SKIPPED', 'missed'))
        self.assertEqual(1, finished('SKIPPED', 'overlap'))
        self.assertEqual(1, finished('FAILED', 'timeout'))
        self.assertEqual(1, finished('FAILED', 'backup_failed'))
        self.assertEqual(1, finished('FAILED', 'backend_error'))
        self.assertEqual(8, sum(
            sample for (name, _), sample in samples.items()
            if name == 'dbaas_scheduler_executions_finished'))
        self.assertEqual(1, value('slots_missed', kind='missed'))
        self.assertEqual(1, value('slots_missed', kind='coalesced'))

        for name, index in (('dispatch_lateness_seconds', 0),
                            ('start_lateness_seconds', 1)):
            seconds = [row[index] for row in lateness
                       if row[index] is not None]
            for bound in BUCKETS:
                self.assertEqual(
                    sum(1 for late in seconds if late <= bound),
                    value(name + '_bucket', le=str(bound)),
                    '%s le %s' % (name, bound))
            self.assertEqual(len(seconds), value(name + '_bucket',
                                                 le='+Inf'))
            self.assertEqual(len(seconds), value(name + '_gcount'))
            self.assertAlmostEqual(sum(seconds), value(name + '_gsum'),
                                   places=3)

        self.assertEqual(1, value('stray_backups_deleted',
                                  reason='duplicate'))
        self.assertEqual(1, value('stray_backups_deleted', reason='orphan'))
        self.assertEqual(1, value('reconciliations_due'))
        self.assertEqual(1, value('services', binary='dbaas-scheduler-engine',
                                  state='up'))
        self.assertEqual(2, value('services', binary='dbaas-scheduler-worker',
                                  state='up'))
        self.assertEqual(1, value('services', binary='dbaas-scheduler-worker',
                                  state='down'))
        self.assertEqual(0, value('services', binary='dbaas-scheduler-api',
                                  state='up'))

    def test_policies_failing_in_a_row(self):
        self.flags(group='metrics', failure_streaks=[1, 3, 5])
        context = dbaas_context.get_admin_context()
        hour = 60 * MINUTE

        def history(*statuses, **values):
            # Each outcome recorded as a worker records it (claim, then
            # finish), oldest first: the policy's consecutive_failures is
            # what the metric counts.
            row = dict(name=db_fixtures.policy_name(self),
                       project_id='project-a', instance_id='instance-a',
                       schedule_type='cron', schedule='0 * * * *',
                       timezone='UTC', created_at=self.now,
                       next_execution_time=self.now + hour)
            row.update(values)
            policy_id = db_api.create_policy(context, row).id
            for age, status in zip(range(len(statuses), 0, -1), statuses):
                slot = self.now - age * hour
                execution = db_api.create_execution(context, dict(
                    policy_id=policy_id, project_id='project-a',
                    instance_id='instance-a', scheduled_at=slot,
                    status='DISPATCHED'))
                claim = uuidutils.generate_uuid()
                db_worker.claim_executions(context, [execution.id], 'w1',
                                           claim, slot, 600)
                self.assertTrue(db_worker.finish_execution(
                    context, execution.id, claim, status, slot + MINUTE,
                    fault='boom' if status == 'FAILED' else None))
            return policy_id

        # Three in a row; a skipped slot between them does not break it.
        history('SUCCEEDED', 'FAILED', 'FAILED', 'SKIPPED', 'FAILED')
        history('FAILED', 'FAILED', 'SUCCEEDED', 'FAILED')   # one
        history('FAILED', 'FAILED', 'FAILED', 'SUCCEEDED')   # none
        # Six: counted in every length up to the longest asked for.
        history(*['FAILED'] * 6)
        # An expired run is a failed outcome too (as for
        # pause_after_failures and the API's consecutive_failures).
        history('SUCCEEDED', 'FAILED', 'EXPIRED')            # two
        # Paused by its failures: it still fails until resumed.
        history('FAILED', 'FAILED', 'FAILED', pause_after_failures=3)
        # Deleted: its failed history is not a failing policy.
        db_api.delete_policy(context, history('FAILED', 'FAILED', 'FAILED'))
        samples = self.scrape()

        def failing(consecutive):
            return samples[('dbaas_scheduler_policies_failing',
                            (('consecutive', str(consecutive)),))]

        self.assertEqual(5, failing(1))
        self.assertEqual(3, failing(3))
        self.assertEqual(1, failing(5))
        # The longest length asked for caps the groups read.
        self.flags(group='metrics', failure_streaks=[2])
        samples = self.scrape()
        self.assertEqual(4, failing(2))
        # Turned off.
        self.flags(group='metrics', failure_streaks=[])
        self.assertFalse([key for key in self.scrape()
                          if key[0] == 'dbaas_scheduler_policies_failing'])

    def test_coverage_counts_of_recent_reports(self):
        self.flags(group='coverage', counts_max_age=3600, metrics_projects=1)
        table = models.CoverageCount.__table__
        for project_id, state, number, age in (
                ('project-a', 'unprotected', 2, MINUTE),
                ('project-a', 'protected', 5, MINUTE),
                ('project-b', 'stale', 1, MINUTE),
                ('project-b', 'protected', 3, MINUTE),
                # A report older than counts_max_age: not counted.
                ('project-c', 'unprotected', 7, 2 * 60 * MINUTE)):
            self.insert(table, project_id=project_id, state=state,
                        instances=number, computed_at=self.now - age)
        samples = self.scrape()

        def total(state):
            return samples[('dbaas_scheduler_coverage_instances',
                            (('state', state),))]

        self.assertEqual(2, total('unprotected'))
        self.assertEqual(1, total('stale'))
        self.assertEqual(8, total('protected'))
        self.assertEqual(0, total('paused'))
        self.assertEqual(2, samples[(
            'dbaas_scheduler_coverage_projects_reported', ())])
        # One project named ([coverage] metrics_projects): the worst.
        named = {labels for name, labels in samples
                 if name == 'dbaas_scheduler_coverage_project_instances'}
        self.assertEqual({'project-a'}, {dict(labels)['project_id']
                                         for labels in named})
        self.assertEqual(2, samples[(
            'dbaas_scheduler_coverage_project_instances',
            (('project_id', 'project-a'), ('state', 'unprotected')))])

    def test_only_get_and_head(self):
        status, content_type, body = self._get(method='HEAD')
        self.assertEqual(200, status)
        self.assertTrue(content_type.startswith('text/plain'), content_type)
        self.assertEqual('', body)
        error = self.assertRaises(urllib.error.HTTPError, self._get,
                                  method='POST')
        self.assertEqual(405, error.code)

    def test_database_down_is_a_figure_not_an_error(self):
        def rename(old, new):
            with self.engine.begin() as connection:
                connection.execute(sa.text(
                    'ALTER TABLE %s RENAME TO %s' % (old, new)))

        rename('backup_reconciliation', 'renamed_reconciliation')
        self.addCleanup(rename, 'renamed_reconciliation',
                        'backup_reconciliation')
        samples = self.scrape()
        self.assertEqual(0, samples[('dbaas_scheduler_database_up', ())])
        self.assertNotIn(('dbaas_scheduler_backlog_policies', ()), samples)


class TestMetricsSQLite(_MetricsEndpoint, base.TestCase):
    DRIVER = 'sqlite'

    def test_example_alerts_name_what_is_served(self):
        with open(ALERTS) as stream:
            rules = yaml.safe_load(stream)['groups'][0]['rules']
        self.assertGreaterEqual(len(rules), 11)
        self.processes()
        served = {name for name, _ in self.scrape()}
        for rule in rules:
            names = set(re.findall(r'dbaas_scheduler_\w+', rule['expr']))
            self.assertTrue(names, rule['alert'])
            self.assertEqual(set(), names - served, rule['alert'])


class TestMetricsMySQL(_MetricsEndpoint, base.TestCase):
    DRIVER = 'mysql'


class TestMetricsPostgreSQL(_MetricsEndpoint, base.TestCase):
    DRIVER = 'postgresql'


class TestMetricsAuthenticated(_MetricsEndpoint, base.TestCase):
    """[metrics] require_authentication: a token and the metrics rule."""

    DRIVER = 'sqlite'
    REQUIRE_AUTHENTICATION = True

    def status(self, headers, new_defaults=False):
        self.flags(group='oslo_policy', enforce_new_defaults=new_defaults)
        request = urllib.request.Request(
            'http://127.0.0.1:%d/metrics' % self.port, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def test_a_system_reader_scrapes(self):
        self.assertEqual(200, self.status(
            {'OpenStack-System-Scope': 'all', 'X-Roles': 'reader'},
            new_defaults=True))

    def test_a_project_token_is_refused_under_the_new_defaults(self):
        for roles in ('member,reader', 'admin,member,reader'):
            self.assertEqual(403, self.status(
                {'X-Project-Id': 'project-a', 'X-Roles': roles},
                new_defaults=True))

    def test_the_legacy_default_is_the_admin_role(self):
        self.assertEqual(403, self.status(
            {'X-Project-Id': 'project-a', 'X-Roles': 'member,reader'}))
        self.assertEqual(200, self.status(
            {'X-Project-Id': 'project-a', 'X-Roles': 'admin'}))


class TestMetricsOff(base.TestCase):

    def test_not_served_by_default(self):
        self.flags(auth_strategy='noauth', rpc_transport='none')
        self.assertFalse(self.conf.metrics.enabled)
        application = deploy.deploy(self.conf)
        statuses = []
        environ = {'REQUEST_METHOD': 'GET', 'PATH_INFO': '/metrics',
                   'SERVER_NAME': 'localhost', 'SERVER_PORT': '80',
                   'wsgi.url_scheme': 'http', 'wsgi.input': None}
        application(environ, lambda status, headers: statuses.append(status))
        self.assertNotEqual('200', statuses[0][:3])
