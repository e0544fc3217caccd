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
"""Policies: creation (defaults, validation, first run) and manual runs."""

import datetime
import time

import oslo_messaging as messaging
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import access
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler import schedule
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.engine import test_engine
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.worker import manager as worker_manager
from dbaas_scheduler.worker import service as worker_service

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class TestCreatePolicy(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='user-a')
        # Trove would be asked for the instance; these tests are about
        # everything else.
        self.flags(group='api', default_backend='fake')
        self.useFixture(backend_fixtures.OpenBackends(self.conf))

    def create(self, **values):
        values.setdefault('instance_id', 'instance-1')
        values.setdefault('schedule', '30 2 * * *')
        return backup_policy_obj.create_policy(self.context, self.conf, values,
                                               now=NOW)

    def test_defaults(self):
        policy = self.create()
        self.assertEqual(('fake', 'cron', 'UTC', 'skip', True),
                         (policy.backend, policy.schedule_type,
                          policy.timezone, policy.overlap_policy,
                          policy.enabled))
        self.assertEqual(('project-a', 'user-a', 'backup-instance-1'),
                         (policy.project_id, policy.user_id, policy.name))
        self.assertEqual(datetime.datetime(2026, 11, 23, 2, 30, tzinfo=UTC),
                         policy.next_execution_time)

    def test_time_zone(self):
        policy = self.create(timezone='Asia/Tokyo')
        # 02:30 in Tokyo is 17:30 UTC the day before.
        self.assertEqual(datetime.datetime(2026, 11, 22, 17, 30, tzinfo=UTC),
                         policy.next_execution_time)

    def test_hashed_schedule_uses_the_policy_id(self):
        policy_id = uuidutils.generate_uuid()
        policy = self.create(id=policy_id, schedule='H 3 * * *')
        again = backup_policy_obj.next_runs(self.conf, policy, 1, now=NOW)
        self.assertEqual(again, [policy.next_execution_time])
        self.assertEqual(3, policy.next_execution_time.hour)

    def test_hashed_schedule_is_stored_resolved(self):
        policy = self.create(schedule='H H * * *')
        self.assertEqual(
            schedule.resolve_hashed_fields('cron', 'H H * * *', policy.id),
            policy.resolved_schedule)
        changed = backup_policy_obj.update_policy(
            self.context, self.conf, policy, {'schedule': '0 4 * * *'},
            now=NOW)
        self.assertIsNone(changed.resolved_schedule)
        self.assertIsNone(self.create().resolved_schedule)

    def test_a_kept_resolution_decides_the_preview(self):
        # A policy resolved by an earlier H rule keeps its times: the
        # preview shows what the engine runs (the resolved schedule), and
        # setting the schedule again re-resolves it by today's rule.
        policy = self.create(schedule='H H * * *')
        db_api.update_policy(self.context, policy.id,
                             {'resolved_schedule': '7 1 * * *'})
        policy = db_api.get_policy(self.context, policy.id)
        self.assertEqual(
            [datetime.datetime(2026, 11, 23, 1, 7, tzinfo=UTC)],
            backup_policy_obj.next_runs(self.conf, policy, 1, now=NOW))
        again = backup_policy_obj.update_policy(
            self.context, self.conf, policy, {'schedule': 'H H * * *'},
            now=NOW)
        self.assertEqual(
            schedule.resolve_hashed_fields('cron', 'H H * * *', policy.id),
            again.resolved_schedule)

    def test_interval_with_a_unit(self):
        policy = self.create(schedule_type='interval', schedule='90m')
        self.assertEqual(NOW + datetime.timedelta(minutes=90),
                         policy.next_execution_time)

    def test_interval_is_counted_from_creation_by_default(self):
        policy = self.create(schedule_type='interval', schedule='3600')
        self.assertEqual(NOW, policy.start_at)
        # Nothing runs at creation: the first run is one interval later.
        self.assertEqual(NOW + datetime.timedelta(hours=1),
                         policy.next_execution_time)

    def test_created_paused(self):
        policy = self.create(enabled=False)
        self.assertFalse(policy.enabled)
        self.assertIsNone(policy.next_execution_time)

    def test_next_runs_preview(self):
        policy = self.create(schedule='0 */6 * * *')
        runs = backup_policy_obj.next_runs(self.conf, policy, 3, now=NOW)
        self.assertEqual([18, 0, 6], [r.hour for r in runs])
        self.flags(max_next_runs=2, group='api')
        self.assertEqual(2, len(backup_policy_obj.next_runs(
            self.conf, policy, 50, now=NOW)))

    def test_invalid_input(self):
        cases = [
            (dict(color='blue'), 'unknown field(s): color'),
            (dict(instance_id=''), 'instance_id must not be empty'),
            (dict(overlap_policy='wait'), 'overlap_policy must be one of'),
            (dict(backend='tape'), "unknown backend 'tape'"),
            (dict(keep_last=0), 'keep_last must be a whole number of at '
                                'least 1'),
            (dict(catchup_window=-1), 'catchup_window must be a whole '
                                      'number of at least 0'),
            (dict(remaining_runs=True), 'remaining_runs must be'),
            (dict(backup_params=[1]), 'backup_params must be an object'),
            (dict(schedule='*/1 * * * *'), 'more often than the minimum'),
            (dict(timezone='Mars/Base'), 'Unknown time zone'),
            (dict(schedule=None), 'schedule is required'),
        ]
        for values, message in cases:
            error = self.assertRaises(exception.Invalid, self.create,
                                      **values)
            self.assertIn(message, str(error), values)

    def test_project_is_required(self):
        self.context = dbaas_context.RequestContext()
        error = self.assertRaises(exception.Invalid, self.create)
        self.assertIn('belongs to a project', str(error))


class TestDefaultsOfTheDeployment(base.TestCase):

    def test_default_backend(self):
        default = access.default_backend
        self.assertEqual('trove', default(self.conf))
        self.flags(auth_strategy='noauth')
        self.assertEqual('local', default(self.conf))
        self.flags(group='api', default_backend='fake')
        self.assertEqual('fake', default(self.conf))


class TestInstanceCheck(db_fixtures.DatabaseMixin, base.TestCase):
    """The backend is asked for the instance at create and when it moves."""

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='user-a')
        self.flags(auth_strategy='noauth')
        self.flags(group='local_backend',
                   instances={'notes': 'sqlite:////tmp/notes.db'})
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        loader.reset()
        self.addCleanup(loader.reset)

    def create(self, **values):
        values.setdefault('schedule', '@daily')
        return backup_policy_obj.create_policy(self.context, self.conf,
                                               values, now=NOW)

    def test_local_instances_are_those_configured(self):
        policy = self.create(instance_id='notes')
        self.assertEqual('local', policy.backend)
        error = self.assertRaises(exception.InvalidInstance, self.create,
                                  instance_id='nosuch')
        # No configured name in it: a tenant may read it.
        self.assertEqual(
            'The local backend cannot back up instance nosuch: it is not a '
            'local instance of this service; its operator configures them '
            'in [local_backend] instances (name:database-URL, then SIGHUP)',
            str(error))
        self.assertEqual(['notes'], [p.instance_id for p in
                                     db_api.list_policies(self.context)])

    def test_instances_are_read_when_asked(self):
        self.create(instance_id='notes')
        # What a SIGHUP does to the option (the mutate of oslo.config).
        self.flags(group='local_backend', instances={
            'notes': 'sqlite:////tmp/notes.db',
            'orders': 'postgresql://backup@db1/orders'})
        self.assertEqual('orders', self.create(instance_id='orders')
                         .instance_id)

    def test_moving_a_policy_is_checked(self):
        policy = self.create(instance_id='notes')
        self.assertRaises(exception.InvalidInstance,
                          backup_policy_obj.update_policy, self.context,
                          self.conf, policy, {'instance_id': 'nosuch'})
        self.assertEqual('notes', db_api.get_policy(
            self.context, policy.id).instance_id)
        # Another backend with an instance of its own.
        moved = backup_policy_obj.update_policy(
            self.context, self.conf, policy,
            {'backend': 'fake', 'instance_id': 'anything'})
        self.assertEqual(('fake', 'anything'),
                         (moved.backend, moved.instance_id))
        # Changes that keep the instance are not checked again.
        self.flags(group='local_backend', instances={})
        self.assertEqual('renamed', backup_policy_obj.update_policy(
            self.context, self.conf, moved, {'name': 'renamed'}).name)

    def test_trove_without_credentials_says_how_to_configure_it(self):
        error = self.assertRaises(exception.BackendNotConfigured,
                                  self.create,
                                  instance_id=uuidutils.generate_uuid(),
                                  backend='trove')
        self.assertIn('[service_credentials], which has no auth_type',
                      str(error))
        self.assertIn('you are its operator', str(error))
        self.assertEqual([], db_api.list_policies(self.context))


class TestSchedulePreview(base.TestCase):

    def test_preview_validates_as_a_creation(self):
        times, example = backup_policy_obj.preview_schedule(
            self.conf, {'schedule': '0 */6 * * *'}, 3, now=NOW)
        self.assertEqual([18, 0, 6], [t.hour for t in times])
        self.assertFalse(example)
        self.assertRaises(exception.ScheduleTooFrequent,
                          backup_policy_obj.preview_schedule, self.conf,
                          {'schedule': '* * * * *'}, 3, now=NOW)

    def test_an_interval_counts_from_now(self):
        times, _example = backup_policy_obj.preview_schedule(
            self.conf, {'schedule_type': 'interval', 'schedule': '3600'}, 2,
            now=NOW)
        self.assertEqual([NOW + datetime.timedelta(hours=1),
                          NOW + datetime.timedelta(hours=2)], times)

    def test_hashed_fields_give_an_example(self):
        times, example = backup_policy_obj.preview_schedule(
            self.conf, {'schedule': 'H 2 * * *', 'timezone': 'Asia/Tokyo'},
            2, now=NOW)
        self.assertTrue(example)
        self.assertEqual(datetime.timedelta(days=1), times[1] - times[0])


class _RecordingWorkerAPI:
    """Takes casts and does nothing with them, like a busy worker."""

    def __init__(self, failure=None):
        self.failure = failure
        self.cast = []

    def backup_database_instance(self, context, execution_id):
        if self.failure is not None:
            raise self.failure
        self.cast.append(execution_id)


class _RunPolicyTests(db_fixtures.DatabaseMixin):
    """Manual runs, recorded and dispatched as the engine's are."""

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='user-a')
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        self.policy = backup_policy_obj.create_policy(
            self.context, self.conf, {'instance_id': 'instance-1',
                                      'backend': 'fake',
                                      'schedule': '30 2 * * *'})

    def test_run_becomes_the_policys_last_execution(self):
        worker_api = _RecordingWorkerAPI()
        execution = backup_policy_obj.run_policy(
            self.context, self.conf, self.policy, worker_api)
        self.assertEqual([execution.id], worker_api.cast)
        self.assertEqual(('manual', 'DISPATCHED'),
                         (execution.trigger, execution.status))
        self.assertIsNotNone(execution.dispatched_at)
        self.assertGreaterEqual(execution.dispatched_at,
                                execution.created_at)
        self.assertEqual(execution.id, db_api.get_policy(
            self.context, self.policy.id).last_execution_id)

    def test_failed_cast_leaves_the_run_to_the_sweep(self):
        worker_api = _RecordingWorkerAPI(
            messaging.MessageDeliveryFailure('no worker'))
        execution = backup_policy_obj.run_policy(
            self.context, self.conf, self.policy, worker_api)
        stored = db_api.get_execution(self.context, execution.id)
        self.assertEqual(('PENDING', None),
                         (stored.status, stored.dispatched_at))
        self.assertEqual(execution.id, db_api.get_policy(
            self.context, self.policy.id).last_execution_id)

    def test_run_of_a_deleted_policy_records_nothing(self):
        # Loaded by the API, then deleted by someone else.
        db_api.delete_policy(self.context, self.policy.id)
        worker_api = _RecordingWorkerAPI()
        self.assertRaises(exception.PolicyNotFound,
                          backup_policy_obj.run_policy,
                          self.context, self.conf, self.policy, worker_api)
        self.assertEqual([], db_api.list_executions(
            self.context, policy_id=self.policy.id))
        self.assertEqual([], worker_api.cast)

    def test_worker_faster_than_the_api_keeps_its_claim(self):
        execution = backup_policy_obj.run_policy(
            self.context, self.conf, self.policy,
            test_engine.ClaimingWorkerAPI())
        self.assertEqual(('RUNNING', 'fast-worker'),
                         (execution.status, execution.owner))
        self.assertIsNotNone(execution.dispatched_at)
        self.assertLessEqual(execution.dispatched_at, execution.started_at)

    def test_all_in_one_worker_sees_a_dispatched_run(self):
        # rpc_transport = none: the cast runs the real worker endpoint in
        # a thread of this process, usually before run_policy returns.
        if self.DRIVER == 'sqlite':
            # (dbaas-scheduler-all's own SQLite file gives each thread its
            # connection; its manual runs are checked end to end by
            # tests/functional/test_all_in_one.py.)
            self.skipTest('the in-memory SQLite test database is a single '
                          'connection, which the worker thread and the '
                          'API cannot use at the same moment')
        self.flags(rpc_transport='none')
        self.addCleanup(loader.reset)
        self.addCleanup(notifications.reset)
        self.addCleanup(rpc.cleanup)
        parts = worker_service.build_parts(self.conf,
                                           uuidutils.generate_uuid())
        self.addCleanup(parts.close)
        runner = parts.runner
        rpc.register_local_endpoint(self.conf.worker.topic,
                                    worker_manager.WorkerManager(runner), 2)
        execution = backup_policy_obj.run_policy(
            self.context, self.conf, self.policy, rpcapi.WorkerAPI(self.conf))
        deadline = time.monotonic() + 30
        while execution.status in ('PENDING', 'DISPATCHED') \
                or execution.dispatched_at is None:
            self.assertLess(time.monotonic(), deadline, execution.status)
            time.sleep(0.05)
            execution = db_api.get_execution(self.context, execution.id)
        self.assertEqual('RUNNING', execution.status, execution.fault)
        self.assertEqual(runner.owner, execution.owner)
        self.assertLessEqual(execution.dispatched_at, execution.started_at)


class TestRunPolicySQLite(_RunPolicyTests, base.TestCase):
    DRIVER = 'sqlite'


class TestRunPolicyMySQL(_RunPolicyTests, base.TestCase):
    DRIVER = 'mysql'


class TestRunPolicyPostgreSQL(_RunPolicyTests, base.TestCase):
    DRIVER = 'postgresql'
