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
"""The worker in this process, on each database, against a fake Trove.

The Trove backend talks real HTTP to ``fake_trove``; the worker's runner
and poller are driven step by step, so that each test can stop at the
moment it is about (a duplicate message, a crash, a timeout).
"""

import datetime
import threading
import time
import zoneinfo

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import notifications
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests import notification_fixtures
from dbaas_scheduler.worker import backend_calls
from dbaas_scheduler.worker import backup_request
from dbaas_scheduler.worker import recorder as recorder_module
from dbaas_scheduler.worker import service as worker_service

UTC = datetime.timezone.utc
PROJECT = 'project-a'


class WorkerMixin(db_fixtures.DatabaseMixin):
    """A worker's runner and poller in this process, on the fake Trove."""

    def setUp(self):
        super().setUp()
        self.trove = self.useFixture(fake_trove.FakeTrove())
        self.flags(group='trove', endpoint_override=self.trove.url)
        self.flags(group='service_credentials', auth_type='none')
        self.flags(group='worker', retry_initial_delay=0.01,
                   retry_max_delay=0.05, max_attempts=3)
        self.addCleanup(loader.reset)
        self.addCleanup(notifications.reset)
        self.context = dbaas_context.get_admin_context()
        parts = self.new_parts()
        self.runner, self.poller = parts.runner, parts.poller

    def new_parts(self):
        parts = worker_service.build_parts(self.conf,
                                           uuidutils.generate_uuid())
        self.addCleanup(parts.close)
        return parts

    def new_runner(self):
        return self.new_parts().runner


class _WorkerTests(WorkerMixin):

    def add_policy(self, instance_id=None, **values):
        instance_id = instance_id or self.trove.add_instance()
        row = dict(name=db_fixtures.policy_name(self), project_id=PROJECT,
                   instance_id=instance_id, schedule_type='cron',
                   schedule='30 2 * * *', timezone='Europe/Berlin',
                   next_execution_time=timeutils.utcnow(True)
                   + datetime.timedelta(days=1))
        row.update(values)
        return db_api.create_policy(self.context, row)

    def add_execution(self, policy, scheduled_at=None, **values):
        row = dict(policy_id=policy.id, project_id=policy.project_id,
                   instance_id=policy.instance_id,
                   scheduled_at=scheduled_at or timeutils.utcnow(True),
                   status='DISPATCHED')
        row.update(values)
        return db_api.create_execution(self.context, row)

    def execution(self, execution_id):
        return db_api.get_execution(self.context, execution_id)

    def creates(self):
        return [r for r in self.trove.requests
                if r.method == 'POST' and r.path.endswith('/backups')]

    def test_one_backup_to_success(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.assertEqual([execution.id],
                         self.runner.run(self.context, [execution.id]))
        running = self.execution(execution.id)
        self.assertEqual(('RUNNING', self.runner.owner, 1),
                         (running.status, running.owner, running.attempts))
        self.assertIsNotNone(running.backup_id)
        self.assertIsNotNone(running.started_at)
        [create] = self.creates()
        backup = create.body['backup']
        self.assertEqual(policy.instance_id, backup['instance'])
        self.assertEqual(
            'nightly-%s' % execution.scheduled_at.strftime('%Y%m%dT%H%M%SZ'),
            backup['name'])
        self.assertIn(backends.execution_tag(execution.id),
                      backup['description'])

        self.assertEqual(1, self.poller.run_pass(self.context))
        done = self.execution(execution.id)
        self.assertEqual('SUCCEEDED', done.status)
        self.assertIsNotNone(done.finished_at)
        self.assertIsNone(done.lease_expires_at)
        self.assertEqual(0, self.poller.run_pass(self.context))

    def test_finished_executions_notify(self):
        recorder = self.useFixture(
            notification_fixtures.Recorder(self.conf))
        succeeding = self.add_execution(self.add_policy())
        failing = self.add_execution(self.add_policy(
            self.trove.add_instance(final_status='FAILED')))
        self.runner.run(self.context, [succeeding.id, failing.id])
        self.poller.run_pass(self.context)
        self.assertEqual(
            ['backup_execution.failed', 'backup_execution.succeeded',
             'dbaas_scheduler.execution.failed',
             'dbaas_scheduler.execution.succeeded'],
            sorted(recorder.event_types()))
        for message in recorder.messages():
            notification_fixtures.assert_matches_sample(self, message)
        [done] = recorder.messages('backup_execution.succeeded')
        data = done['payload'][notification_fixtures.WRAPPER + 'data']
        stored = self.execution(succeeding.id)
        self.assertEqual(
            (stored.id, 'SUCCEEDED', stored.backup_id, stored.policy_id),
            (data['id'], data['status'], data['backup_id'],
             data['policy_id']))
        [legacy] = recorder.messages('dbaas_scheduler.execution.succeeded')
        self.assertEqual(data, legacy['payload'])

    def test_the_same_message_twice_makes_one_backup(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.assertEqual([execution.id],
                         self.runner.run(self.context, [execution.id]))
        # Delivered again, to this worker and to another one.
        self.assertEqual([], self.runner.run(self.context, [execution.id]))
        self.assertEqual([], self.new_runner().run(self.context,
                                                   [execution.id]))
        self.assertEqual(1, self.trove.create_count(policy.instance_id))

    def test_concurrent_deliveries_make_one_backup(self):
        if self.DRIVER == 'sqlite':
            self.skipTest('the in-memory SQLite test database is a single '
                          'connection shared by every thread; concurrent '
                          'claims are tested on MariaDB and PostgreSQL')
        policy = self.add_policy()
        execution = self.add_execution(policy)
        runners = [self.new_runner() for _ in range(4)]
        claimed = []
        threads = [threading.Thread(target=lambda r=r: claimed.extend(
            r.run(dbaas_context.get_admin_context(), [execution.id])))
            for r in runners]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([execution.id], claimed)
        self.assertEqual(1, self.trove.create_count(policy.instance_id))

    def test_transient_errors_are_retried(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.trove.inject_failure(503, count=1,
                                  operation=fake_trove.BACKUP_CREATE)
        self.trove.inject_failure(422, count=1,
                                  operation=fake_trove.BACKUP_CREATE,
                                  message='Instance is busy.')
        self.runner.run(self.context, [execution.id])
        self.assertIsNotNone(self.execution(execution.id).backup_id)
        self.assertEqual(3, len(self.creates()))
        self.assertEqual(1, self.trove.create_count(policy.instance_id))

    def test_lost_answer_to_a_create_makes_no_second_backup(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        # Trove accepts the backup but the answer never arrives.
        serve = self.trove._create_backup

        def accept_then_drop(*args):
            serve(*args)
            raise fake_trove.TroveFault(503, 'Lost on the way back.')
        self.trove._create_backup = accept_then_drop
        self.runner.run(self.context, [execution.id])
        self.trove._create_backup = serve
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        running = self.execution(execution.id)
        self.assertEqual('RUNNING', running.status)
        [backup] = self.trove.backups(PROJECT)
        self.assertEqual(backup['id'], running.backup_id)

    def test_transient_errors_give_up_after_max_attempts(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.trove.inject_failure(503, count=None,
                                  operation=fake_trove.BACKUP_CREATE,
                                  message='Trove is overloaded.')
        self.runner.run(self.context, [execution.id])
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('gave up after 3 attempts', failed.fault)
        self.assertIn('Trove is overloaded.', failed.fault)
        self.assertEqual(3, len(self.creates()))

    def test_forbidden_is_not_retried(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.trove.inject_failure(403, operation=fake_trove.BACKUP_CREATE,
                                  message='Policy does not allow it.')
        self.runner.run(self.context, [execution.id])
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('Policy does not allow it.', failed.fault)
        self.assertEqual(1, len(self.creates()))
        self.assertTrue(db_api.get_policy(self.context, policy.id).enabled)

    def test_deleted_instance_disables_the_policy(self):
        policy = self.add_policy(instance_id=uuidutils.generate_uuid())
        execution = self.add_execution(policy)
        self.runner.run(self.context, [execution.id])
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('does not exist', failed.fault)
        disabled = db_api.get_policy(self.context, policy.id)
        self.assertFalse(disabled.enabled)
        self.assertIsNone(disabled.next_execution_time)
        self.assertEqual('instance %s no longer exists' % policy.instance_id,
                         disabled.paused_reason)
        self.assertEqual(0, self.trove.create_count(policy.instance_id))

    def test_backup_failing_at_trove(self):
        instance = self.trove.add_instance(final_status='FAILED')
        execution = self.add_execution(self.add_policy(instance))
        self.runner.run(self.context, [execution.id])
        self.poller.run_pass(self.context)
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('reports backup %s FAILED' % failed.backup_id,
                      failed.fault)

    def test_backup_taking_too_long_times_out(self):
        instance = self.trove.add_instance(build_seconds=3600)
        execution = self.add_execution(self.add_policy(instance))
        self.runner.run(self.context, [execution.id])
        self.poller.run_pass(self.context)
        self.assertEqual('RUNNING', self.execution(execution.id).status)
        self._started(execution.id, hours=7)
        self.poller.run_pass(self.context)
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('timed out', failed.fault)
        self.assertIn('backup_timeout', failed.fault)

    def _started(self, execution_id, hours):
        table = models.BackupExecution.__table__
        with self.engine.begin() as connection:
            connection.execute(
                table.update().where(table.c.id == execution_id).values(
                    started_at=timeutils.utcnow(True)
                    - datetime.timedelta(hours=hours)))

    def test_status_that_cannot_be_read_fails_the_execution(self):
        instance = self.trove.add_instance(build_seconds=3600)
        execution = self.add_execution(self.add_policy(instance))
        self.runner.run(self.context, [execution.id])
        self.trove.inject_failure(403, operation=fake_trove.BACKUP_SHOW,
                                  message='Not yours.')
        self.poller.run_pass(self.context)
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('cannot be read', failed.fault)
        self.assertIn('Not yours.', failed.fault)

    def test_backend_down_for_longer_than_the_timeout(self):
        instance = self.trove.add_instance(build_seconds=3600)
        execution = self.add_execution(self.add_policy(instance))
        self.runner.run(self.context, [execution.id])
        self.trove.inject_failure(503, count=None,
                                  operation=fake_trove.BACKUP_SHOW)
        self.poller.run_pass(self.context)
        self.assertEqual('RUNNING', self.execution(execution.id).status)
        self._started(execution.id, hours=7)
        self.poller.run_pass(self.context)
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('timed out', failed.fault)
        self.assertIn('the last check failed', failed.fault)

    def test_a_create_that_outlives_the_timeout_is_made_once(self):
        # Every create lands at Trove 2 s after it was sent, the client
        # gives up after 1 s: the worker waits for the tagged backup
        # instead of creating another.
        self.flags(group='service_credentials', timeout=1)
        self.flags(group='worker', max_attempts=5)
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.trove.inject_delay(2, operation=fake_trove.BACKUP_CREATE)
        self.runner.run(self.context, [execution.id])
        running = self.execution(execution.id)
        self.assertEqual('RUNNING', running.status)
        # Sent, not only landed: a second create would land after this.
        self.assertEqual(1, len(self.creates()))
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        [record] = self.trove.history()
        self.assertEqual(record.id, running.backup_id)

    def test_unexpected_error_at_start_fails_the_execution(self):
        execution = self.add_execution(self.add_policy())
        self.useFixture(fixtures.MockPatchObject(
            backend_calls, 'find_or_create_backup',
            side_effect=RuntimeError('bug')))
        self.runner.run(self.context, [execution.id])
        failed = self.execution(execution.id)
        self.assertEqual('FAILED', failed.status)
        self.assertEqual('internal error in the worker: RuntimeError: bug',
                         failed.fault)

    def test_the_lease_of_a_running_backup_is_renewed(self):
        instance = self.trove.add_instance(build_seconds=3600)
        execution = self.add_execution(self.add_policy(instance))
        self.runner.run(self.context, [execution.id])
        first = self.execution(execution.id).lease_expires_at
        self.assertEqual((1, 0), self.runner.keeper.renew(self.context))
        self.assertGreater(self.execution(execution.id).lease_expires_at,
                           first)
        # Once finished, it is no longer held.
        self.assertTrue(self.runner.outcome.finish(
            self.context, self.execution(execution.id), 'FAILED',
            fault='stopped by the test'))
        self.assertEqual({}, self.runner.keeper.claims())

    def test_overlap_skip(self):
        instance = self.trove.add_instance(build_seconds=3600)
        first = self.add_execution(self.add_policy(instance))
        second = self.add_execution(self.add_policy(instance))
        self.runner.run(self.context, [first.id])
        self.runner.run(self.context, [second.id])
        skipped = self.execution(second.id)
        self.assertEqual('SKIPPED', skipped.status)
        self.assertEqual('overlap: execution %s of the same instance is '
                         'still running' % first.id, skipped.status_reason)
        self.assertEqual(1, self.trove.create_count(instance))

    def test_overlap_queue(self):
        self.flags(queue_retry_interval=120, group='worker')
        instance = self.trove.add_instance(build_seconds=2)
        first = self.add_execution(self.add_policy(instance))
        second = self.add_execution(self.add_policy(
            instance, overlap_policy='queue'))
        self.runner.run(self.context, [first.id])
        before = timeutils.utcnow(True)
        self.runner.run(self.context, [second.id])
        queued = self.execution(second.id)
        self.assertEqual(('PENDING', None, None),
                         (queued.status, queued.owner, queued.started_at))
        self.assertTrue(queued.status_reason.startswith('queued: '))
        self.assertGreaterEqual(queued.next_attempt_at,
                                before + datetime.timedelta(seconds=120))
        # Not claimable before its time, even by a stray message.
        self.assertEqual([], self.runner.run(self.context, [second.id]))
        # Once the other backup is over, the queued one runs and no longer
        # says it is queued.
        time.sleep(2.2)
        self.poller.run_pass(self.context)
        self.assertEqual('SUCCEEDED', self.execution(first.id).status)
        table = models.BackupExecution.__table__
        with self.engine.begin() as connection:
            connection.execute(
                table.update().where(table.c.id == second.id).values(
                    next_attempt_at=timeutils.utcnow(True)))
        self.assertEqual([second.id],
                         self.runner.run(self.context, [second.id]))
        running = self.execution(second.id)
        self.assertEqual('RUNNING', running.status)
        self.assertIsNone(running.status_reason)

    def test_resume_after_a_crash_between_create_and_record(self):
        policy = self.add_policy()
        execution = self.add_execution(
            policy, status='RUNNING', owner='dead-worker', attempts=1,
            lease_expires_at=timeutils.utcnow(True)
            - datetime.timedelta(seconds=1))
        # The dead worker's POST reached Trove; its answer never came back.
        backup_id = self.trove.add_backup(
            PROJECT, policy.instance_id,
            description=backup_request.backup_description(policy, execution))
        self.assertEqual([execution.id],
                         self.runner.run(self.context, [execution.id]))
        self.assertEqual(backup_id, self.execution(execution.id).backup_id)
        self.assertEqual([], self.creates())
        self.poller.run_pass(self.context)
        self.assertEqual('SUCCEEDED', self.execution(execution.id).status)

    def test_resume_after_a_crash_while_the_backup_ran(self):
        policy = self.add_policy()
        first = self.new_runner()
        execution = self.add_execution(policy)
        first.run(self.context, [execution.id])
        before = self.execution(execution.id)
        backup_id = before.backup_id
        # The first worker dies; its lease runs out.
        self._expire_lease(execution.id)
        self.assertEqual([execution.id],
                         self.runner.run(self.context, [execution.id]))
        resumed = self.execution(execution.id)
        self.assertEqual((self.runner.owner, backup_id, 2),
                         (resumed.owner, resumed.backup_id,
                          resumed.attempts))
        self.poller.run_pass(self.context)
        self.assertEqual('SUCCEEDED', self.execution(execution.id).status)
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        # The old claim's late word is not recorded.
        self.assertFalse(first.outcome.finish(self.context, before,
                                              'FAILED', fault='late'))
        self.assertEqual('SUCCEEDED', self.execution(execution.id).status)

    def _expire_lease(self, execution_id):
        table = models.BackupExecution.__table__
        with self.engine.begin() as connection:
            connection.execute(
                table.update().where(table.c.id == execution_id).values(
                    lease_expires_at=timeutils.utcnow(True)
                    - datetime.timedelta(seconds=1)))

    def test_retention_over_a_simulated_year(self):
        # Deletes in the same pass (the grace is tested in
        # db/test_retention_holds.py).
        self.conf.set_override('retention_grace', 0, group='worker')
        berlin = zoneinfo.ZoneInfo('Europe/Berlin')
        policy = self.add_policy(keep_daily=7, keep_weekly=4,
                                 keep_monthly=12)
        today = timeutils.utcnow(True).astimezone(berlin).date()
        # A year of daily backups, 02:30 Berlin time, each with the
        # execution that made it; plus backups of the same instance that
        # this policy did not make.
        created = {}
        for days_ago in range(1, 366):
            day = today - datetime.timedelta(days=days_ago)
            at = datetime.datetime(day.year, day.month, day.day, 2, 30,
                                   tzinfo=berlin).astimezone(UTC)
            backup_id = self.trove.add_backup(PROJECT, policy.instance_id,
                                              created=at.timestamp())
            self.add_execution(policy, scheduled_at=at, status='SUCCEEDED',
                               backup_id=backup_id)
            created[backup_id] = day
        foreign = [self.trove.add_backup(
            PROJECT, policy.instance_id,
            created=(timeutils.utcnow(True) - datetime.timedelta(
                days=400 + n)).timestamp()) for n in range(3)]

        execution = self.add_execution(policy)
        self.runner.run(self.context, [execution.id])
        self.poller.run_pass(self.context)
        done = self.execution(execution.id)
        self.assertEqual('SUCCEEDED', done.status)

        days = sorted(created.values()) + [today]
        kept_days = set(days[-7:])                    # keep_daily 7
        weeks, months = {}, {}
        for day in days:                              # newest of each
            weeks[day.isocalendar()[:2]] = day
            months[(day.year, day.month)] = day
        kept_days |= set(sorted(weeks.values())[-4:])
        kept_days |= set(sorted(months.values())[-12:])
        remaining = {b['id'] for b in self.trove.backups(PROJECT)}
        self.assertEqual(set(), set(foreign) - remaining)
        self.assertIn(done.backup_id, remaining)
        kept = {created[b] for b in remaining if b in created}
        self.assertEqual(kept_days - {today}, kept)
        deleted = {entry['id'] for entry in done.deleted_backups}
        self.assertEqual(set(created) - remaining, deleted)
        self.assertEqual(365 + 1 - len(kept_days), len(deleted))

    def test_a_stopping_worker_ends_its_poll_pass_early(self):
        # Three backups of one project (asked for at once), and one of
        # another project's (checked by itself): the stop is seen before
        # each outcome.
        policies = [self.add_policy() for _ in range(3)]
        policies.append(self.add_policy(project_id='other-project'))
        executions = [self.add_execution(policy) for policy in policies]
        for execution in executions:
            self.runner.run(self.context, [execution.id])
        finished = []
        real_finish = self.poller.outcome.finish

        def finish(*args, **kwargs):
            finished.append(args[1].id)
            return real_finish(*args, **kwargs)

        self.useFixture(fixtures.MockPatchObject(
            self.poller.outcome, 'finish', side_effect=finish))
        # Stopping from the first outcome on.
        self.poller.stopping = lambda: bool(finished)
        self.poller.run_pass(self.context)
        statuses = [self.execution(e.id).status for e in executions]
        self.assertLessEqual(len(finished), 2, finished)
        self.assertEqual(len(finished), statuses.count('SUCCEEDED'))
        self.assertEqual(len(executions) - len(finished),
                         statuses.count('RUNNING'))
        # The next worker (or this one started again) finishes the rest.
        self.poller.stopping = lambda: False
        self.poller.run_pass(self.context)
        self.assertEqual(['SUCCEEDED'] * len(executions),
                         [self.execution(e.id).status for e in executions])

    def test_engine_note_survives_success(self):
        policy = self.add_policy()
        execution = self.add_execution(
            policy, status_reason='coalesced 2 missed runs since x')
        self.runner.run(self.context, [execution.id])
        self.poller.run_pass(self.context)
        done = self.execution(execution.id)
        self.assertEqual(('SUCCEEDED', 'coalesced 2 missed runs since x'),
                         (done.status, done.status_reason))

    def test_policy_deleted_while_the_backup_ran(self):
        instance = self.trove.add_instance(build_seconds=3600)
        policy = self.add_policy(instance)
        execution = self.add_execution(policy)
        self.runner.run(self.context, [execution.id])
        table = models.BackupPolicy.__table__
        with self.engine.begin() as connection:
            connection.execute(sa.delete(table).where(table.c.id == policy.id))
        # Resumed by another worker after a crash: not "before it started".
        self._expire_lease(execution.id)
        self.assertEqual([execution.id],
                         self.new_runner().run(self.context, [execution.id]))
        self.assertEqual('RUNNING', self.execution(execution.id).status)

    def _running_executions(self, owner, count, claim_id='claim-1'):
        policy = self.add_policy()
        start = timeutils.utcnow(True)
        return [self.add_execution(
            policy, scheduled_at=start + datetime.timedelta(minutes=n),
            status='RUNNING', owner=owner, claim_id=claim_id).id
            for n in range(count)]

    def test_backup_ids_recorded_together(self):
        recorder = self.runner.recorder
        mine = self._running_executions(self.runner.owner, 30)
        [lost] = self._running_executions(self.runner.owner, 1,
                                          claim_id='claim-2')
        answers = {}
        calls = []
        real = db_worker.record_backup_ids

        def counted(context, recorded):
            calls.append(len(recorded))
            return real(context, recorded)

        writer = recorder._writer
        real_writer = writer.record

        def counted_writer(recorded):
            # None: not on this database (SQLite), the session records.
            result = real_writer(recorded)
            if result is not None:
                calls.append(len(recorded))
            return result

        self.useFixture(fixtures.MockPatchObject(
            db_worker, 'record_backup_ids', counted))
        self.useFixture(fixtures.MockPatchObject(
            writer, 'record', counted_writer))
        # The last one was claimed again since (claim-2): claim-1 is gone.
        threads = [threading.Thread(
            target=lambda e=e: answers.__setitem__(
                e, recorder.record(e, 'claim-1', 'backup-' + e)))
            for e in mine + [lost]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        self.assertEqual(dict({e: True for e in mine}, **{lost: False}),
                         answers)
        for execution_id in mine:
            self.assertEqual('backup-' + execution_id,
                             self.execution(execution_id).backup_id)
        self.assertIsNone(self.execution(lost).backup_id)
        self.assertEqual(31, sum(calls))
        self.assertLessEqual(len(calls), 31)

    def test_backup_ids_recorded_alone_when_a_batch_fails(self):
        recorder = self.runner.recorder
        mine = self._running_executions(self.runner.owner, 3)
        self.useFixture(fixtures.MockPatchObject(
            recorder._writer, 'record',
            side_effect=RuntimeError('batch failed')))
        self.useFixture(fixtures.MockPatchObject(
            db_worker, 'record_backup_ids',
            side_effect=RuntimeError('batch failed')))
        items = [recorder_module._Pending(e, 'claim-1', 'backup-' + e)
                 for e in mine]
        recorder._commit(self.context, items)
        self.assertEqual([True] * 3, [item.recorded for item in items])
        self.assertTrue(all(item.done.is_set() for item in items))
        self.assertEqual('backup-' + mine[0],
                         self.execution(mine[0]).backup_id)

    def test_backup_id_error_reaches_the_caller(self):
        [execution_id] = self._running_executions(self.runner.owner, 1)
        self.useFixture(fixtures.MockPatchObject(
            self.runner.recorder._writer, 'record',
            side_effect=RuntimeError('database gone')))
        self.useFixture(fixtures.MockPatchObject(
            db_worker, 'record_backup_ids',
            side_effect=RuntimeError('database gone')))
        self.useFixture(fixtures.MockPatchObject(
            db_worker, 'record_backup_id',
            side_effect=RuntimeError('database gone')))
        self.assertRaisesRegex(RuntimeError, 'database gone',
                               self.runner.recorder.record, execution_id,
                               'claim-1', 'backup-1')

    def _kept_connection(self, writer):
        """The server's id of the connection ``writer`` keeps."""
        dbapi = writer._connection.dbapi_connection
        if self.DRIVER == 'postgresql':
            return dbapi.get_backend_pid()
        return dbapi.thread_id()

    def test_backup_id_writer_keeps_the_claims_conditions(self):
        if self.DRIVER == 'sqlite':
            self.skipTest('no kept connection on SQLite (the session '
                          'records)')
        writer = db_worker.BackupIdWriter()
        self.addCleanup(writer.close)
        mine = self._running_executions(self.runner.owner, 3)
        [lost] = self._running_executions(self.runner.owner, 1,
                                          claim_id='claim-2')
        [before] = self._running_executions(self.runner.owner, 1)
        self.assertEqual({before}, writer.record(
            [(before, 'claim-1', 'backup-before')]))
        first = self._kept_connection(writer)
        recorded = writer.record(
            [(e, 'claim-1', 'backup-' + e) for e in mine + [lost]]
            # Recorded already under this claim: counts as recorded.
            + [(before, 'claim-1', 'backup-before')])
        self.assertEqual(set(mine) | {before}, recorded)
        self.assertEqual(first, self._kept_connection(writer))
        self.assertIsNone(self.execution(lost).backup_id)
        # Never replaced, whoever asks.
        self.assertEqual(set(), writer.record(
            [(before, 'claim-1', 'backup-other')]))
        self.assertEqual('backup-before', self.execution(before).backup_id)
        # Committed: another connection sees every one.
        for execution_id in mine:
            self.assertEqual('backup-' + execution_id,
                             self.execution(execution_id).backup_id)

    def test_backup_ids_recorded_when_the_kept_connection_dies(self):
        if self.DRIVER == 'sqlite':
            self.skipTest('no kept connection on SQLite')
        recorder = self.runner.recorder
        first, second = self._running_executions(self.runner.owner, 2)
        self.assertTrue(recorder.record(first, 'claim-1', 'backup-1'))
        writer = recorder._writer
        killed = self._kept_connection(writer)
        with self.engine.connect() as connection:
            if self.DRIVER == 'postgresql':
                connection.execute(sa.text(
                    'SELECT pg_terminate_backend(:pid)'), {'pid': killed})
            else:
                connection.execute(sa.text('KILL %d' % killed))
        # The batch is recorded through the pool; the next one opens a
        # new kept connection.
        self.assertTrue(recorder.record(second, 'claim-1', 'backup-2'))
        self.assertEqual('backup-2', self.execution(second).backup_id)
        [third] = self._running_executions(self.runner.owner, 1)
        self.assertTrue(recorder.record(third, 'claim-1', 'backup-3'))
        self.assertNotEqual(killed, self._kept_connection(writer))
        recorder.stop()
        self.assertIsNone(writer._connection)

    def test_policy_deleted_before_the_run(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        table = models.BackupPolicy.__table__
        with self.engine.begin() as connection:
            connection.execute(sa.delete(table).where(table.c.id == policy.id))
        self.runner.run(self.context, [execution.id])
        skipped = self.execution(execution.id)
        self.assertEqual('SKIPPED', skipped.status)
        self.assertIn('policy was deleted', skipped.status_reason)


class TestWorkerSQLite(_WorkerTests, base.TestCase):
    DRIVER = 'sqlite'


class TestWorkerMySQL(_WorkerTests, base.TestCase):
    DRIVER = 'mysql'


class TestWorkerPostgreSQL(_WorkerTests, base.TestCase):
    DRIVER = 'postgresql'
