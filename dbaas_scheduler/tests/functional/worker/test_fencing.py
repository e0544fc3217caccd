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
"""Claims, fencing, compensation, reconciliation and overlap liveness.

The worker in this process, on each database, against a fake Trove; the
runner, poller and reconciler are driven step by step, and a second
"worker" is a second runner with its own owner id.
"""

import datetime
import threading
import time
from unittest import mock

import fixtures
from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import leases as db_leases
from dbaas_scheduler.db import models
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import stats
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.worker import test_worker
from dbaas_scheduler.worker import lifecycle
from dbaas_scheduler.worker import reconciler

PROJECT = 'project-a'
EXECUTIONS = models.BackupExecution.__table__


class _FencingTests(test_worker.WorkerMixin):

    def setUp(self):
        super().setUp()
        self.reconciler = reconciler.Reconciler(self.conf)

    def needs_concurrency(self):
        if self.DRIVER == 'sqlite':
            self.skipTest('the in-memory SQLite test database is a single '
                          'connection shared by every thread')

    def add_policy(self, instance_id=None, **values):
        row = dict(name=db_fixtures.policy_name(self), project_id=PROJECT,
                   instance_id=instance_id or self.trove.add_instance(),
                   schedule_type='cron', schedule='30 2 * * *',
                   timezone='UTC', next_execution_time=timeutils.utcnow(True)
                   + datetime.timedelta(days=1))
        row.update(values)
        return db_api.create_policy(self.context, row)

    def add_execution(self, policy, minutes=0, **values):
        row = dict(policy_id=policy.id, project_id=policy.project_id,
                   instance_id=policy.instance_id, status='DISPATCHED',
                   scheduled_at=timeutils.utcnow(True)
                   - datetime.timedelta(minutes=minutes))
        row.update(values)
        return db_api.create_execution(self.context, row)

    def execution(self, execution_id):
        return db_api.get_execution(self.context, execution_id)

    def expire_lease(self, execution_id):
        with self.engine.begin() as connection:
            connection.execute(
                EXECUTIONS.update().where(EXECUTIONS.c.id == execution_id)
                .values(lease_expires_at=timeutils.utcnow(True)
                        - datetime.timedelta(seconds=1)))

    def tagged_backup(self, policy, execution_id, **behaviour):
        return self.trove.add_backup(
            PROJECT, policy.instance_id,
            description='Backup. ' + backends.execution_tag(execution_id),
            **behaviour)

    def retained(self, instance_id):
        return sorted(b['id'] for b in self.trove.backups(PROJECT)
                      if b['instance_id'] == instance_id)

    def reconcile_now(self, instance_id, policy_id):
        now = timeutils.utcnow(True)
        db_reconciliation.schedule(
            self.context, db_reconciliation.InstanceToReconcile(
                instance_id, policy_id, now - datetime.timedelta(seconds=1),
                now + datetime.timedelta(hours=1)))
        return self.reconciler.run_pass(self.context)

    # Fencing ---------------------------------------------------------

    def test_a_superseded_claim_of_the_same_worker_records_nothing(self):
        # Two threads of one process: the first claim's lease expired and
        # the same worker claimed the execution again.  The owner is the
        # same; only the claim id tells them apart.
        policy = self.add_policy()
        execution = self.add_execution(policy)
        owner, now = self.runner.owner, timeutils.utcnow(True)
        self.assertEqual([execution.id], db_worker.claim_executions(
            self.context, [execution.id], owner, 'claim-1', now, 60))
        self.expire_lease(execution.id)
        self.assertEqual([execution.id], db_worker.claim_executions(
            self.context, [execution.id], owner, 'claim-2', now, 60))
        recorder = self.runner.recorder
        self.assertFalse(recorder.record(execution.id, 'claim-1', 'b-1'))
        self.assertEqual(set(), db_leases.renew_leases(
            self.context, {execution.id: 'claim-1'}, now, 60))
        self.assertFalse(db_worker.finish_execution(
            self.context, execution.id, 'claim-1', 'FAILED', now))
        self.assertTrue(recorder.record(execution.id, 'claim-2', 'b-2'))
        # A recorded backup id is never replaced, even by its own claim.
        self.assertFalse(recorder.record(execution.id, 'claim-2', 'b-3'))
        done = self.execution(execution.id)
        self.assertEqual(('RUNNING', 'b-2', 2),
                         (done.status, done.backup_id, done.attempts))

    def test_a_claim_superseded_while_waiting_creates_nothing(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        stale = self.new_runner()
        [(claimed, _)] = self._claim(stale, execution)
        # It waited for its thread longer than its lease; another worker
        # claimed the execution meanwhile (and has not created anything
        # yet, so there is no backup to find by its tag).
        self.expire_lease(execution.id)
        self._claim(self.new_runner(), execution)
        self.assertEqual(lifecycle.LOST,
                         stale.start(self.context, claimed, policy))
        self.assertEqual(0, self.trove.create_count(policy.instance_id))
        self.assertEqual({}, stale.keeper.claims())

    def _renewals(self):
        return self.useFixture(fixtures.MockPatchObject(
            lifecycle.db_leases, 'renew_leases',
            wraps=db_leases.renew_leases)).mock

    def test_a_fresh_claim_creates_without_a_renewal_of_its_own(self):
        # The claim was written a moment ago: its lease is whole, and a
        # renewal before the create would learn nothing.
        policy = self.add_policy()
        execution = self.add_execution(policy)
        renewals = self._renewals()
        self.assertEqual([execution.id],
                         self.runner.run(self.context, [execution.id]))
        renewals.assert_not_called()
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        self.assertIsNotNone(self.execution(execution.id).backup_id)

    def test_a_database_outage_while_starting_is_not_a_failed_run(self):
        # The writer address moved, or the database restarted, between the
        # claim and the create: the run is given back, not FAILED, and the
        # next claim makes its backup.
        policy = self.add_policy()
        execution = self.add_execution(policy)
        away = db_exc.DBConnectionError(Exception('Lost connection'))
        with mock.patch.object(lifecycle.loader, 'get_backend',
                               autospec=True, side_effect=away):
            self.runner.run(self.context, [execution.id])
        row = self.execution(execution.id)
        self.assertEqual('PENDING', row.status)
        self.assertIn('database was unreachable', row.status_reason)
        self.assertIsNotNone(row.next_attempt_at)
        self.assertEqual({}, self.runner.keeper.claims())
        with self.engine.begin() as connection:
            connection.execute(EXECUTIONS.update().values(
                next_attempt_at=None))
        self.assertEqual([execution.id],
                         self.runner.run(self.context, [execution.id]))
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        self.assertEqual('RUNNING', self.execution(execution.id).status)

    def test_a_claim_older_than_a_moment_is_renewed_before_its_create(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.runner.fresh_claim = 0
        renewals = self._renewals()
        self.runner.run(self.context, [execution.id])
        renewals.assert_called_once_with(
            self.context, {execution.id: mock.ANY}, mock.ANY,
            self.conf.worker.lease_duration)
        self.assertEqual(1, self.trove.create_count(policy.instance_id))

    def test_a_claim_taken_within_the_moment_records_nothing(self):
        # The one case a renewal would have caught: the claim superseded
        # within the moment after it was written.  The create happens;
        # the fenced record refuses its id, and the claim that took over
        # keeps the execution.
        policy = self.add_policy()
        execution = self.add_execution(policy)
        stale = self.new_runner()
        [(claimed, _)] = self._claim(stale, execution)
        self.expire_lease(execution.id)
        self._claim(self.new_runner(), execution)
        self.assertEqual(lifecycle.LOST, stale.start(
            self.context, claimed, policy,
            fresh_until=time.monotonic() + 60))
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        self.assertIsNone(self.execution(execution.id).backup_id)
        self.assertEqual({}, stale.keeper.claims())

    def _claim(self, runner, execution):
        claim_id = uuidutils.generate_uuid()
        db_worker.claim_executions(self.context, [execution.id],
                                   runner.owner, claim_id,
                                   timeutils.utcnow(True), 60)
        runner.keeper.hold({execution.id: claim_id})
        return db_worker.get_executions_and_policies(self.context,
                                                     [execution.id])

    def test_a_renewal_counts_the_claims_taken_over(self):
        stats.REGISTRY.reset()
        self.addCleanup(stats.REGISTRY.reset)
        policy = self.add_policy()
        taken = self.add_execution(policy, minutes=1)
        finished = self.add_execution(policy, minutes=2)
        kept = self.add_execution(policy, minutes=3)
        for execution in (taken, finished, kept):
            self._claim(self.runner, execution)
        # Its lease expired and another worker claimed it; another
        # finished under its claim (the renewal may miss it first).
        self.expire_lease(taken.id)
        self._claim(self.new_runner(), taken)
        claim_id = self.runner.keeper.claims()[finished.id]
        self.assertTrue(db_worker.finish_execution(
            self.context, finished.id, claim_id, 'SUCCEEDED',
            timeutils.utcnow(True)))
        self.assertEqual((1, 2), self.runner.keeper.renew(self.context))
        self.assertEqual(1, stats.LEASE_RENEWALS_LOST.value())
        self.assertEqual([kept.id], list(self.runner.keeper.claims()))

    def test_leases_are_renewed_only_for_claims_held(self):
        policy = self.add_policy()
        mine = self.add_execution(policy, minutes=1)
        other = self.add_execution(policy, minutes=2)
        self._claim(self.runner, mine)
        stranger = self.new_runner()
        self._claim(stranger, other)
        before = self.execution(other.id).lease_expires_at
        self.assertEqual((1, 0), self.runner.keeper.renew(self.context))
        self.assertEqual(before, self.execution(other.id).lease_expires_at)
        # Given up on a graceful stop: the sweep hands it over at once.
        self.assertEqual([mine.id],
                         self.runner.keeper.release_all(self.context))
        self.assertLessEqual(self.execution(mine.id).lease_expires_at,
                             timeutils.utcnow(True))
        self.assertGreater(self.execution(other.id).lease_expires_at,
                           timeutils.utcnow(True))

    def test_renewal_does_not_wait_for_another_workers_transaction(self):
        # A stalled worker (paused in the middle of a transaction) holds
        # locks on its own rows; another worker's renewal must not need
        # them.  It used to scan every RUNNING row and, on MariaDB, wait
        # for each lock it met.
        self.needs_concurrency()
        policy = self.add_policy()
        stalled, live = self.new_runner(), self.new_runner()
        for number in range(20):
            for runner in (stalled, live):
                self._claim(runner, self.add_execution(
                    policy, minutes=number * 2 + (runner is live)))
        answer = {}
        with self.engine.connect() as connection:
            transaction = connection.begin()
            # What the stalled worker's own renewal does.
            for execution_id in stalled.keeper.claims():
                connection.execute(
                    EXECUTIONS.update()
                    .where(EXECUTIONS.c.id == execution_id)
                    .values(lease_expires_at=timeutils.utcnow(True)))
            thread = threading.Thread(target=lambda: answer.update(
                renewed=live.keeper.renew(dbaas_context.get_admin_context()),
                seconds=time.monotonic() - started))
            started = time.monotonic()
            thread.start()
            thread.join(10)
            blocked = thread.is_alive()
            transaction.rollback()
        thread.join(60)
        self.assertFalse(blocked, 'the renewal waited for another worker\'s '
                                  'locks')
        self.assertEqual((20, 0), answer['renewed'])
        self.assertLess(answer['seconds'], 10)

    # Compensation ----------------------------------------------------

    def test_a_backup_made_under_a_lost_claim_is_deleted(self):
        self.needs_concurrency()
        policy = self.add_policy()
        execution = self.add_execution(policy)
        first, second = self.new_runner(), self.new_runner()
        # The first worker's create lands at Trove late; meanwhile its
        # lease expires and the second worker starts the execution.
        self.trove.inject_delay(2, count=1, operation=fake_trove.BACKUP_CREATE)
        thread = threading.Thread(target=first.run, args=(
            dbaas_context.get_admin_context(), [execution.id]))
        thread.start()
        self.assertTrue(process_fixtures.wait_until(
            lambda: self._creates_sent() == 1, 10))
        self.expire_lease(execution.id)
        self.assertEqual([execution.id],
                         second.run(self.context, [execution.id]))
        thread.join(30)
        done = self.execution(execution.id)
        history = {record.id: record for record in self.trove.history()}
        self.assertEqual(2, len(history))
        [late] = [backup_id for backup_id in history
                  if backup_id != done.backup_id]
        self.assertEqual([done.backup_id],
                         self.retained(policy.instance_id))
        self.assertIsNotNone(history[late].deleted)
        [entry] = done.deleted_backups
        self.assertEqual((late, 'duplicate'), (entry['id'], entry['reason']))
        self.assertEqual(0, first.compensator.pending())
        # Its instance is queued for reconciliation, in case the worker had
        # died before it could delete the backup.
        self.assertEqual(1, db_reconciliation.count_queued(self.context))

    def _creates_sent(self):
        return len([r for r in self.trove.requests
                    if r.method == 'POST' and r.path.endswith('/backups')])

    def test_a_running_backup_is_deleted_once_it_has_finished(self):
        instance = self.trove.add_instance(build_seconds=1)
        policy = self.add_policy(instance)
        execution = self.add_execution(policy, status='RUNNING',
                                       backup_id='recorded', claim_id='c-2')
        stray_id = self.tagged_backup(policy, execution.id, build_seconds=1)
        stray = self.trove.backups(PROJECT)[0]
        self.runner.compensator.claim_lost(
            self.context, execution, policy, backends.Backup(
                stray_id, instance, stray['status']))
        self.assertEqual(1, self.runner.compensator.pending())
        time.sleep(1.1)
        self.assertEqual(0, self.runner.compensator.run_pass(self.context))
        self.assertEqual([], self.retained(instance))
        [entry] = self.execution(execution.id).deleted_backups
        self.assertEqual((stray_id, 'duplicate'),
                         (entry['id'], entry['reason']))

    def test_a_backup_the_new_claim_recorded_is_kept(self):
        policy = self.add_policy()
        execution = self.add_execution(policy, status='RUNNING',
                                       claim_id='c-2')
        backup_id = self.tagged_backup(policy, execution.id)
        with self.engine.begin() as connection:
            connection.execute(
                EXECUTIONS.update().where(EXECUTIONS.c.id == execution.id)
                .values(backup_id=backup_id))
        self.runner.compensator.claim_lost(
            self.context, execution, policy,
            backends.Backup(backup_id, policy.instance_id, 'COMPLETED'))
        self.assertEqual(0, self.runner.compensator.pending())
        self.assertEqual([backup_id], self.retained(policy.instance_id))

    # Reconciliation --------------------------------------------------

    def test_reconciliation_deletes_only_extra_backups_of_ours(self):
        instance = self.trove.add_instance()
        policy = self.add_policy(instance)
        succeeded = self.add_execution(policy, minutes=5, status='SUCCEEDED',
                                       backup_id='placeholder')
        recorded = self.tagged_backup(policy, succeeded.id)
        with self.engine.begin() as connection:
            connection.execute(
                EXECUTIONS.update().where(EXECUTIONS.c.id == succeeded.id)
                .values(backup_id=recorded))
        duplicate = self.tagged_backup(policy, succeeded.id)
        skipped = self.add_execution(policy, minutes=4, status='SKIPPED')
        orphan_of_skipped = self.tagged_backup(policy, skipped.id)
        failed = self.add_execution(policy, minutes=3, status='FAILED')
        orphan_of_failed = self.tagged_backup(policy, failed.id)
        running = self.add_execution(policy, minutes=2, status='RUNNING',
                                     owner='w', claim_id='c')
        # Its worker may still find and record it.
        undecided = self.tagged_backup(policy, running.id)
        # Not ours: made by hand, or by another deployment.
        by_hand = self.trove.add_backup(PROJECT, instance,
                                        description='my own')
        foreign = self.tagged_backup(policy, uuidutils.generate_uuid())
        totals = self.reconcile_now(instance, policy.id)
        self.assertEqual((1, 2), (totals['duplicate'], totals['orphan']))
        self.assertEqual(sorted([recorded, undecided, by_hand, foreign]),
                         self.retained(instance))
        entries = {e.id: self.execution(e.id).deleted_backups
                   for e in (succeeded, skipped, failed, running)}
        self.assertEqual(
            {succeeded.id: [(duplicate, 'duplicate')],
             skipped.id: [(orphan_of_skipped, 'orphan')],
             failed.id: [(orphan_of_failed, 'orphan')], running.id: []},
            {key: [(entry['id'], entry['reason']) for entry in value or ()]
             for key, value in entries.items()})
        # Done for now; queued again for the rest of the window.
        self.assertEqual(0, self.reconciler.run_pass(
            self.context)['instances'])
        self.assertEqual(1, db_reconciliation.count_queued(self.context))

    def test_reconciliation_keeps_a_stray_another_backup_builds_on(self):
        # Trove bases an incremental backup on the instance's latest one,
        # whoever made it; deleting the parent would delete the child.
        instance = self.trove.add_instance()
        policy = self.add_policy(instance)
        skipped = self.add_execution(policy, minutes=2, status='SKIPPED')
        stray = self.tagged_backup(policy, skipped.id)
        later = self.add_execution(policy, status='SUCCEEDED')
        child = self.trove.add_backup(
            PROJECT, instance, parent_id=stray,
            description=backends.execution_tag(later.id))
        with self.engine.begin() as connection:
            connection.execute(
                EXECUTIONS.update().where(EXECUTIONS.c.id == later.id)
                .values(backup_id=child))
        totals = self.reconcile_now(instance, policy.id)
        self.assertEqual((0, 1), (totals['orphan'], totals['kept']))
        self.assertEqual(sorted([stray, child]), self.retained(instance))

    def test_reconciliation_waits_for_a_backup_being_made(self):
        self.flags(reconcile_interval=1, group='worker')
        # The first pass must come while the backup builds: 5 s leaves a
        # loaded machine room.
        instance = self.trove.add_instance(build_seconds=5)
        policy = self.add_policy(instance)
        skipped = self.add_execution(policy, status='SKIPPED')
        stray = self.tagged_backup(policy, skipped.id, build_seconds=5)
        totals = self.reconcile_now(instance, policy.id)
        self.assertEqual((1, 0), (totals['waiting'], totals['orphan']))
        self.assertEqual([stray], self.retained(instance))
        time.sleep(5.2)
        totals = self.reconciler.run_pass(self.context)
        self.assertEqual((0, 1), (totals['waiting'], totals['orphan']))
        self.assertEqual([], self.retained(instance))

    def test_a_finished_execution_queues_its_instance(self):
        self.flags(reconcile_interval=60, reconcile_window=600,
                   group='worker')
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.runner.run(self.context, [execution.id])
        self.assertEqual(0, db_reconciliation.count_queued(self.context))
        before = timeutils.utcnow(True)
        self.poller.run_pass(self.context)
        self.assertEqual('SUCCEEDED', self.execution(execution.id).status)
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(
                models.BackupReconciliation.__table__)).one()
        self.assertEqual((policy.instance_id, policy.id),
                         (row.instance_id, row.policy_id))
        self.assertGreaterEqual(row.due_at.replace(tzinfo=None),
                                (before + datetime.timedelta(seconds=60))
                                .replace(tzinfo=None))
        # A second execution of the instance keeps the earlier pass.
        later = timeutils.utcnow(True) + datetime.timedelta(hours=1)
        db_reconciliation.schedule(
            self.context, db_reconciliation.InstanceToReconcile(
                policy.instance_id, policy.id, later, later))
        with self.engine.connect() as connection:
            again = connection.execute(sa.select(
                models.BackupReconciliation.__table__)).one()
        self.assertEqual(row.due_at, again.due_at)
        self.assertEqual(later.replace(tzinfo=None),
                         again.until.replace(tzinfo=None))

    # Overlap ----------------------------------------------------------

    def _register(self, service_id, heartbeat_age=0):
        now = timeutils.utcnow(True)
        db_services.register_service(self.context, {
            'id': service_id, 'host': 'elsewhere',
            'binary': 'dbaas-scheduler-worker', 'pid': 1, 'started_at': now,
            'heartbeat_at': now - datetime.timedelta(seconds=heartbeat_age)})

    def _running_elsewhere(self, policy, backup_id=None, owner='w-1'):
        return self.add_execution(
            policy, minutes=1, status='RUNNING', owner=owner,
            claim_id='c-1', backup_id=backup_id,
            lease_expires_at=timeutils.utcnow(True)
            + datetime.timedelta(minutes=5))

    def test_overlap_with_a_live_worker_and_a_running_backup(self):
        instance = self.trove.add_instance()
        policy = self.add_policy(instance)
        backup_id = self.trove.add_backup(PROJECT, instance,
                                          build_seconds=3600)
        self._register('w-1')
        first = self._running_elsewhere(policy, backup_id)
        second = self.add_execution(policy)
        self.runner.run(self.context, [second.id])
        self.assertEqual('SKIPPED', self.execution(second.id).status)
        self.assertEqual('w-1', self.execution(first.id).owner)

    def test_overlap_with_a_backup_finished_at_the_backend(self):
        instance = self.trove.add_instance()
        policy = self.add_policy(instance)
        backup_id = self.trove.add_backup(PROJECT, instance)
        self._register('w-1')
        first = self._running_elsewhere(policy, backup_id)
        second = self.add_execution(policy)
        self.runner.run(self.context, [second.id])
        self.assertEqual('RUNNING', self.execution(second.id).status)
        self.assertIsNotNone(self.execution(second.id).backup_id)
        # Its live worker finishes it.
        self.assertEqual(('RUNNING', 'w-1'),
                         (self.execution(first.id).status,
                          self.execution(first.id).owner))

    def test_overlap_with_a_dead_worker_whose_backup_finished(self):
        instance = self.trove.add_instance()
        policy = self.add_policy(instance)
        backup_id = self.trove.add_backup(PROJECT, instance)
        self._register('w-1', heartbeat_age=3600)
        first = self._running_elsewhere(policy, backup_id)
        second = self.add_execution(policy)
        self.runner.run(self.context, [second.id])
        self.assertEqual('RUNNING', self.execution(second.id).status)
        taken = self.execution(first.id)
        self.assertEqual((self.runner.owner, 1, 'c-1'),
                         (taken.owner, taken.attempts,
                          first.claim_id))
        self.assertNotEqual('c-1', taken.claim_id)
        self.poller.run_pass(self.context)
        self.assertEqual('SUCCEEDED', self.execution(first.id).status)
        self.assertEqual(backup_id, self.execution(first.id).backup_id)

    def test_overlap_with_a_dead_worker_that_had_not_started(self):
        instance = self.trove.add_instance(build_seconds=3600)
        policy = self.add_policy(instance)
        # No service row at all: its worker is gone.
        first = self._running_elsewhere(policy)
        second = self.add_execution(policy)
        self.runner.run(self.context, [second.id])
        # The earlier one is resumed first: it runs, the later one yields.
        resumed = self.execution(first.id)
        self.assertEqual(('RUNNING', self.runner.owner),
                         (resumed.status, resumed.owner))
        self.assertIsNotNone(resumed.backup_id)
        skipped = self.execution(second.id)
        self.assertEqual('SKIPPED', skipped.status)
        self.assertIn(first.id, skipped.status_reason)
        self.assertEqual(1, self.trove.create_count(instance))

    def test_claim_and_load_returns_exactly_what_it_claimed(self):
        # On PostgreSQL one UPDATE ... RETURNING: the rows returned must
        # be those this claim changed, as the SELECT by claim id read.
        policy = self.add_policy()
        free = self.add_execution(policy, minutes=1)
        queued = self.add_execution(policy, minutes=2, status='PENDING',
                                    status_reason='queued: behind x')
        held = self.add_execution(policy, minutes=3)
        finished = self.add_execution(policy, minutes=4, status='SUCCEEDED')
        later = self.add_execution(
            policy, minutes=5, status='PENDING',
            next_attempt_at=timeutils.utcnow(True)
            + datetime.timedelta(hours=1))
        now = timeutils.utcnow(True)
        [taken] = db_worker.claim_executions(
            self.context, [held.id], 'other-worker', 'other-claim', now, 60)
        ids = [free.id, queued.id, held.id, finished.id, later.id,
               'no-such-execution']
        claimed = db_worker.claim_and_load(
            self.context, ids, 'w-0', 'claim-1', now, 60)
        self.assertEqual({free.id, queued.id}, set(claimed.ids))
        self.assertEqual(sorted(claimed.ids),
                         sorted(e.id for e, _ in claimed.rows))
        for execution, loaded_policy in claimed.rows:
            self.assertEqual(('RUNNING', 'w-0', 'claim-1', 1),
                             (execution.status, execution.owner,
                              execution.claim_id, execution.attempts))
            self.assertEqual(now + datetime.timedelta(seconds=60),
                             execution.lease_expires_at)
            self.assertEqual(now, execution.started_at)
            self.assertIsNone(execution.status_reason)
            self.assertEqual((policy.id, policy.backend),
                             (loaded_policy.id, loaded_policy.backend))
        # What the claim returned is what the database holds.
        self.assertEqual('claim-1', self.execution(queued.id).claim_id)
        self.assertEqual('other-claim', self.execution(held.id).claim_id)
        self.assertEqual('SUCCEEDED', self.execution(finished.id).status)
        self.assertEqual('PENDING', self.execution(later.id).status)
        # The same message again (a second cast) claims nothing.
        again = db_worker.claim_and_load(
            self.context, ids, 'w-1', 'claim-2', now, 60)
        self.assertEqual(([], [], {}), tuple(again))
        # The executions of one instance running, this claim's included,
        # that go first: the earlier slots, oldest first.
        self.assertEqual([held.id, queued.id], [
            blocker.id for blocker in claimed.overlaps[free.id]])
        self.assertEqual([held.id], [
            blocker.id for blocker in claimed.overlaps[queued.id]])


class TestFencingSQLite(_FencingTests, base.TestCase):
    DRIVER = 'sqlite'


class TestFencingMySQL(_FencingTests, base.TestCase):
    DRIVER = 'mysql'


class TestFencingPostgreSQL(_FencingTests, base.TestCase):
    DRIVER = 'postgresql'
