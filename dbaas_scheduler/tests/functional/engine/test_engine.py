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
"""The engine in this process, on each database, with the real RabbitMQ."""

import datetime

import oslo_messaging as messaging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler.engine import service as engine_service
from dbaas_scheduler.engine import tick
from dbaas_scheduler import rpcapi
from dbaas_scheduler import servicegroup
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures

UTC = datetime.timezone.utc


def add_policies(engine, count, **values):
    """Insert ``count`` policies in one statement; return their ids."""
    now = timeutils.utcnow(True)
    rows = []
    for number in range(count):
        policy_id = uuidutils.generate_uuid()
        row = dict(id=policy_id, name='policy-%s' % policy_id,
                   project_id='project', instance_id='instance-%d' % number,
                   backend='trove', schedule_type='cron',
                   schedule='0 3 * * *', timezone='UTC', enabled=True,
                   overlap_policy='skip', created_at=now,
                   next_execution_time=now - datetime.timedelta(seconds=1))
        row.update(values)
        rows.append(row)
    with engine.begin() as connection:
        connection.execute(models.BackupPolicy.__table__.insert(), rows)
    return [row['id'] for row in rows]


def executions(engine, **where):
    table = models.BackupExecution.__table__
    query = sa.select(table).order_by(table.c.scheduled_at)
    for column, value in where.items():
        query = query.where(table.c[column] == value)
    with engine.connect() as connection:
        return connection.execute(query).all()


def policy(engine, policy_id):
    table = models.BackupPolicy.__table__
    with engine.connect() as connection:
        return connection.execute(
            sa.select(table).where(table.c.id == policy_id)).one()


class ClaimingWorkerAPI:
    """A worker faster than the engine: it claims during the cast.

    As the worker thread of the all-in-one process often is.
    """

    def backup_database_instance(self, context, execution_id):
        db_worker.claim_executions(context, [execution_id], 'fast-worker',
                                   'fast-claim', timeutils.utcnow(True), 60)


class BrokerFailingWorkerAPI:
    """Casts ``after`` messages, then fails as a broker outage does."""

    def __init__(self, worker_api, after):
        self.worker_api = worker_api
        self.after = after
        self.sent = []

    def backup_database_instances(self, context, execution_ids):
        if not self.after:
            raise messaging.MessageDeliveryFailure('broker away')
        self.after -= 1
        self.worker_api.backup_database_instances(context, execution_ids)
        self.sent.extend(execution_ids)


class _EngineTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        self.worker = self.useFixture(
            messaging_fixtures.RecordingWorker(self.conf)).endpoint
        self.service = engine_service.EngineService(self.conf)
        self.service.worker_api = rpcapi.WorkerAPI(self.conf)
        self.context = dbaas_context.get_admin_context()

    def test_due_policies_run_once(self):
        ids = add_policies(self.engine, 30, timezone='Europe/Berlin')
        add_policies(self.engine, 5, next_execution_time=(
            timeutils.utcnow(True) + datetime.timedelta(hours=1)))
        self.service.tick_once(self.context)

        runs = executions(self.engine)
        self.assertEqual(sorted(ids), sorted(e.policy_id for e in runs))
        self.assertEqual({'DISPATCHED'}, {e.status for e in runs})
        self.assertTrue(all(e.dispatched_at for e in runs))
        self.assertTrue(self.worker.wait_for([e.id for e in runs]))
        for policy_id in ids:
            advanced = policy(self.engine, policy_id)
            # 03:00 in Berlin is 01:00 or 02:00 UTC.
            self.assertIn(advanced.next_execution_time.hour, (1, 2))
            self.assertGreater(advanced.next_execution_time,
                               timeutils.utcnow(True))

        # Nothing is due any more: a second tick records nothing.
        self.service.tick_once(self.context)
        self.assertEqual(30, len(executions(self.engine)))

    def test_a_slot_set_back_is_not_run_twice(self):
        # A resume or update on a host whose clock is behind sets a policy
        # back to the slot an engine just ran: the tick neither runs it
        # again nor fails the batch it is in.
        first, other = add_policies(self.engine, 2)
        self.service.tick_once(self.context)
        [ran] = executions(self.engine, policy_id=first)
        table = models.BackupPolicy.__table__
        with self.engine.begin() as connection:
            connection.execute(table.update().where(
                table.c.id.in_([first, other])).values(
                    next_execution_time=ran.scheduled_at))
        self.service.tick_once(self.context)
        self.assertEqual([ran.id], [e.id for e in executions(
            self.engine, policy_id=first)])
        self.assertGreater(policy(self.engine, first).next_execution_time,
                           timeutils.utcnow(True))
        self.assertGreater(policy(self.engine, other).next_execution_time,
                           timeutils.utcnow(True))

    def test_worker_faster_than_the_engine_keeps_its_claim(self):
        [policy_id] = add_policies(self.engine, 1)
        self.service.worker_api = ClaimingWorkerAPI()
        self.service.tick_once(self.context)
        [run] = executions(self.engine, policy_id=policy_id)
        self.assertEqual(('RUNNING', 'fast-worker'), (run.status, run.owner))
        # It was handed over all the same, before the worker started it.
        self.assertIsNotNone(run.dispatched_at)
        self.assertLessEqual(run.dispatched_at, run.started_at)

    def test_runs_a_cast_did_not_send_go_back_to_pending(self):
        self.flags(executions_per_message=10, group='engine')
        add_policies(self.engine, 30)
        self.service.worker_api = BrokerFailingWorkerAPI(
            self.service.worker_api, after=1)
        self.service.tick_once(self.context)
        runs = executions(self.engine)
        sent = set(self.service.worker_api.sent)
        self.assertEqual(10, len(sent))
        self.assertTrue(self.worker.wait_for(sent))
        self.assertEqual(
            {(e.id, 'DISPATCHED') for e in runs if e.id in sent},
            {(e.id, e.status) for e in runs if e.dispatched_at})
        self.assertEqual({('PENDING', None)},
                         {(e.status, e.dispatched_at) for e in runs
                          if e.id not in sent})

    def test_burst_larger_than_a_batch_travels_in_groups(self):
        self.flags(batch_size=100, executions_per_message=20, group='engine')
        ids = add_policies(self.engine, 350)
        delays = []
        while True:
            delays.append(self.service.tick_once(self.context))
            if delays[-1]:
                break
        self.assertEqual([0, 0, 0], delays[:3])
        runs = executions(self.engine)
        self.assertEqual(sorted(ids), sorted(e.policy_id for e in runs))
        self.assertTrue(self.worker.wait_for([e.id for e in runs]))
        self.assertEqual(len(ids), len(self.worker.ids()))
        # 100 + 100 + 100 + 50 executions in groups of at most 20.
        self.assertEqual(5 + 5 + 5 + 3, self.worker.messages)

    def test_crash_between_commit_and_cast_loses_nothing(self):
        self.flags(dispatch_timeout=30, group='engine')
        add_policies(self.engine, 20)
        # A tick that commits, then dies before casting.
        now = timeutils.utcnow(True)
        result = tick.run_tick(self.context, now, 1000, 3600)
        self.assertEqual(20, len(result.runs))
        # Recorded DISPATCHED at commit, before the cast that never came.
        self.assertEqual({('DISPATCHED', now)},
                         {(e.status, e.dispatched_at)
                          for e in executions(self.engine)})

        sweep = self.service.sweep_once
        sweep(self.context)
        self.assertEqual([], self.worker.ids())  # not stale yet

        later = now + datetime.timedelta(seconds=31)
        result = engine_service.sweeps.sweep(
            self.context, self.service.worker_api, self.conf, later)
        self.assertEqual(20, result.recast)
        self.assertTrue(self.worker.wait_for(
            [e.id for e in executions(self.engine)]))
        self.assertEqual({'DISPATCHED'},
                         {e.status for e in executions(self.engine)})
        # Stamped when cast again: the next sweep leaves them alone.
        again = engine_service.sweeps.sweep(
            self.context, self.service.worker_api, self.conf, later)
        self.assertEqual(0, again.recast)

    def test_expired_lease_is_resumed_elsewhere(self):
        [policy_id] = add_policies(self.engine, 1)
        now = timeutils.utcnow(True)
        running = db_api.create_execution(self.context, {
            'policy_id': policy_id, 'project_id': 'project',
            'instance_id': 'instance-0', 'scheduled_at': now,
            'status': 'RUNNING', 'owner': 'dead-worker',
            'lease_expires_at': now - datetime.timedelta(seconds=1),
            'backup_id': 'backup-1', 'started_at': now, 'attempts': 1})
        alive = db_api.create_execution(self.context, {
            'policy_id': policy_id, 'project_id': 'project',
            'instance_id': 'instance-0',
            'scheduled_at': now - datetime.timedelta(days=1),
            'status': 'RUNNING', 'owner': 'live-worker',
            'lease_expires_at': now + datetime.timedelta(minutes=5)})
        result = engine_service.sweeps.sweep(
            self.context, self.service.worker_api, self.conf, now)
        self.assertEqual(1, result.resumed)
        self.assertTrue(self.worker.wait_for([running.id]))
        resumed = db_api.get_execution(self.context, running.id)
        self.assertEqual(('DISPATCHED', None, 'backup-1', 1),
                         (resumed.status, resumed.owner, resumed.backup_id,
                          resumed.attempts))
        self.assertEqual('RUNNING',
                         db_api.get_execution(self.context, alive.id).status)

    def test_retry_is_cast_when_its_time_comes(self):
        [policy_id] = add_policies(self.engine, 1)
        now = timeutils.utcnow(True)

        def queued(offset, slot):
            return db_api.create_execution(self.context, {
                'policy_id': policy_id, 'project_id': 'project',
                'instance_id': 'instance-0',
                'scheduled_at': now - datetime.timedelta(hours=slot),
                'status': 'PENDING', 'created_at': now,
                'next_attempt_at': now + datetime.timedelta(seconds=offset)})

        due, later = queued(-1, 1), queued(600, 2)
        result = engine_service.sweeps.sweep(
            self.context, self.service.worker_api, self.conf, now)
        self.assertEqual(1, result.recast)
        self.assertTrue(self.worker.wait_for([due.id]))
        self.assertNotIn(later.id, self.worker.ids())

    def test_a_slot_expired_at_the_tick_counts_as_a_failure(self):
        # Half past an hour: the slot at its top is past its start window
        # (a minute) but within the catch-up window.
        now = timeutils.utcnow(True).replace(minute=30, second=0,
                                             microsecond=0)
        [hourly] = add_policies(
            self.engine, 1, schedule='0 * * * *', catchup_window=7200,
            start_window=60, pause_after_failures=1,
            next_execution_time=now.replace(minute=0))
        timeutils.set_time_override(now)
        self.addCleanup(timeutils.clear_time_override)
        self.service.tick_once(self.context)

        [expired] = executions(self.engine, policy_id=hourly)
        self.assertEqual('EXPIRED', expired.status)
        row = policy(self.engine, hourly)
        self.assertEqual(1, row.consecutive_failures)
        self.assertFalse(row.enabled)
        self.assertIn('1', row.paused_reason)
        self.assertEqual([], self.worker.ids())

    def test_backlog_after_downtime(self):
        now = timeutils.utcnow(True)
        [hourly] = add_policies(
            self.engine, 1, schedule='0 * * * *', catchup_window=7200,
            # The slot at the top of this hour may be 59 minutes old: still
            # within its start window (by default half the hour).
            start_window=3600,
            next_execution_time=now.replace(minute=0, second=0,
                                            microsecond=0)
            - datetime.timedelta(hours=5))
        [daily] = add_policies(
            self.engine, 1, schedule='%d %d * * *' % (
                (now - datetime.timedelta(hours=3)).minute,
                (now - datetime.timedelta(hours=3)).hour),
            next_execution_time=now - datetime.timedelta(hours=3))
        # The tick sees the same clock as the expectations below, even when
        # an hour begins between the two.
        timeutils.set_time_override(now)
        self.addCleanup(timeutils.clear_time_override)
        self.service.tick_once(self.context)

        missed, run = executions(self.engine, policy_id=hourly)
        self.assertEqual(('SKIPPED', 'missed'),
                         (missed.status, missed.status_reason))
        self.assertEqual('DISPATCHED', run.status)
        self.assertEqual(now.replace(minute=0, second=0, microsecond=0),
                         run.scheduled_at)
        [skipped] = executions(self.engine, policy_id=daily)
        self.assertEqual(('SKIPPED', 'missed'),
                         (skipped.status, skipped.status_reason))
        self.assertGreater(policy(self.engine, daily).next_execution_time,
                           now + datetime.timedelta(hours=20))
        self.assertTrue(self.worker.wait_for([run.id]))
        self.assertNotIn(skipped.id, self.worker.ids())

    def test_a_batch_is_written_exactly_and_only_where_due_matches(self):
        # record_tick's batch travels as JSON: text that needs escaping,
        # NULLs, microseconds and the compare-and-set must all come
        # through as the tick planned them.
        now = timeutils.utcnow(True)
        current, stale = add_policies(self.engine, 2, remaining_runs=5)
        due = policy(self.engine, current).next_execution_time
        following = due + datetime.timedelta(hours=1, microseconds=7)
        # (Characters outside the BMP need a utf8mb4 connection, which the
        # services have and the test fixture's MariaDB engine has not.)
        reason = 'it\'s "quoted", \\ {a,b} \u00fcn\u00efcode \u20ac'
        run = db_scheduling.NewExecution(
            uuidutils.generate_uuid(), current, 'project', 'instance-0',
            due, 'schedule', 'DISPATCHED', reason, 0, now, now, None,
            due + datetime.timedelta(minutes=30, microseconds=1), None)
        advances = [
            db_scheduling.PolicyAdvance(current, due, following, 4, True,
                                        None, run.id),
            # Claimed at a due time the row no longer has.
            db_scheduling.PolicyAdvance(
                stale, due - datetime.timedelta(microseconds=1), None, 0,
                False, 'completed: no runs remaining', None)]
        with db_api.writer_transaction(self.context):
            matched, inserted = db_scheduling.record_tick(
                self.context, advances, [run], now)
        self.assertEqual((1, 1), (matched, inserted))

        advanced = policy(self.engine, current)
        self.assertEqual((following, 4, True, None, run.id, now),
                         (advanced.next_execution_time,
                          advanced.remaining_runs, advanced.enabled,
                          advanced.paused_reason,
                          advanced.last_execution_id, advanced.updated_at))
        untouched = policy(self.engine, stale)
        self.assertEqual((5, True, None),
                         (untouched.remaining_runs, untouched.enabled,
                          untouched.last_execution_id))
        [row] = executions(self.engine, policy_id=current)
        self.assertEqual(run._asdict(),
                         {field: row._mapping[field]
                          for field in db_scheduling.NewExecution._fields})

        # The same slot again: kept once, and the batch does not fail.
        again = run._replace(id=uuidutils.generate_uuid())
        with db_api.writer_transaction(self.context):
            db_scheduling.record_tick(self.context, [advances[0]._replace(
                due=following)], [again], now)
        self.assertEqual([run.id], [e.id for e in executions(
            self.engine, policy_id=current)])

    def test_limits_disable_the_policy(self):
        now = timeutils.utcnow(True)
        [counted] = add_policies(self.engine, 1, remaining_runs=1)
        # Daily, next at a minute before this one tomorrow: the end an hour
        # from now comes first whatever the time of day (a fixed 03:00
        # schedule ran again before the end when the tests ran at 02:xx).
        earlier = now - datetime.timedelta(minutes=1)
        [bounded] = add_policies(
            self.engine, 1, end_at=now + datetime.timedelta(hours=1),
            schedule='%d %d * * *' % (earlier.minute, earlier.hour))
        self.service.tick_once(self.context)
        for policy_id, reason in ((counted, 'no runs remaining'),
                                  (bounded, 'no run before end_at')):
            finished = policy(self.engine, policy_id)
            self.assertFalse(finished.enabled)
            self.assertIsNone(finished.next_execution_time)
            self.assertIn(reason, finished.paused_reason)
            self.assertEqual(1, len(executions(self.engine,
                                               policy_id=policy_id)))
        self.assertEqual(0, policy(self.engine, counted).remaining_runs)

    def test_sleeps_until_the_earliest_due_time(self):
        self.flags(scan_interval=60, group='engine')
        self.assertEqual(60, self.service.tick_once(self.context))
        add_policies(self.engine, 1, next_execution_time=(
            timeutils.utcnow(True) + datetime.timedelta(seconds=30)))
        delay = self.service.tick_once(self.context)
        # Seconds went by between the insert and the tick's own clock: a
        # loaded machine can take several, so the margin is wide.
        self.assertGreater(delay, 20)
        self.assertLessEqual(delay, 30)

    def test_service_row(self):
        registration = servicegroup.ServiceRegistration(
            self.conf, self.context, 'dbaas-scheduler-engine', 'topic')
        registration.heartbeat()
        [row] = db_services.list_services(self.context)
        self.assertEqual((registration.service_id, self.conf.host,
                          'dbaas-scheduler-engine'),
                         (row.id, row.host, row.binary))
        now = timeutils.utcnow(True)
        self.assertTrue(servicegroup.is_up(row, now, 60))
        self.assertFalse(servicegroup.is_up(
            row, now + datetime.timedelta(seconds=61), 60))
        # Expired by another engine's sweep while this one was away: the
        # next heartbeat registers it again.
        db_services.delete_expired_services(
            self.context, now + datetime.timedelta(seconds=1))
        self.assertEqual([], db_services.list_services(self.context))
        registration.heartbeat()
        self.assertEqual(1, len(db_services.list_services(self.context)))
        registration.unregister()
        self.assertEqual([], db_services.list_services(self.context))


class TestEngineSQLite(_EngineTests, base.TestCase):
    DRIVER = 'sqlite'


class TestEngineMySQL(_EngineTests, base.TestCase):
    DRIVER = 'mysql'


class TestEnginePostgreSQL(_EngineTests, base.TestCase):
    DRIVER = 'postgresql'
