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
"""Scheduled verifications: due, once per slot, bounded, recorded, clean.

On each database of the service; the backups are real ``local`` dumps of
a SQLite database, made by the backend's own job.
"""

import datetime
import os
import sqlite3
import threading
import time

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils
from sqlalchemy import event as sa_event

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.backends.local import files
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler.db import verifications as db_verifications
from dbaas_scheduler.engine import sweeps
from dbaas_scheduler import schedule
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.worker import retention
from dbaas_scheduler.worker import verification

PROJECT = 'project-a'
INSTANCE = 'notes'


class _Casts:

    def __init__(self):
        self.cast = []

    def restore_backup(self, context, restore_id):
        self.cast.append(restore_id)


class _VerificationTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        temp = self.useFixture(fixtures.TempDir()).path
        self.source = os.path.join(temp, 'notes.db')
        connection = sqlite3.connect(self.source)
        with connection:
            connection.execute('CREATE TABLE note (id INTEGER PRIMARY KEY, '
                               'body TEXT)')
            connection.executemany('INSERT INTO note (body) VALUES (?)',
                                   [('one',), ('two',)])
        connection.close()
        self.restore_dir = os.path.join(temp, 'restores')
        self.flags(group='local_backend',
                   backup_dir=os.path.join(temp, 'backups'),
                   restore_dir=self.restore_dir,
                   instances={INSTANCE: 'sqlite:///' + self.source})
        self.flags(group='worker', retry_initial_delay=0.01,
                   retry_max_delay=0.05, max_attempts=2)
        loader.reset()
        self.addCleanup(loader.reset)
        self.context = dbaas_context.get_admin_context()
        self.policy = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self), project_id=PROJECT,
            instance_id=INSTANCE, backend='local', schedule_type='cron',
            schedule='30 2 * * *', timezone='UTC', enabled=False,
            paused_reason='created paused', verify_every=2,
            verify_check={'sql': 'SELECT COUNT(*) FROM note',
                          'expected': 2}))
        self.start = timeutils.utcnow(True) - datetime.timedelta(hours=10)
        self.executions = []
        self._last_slot = None
        self.dispatcher = verification.RestoreDispatcher(
            self.conf, uuidutils.generate_uuid())

    def _succeed(self, policy=None):
        policy = policy or self.policy
        backend = loader.get_backend(self.conf, 'local')
        created = backend.create_backup(policy, 'n', 'd')
        deadline = time.monotonic() + 60
        while not backend.get_backup(policy, created.id).finished:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        at = self.start + datetime.timedelta(minutes=len(self.executions))
        execution = db_api.create_execution(self.context, dict(
            policy_id=policy.id, project_id=policy.project_id,
            instance_id=INSTANCE, status='SUCCEEDED', backup_id=created.id,
            scheduled_at=at, started_at=at, finished_at=at))
        self.executions.append(execution)
        return execution

    def _due(self):
        return self._due_in(self.context)

    def _due_in(self, context):
        return db_verifications.create_due_verifications(
            context, timeutils.utcnow(True), schedule.next_verify_slot)

    def _on_schedule(self, expression='*/5 * * * *'):
        """The policy verifies on ``expression``; its slot came a minute ago.

        Returns that slot.
        """
        slot = (timeutils.utcnow(True) - datetime.timedelta(minutes=1)
                ).replace(microsecond=0)
        # A schedule's slots only move forward; two calls within one
        # second would otherwise give the slot already recorded, which
        # the unique (policy, slot) index rightly refuses.
        if self._last_slot is not None and slot <= self._last_slot:
            slot = self._last_slot + datetime.timedelta(seconds=1)
        self._last_slot = slot
        db_api.update_policy(self.context, self.policy.id, {
            'verify_every': None, 'verify_schedule': expression,
            'verify_next_at': slot})
        return slot

    def _race(self, work, count=2):
        """``work(context)`` in ``count`` threads at once; their results.

        On SQLite the tests' in-memory database shares one connection:
        two sweepers at once there are not a deployment, so they take
        turns.
        """
        if self.DRIVER == 'sqlite':
            return [work(self.context) for _ in range(count)]
        barrier = threading.Barrier(count)
        results = []

        def run():
            context = dbaas_context.get_admin_context()
            barrier.wait()
            results.append(work(context))

        threads = [threading.Thread(target=run) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return results

    def test_schedule_one_verification_per_slot_two_sweepers(self):
        self._succeed()
        newest = self._succeed()
        slot = self._on_schedule()
        created = [restore_id for result in self._race(self._due_in)
                   for restore_id in result]
        self.assertEqual(1, len(created))
        row = db_restores.get_restore(self.context, created[0])
        self.assertEqual((newest.id, slot),
                         (row.verify_slot, row.verify_scheduled_at))
        policy = db_api.get_policy(self.context, self.policy.id)
        self.assertGreater(policy.verify_next_at, timeutils.utcnow(True))
        # Two workers given the same verification: one runs it.
        results = self._race(lambda context: self.dispatcher.run(
            context, created[0]))
        self.assertEqual(['passed'], [r for r in results if r is not None])
        self.assertEqual('passed', db_api.get_execution(
            self.context, newest.id).verify_result)
        # The next slot: no backup newer than the one verified, it passes.
        self._on_schedule()
        self.assertEqual([], self._due())
        policy = db_api.get_policy(self.context, self.policy.id)
        self.assertGreater(policy.verify_next_at, timeutils.utcnow(True))
        # A new backup, and the slot after verifies it, once.
        later = self._succeed()
        later_slot = self._on_schedule()
        created = [restore_id for result in self._race(self._due_in)
                   for restore_id in result]
        self.assertEqual(1, len(created))
        row = db_restores.get_restore(self.context, created[0])
        self.assertEqual((later.id, later_slot),
                         (row.verify_slot, row.verify_scheduled_at))

    def test_a_slot_not_come_records_nothing(self):
        self._succeed()
        db_api.update_policy(self.context, self.policy.id, {
            'verify_every': None, 'verify_schedule': '0 4 * * *',
            'verify_next_at': timeutils.utcnow(True)
            + datetime.timedelta(minutes=5)})
        self.assertEqual([], self._due())

    def test_the_sweep_reads_every_policy_in_one_statement(self):
        for number in range(3):
            other = db_api.create_policy(self.context, dict(
                name=db_fixtures.policy_name(self) + '-%d' % number,
                project_id=PROJECT, instance_id=INSTANCE, backend='local',
                schedule_type='cron', schedule='30 2 * * *',
                timezone='UTC', enabled=False,
                paused_reason='created paused', verify_every=5))
            self._succeed(other)
        self._succeed()
        statements = []
        engine = db_api.get_engine()

        def count(conn, cursor, statement, *args):
            # Reads of the service's tables (not the pool's pings).
            if (statement.lstrip().upper().startswith('SELECT')
                    and 'backup_' in statement):
                statements.append(statement)

        sa_event.listen(engine, 'before_cursor_execute', count)
        try:
            self.assertEqual([], self._due())
        finally:
            sa_event.remove(engine, 'before_cursor_execute', count)
        self.assertEqual(1, len(statements), statements)

    def test_a_backup_deleted_by_retention_meanwhile_is_cancelled(self):
        now = timeutils.utcnow(True)
        self.flags(group='worker', retention_grace=0)
        db_api.update_policy(self.context, self.policy.id, {
            'verify_every': 1, 'keep_last': 1, 'rpo': 86400,
            'effective_rpo': 86400, 'last_success_at': now,
            'protected_until': now + datetime.timedelta(days=1),
            'protection': 'ok'})
        first = self._succeed()
        restore_id, = self._due()
        backend = loader.get_backend(self.conf, 'local')
        real_verify = backend.verify_backup

        def racing(policy, backup_id, check, scratch):
            # While the verification runs, the next backup succeeds and
            # its retention (keep_last 1) deletes the backup verified.
            second = self._succeed()
            retention.apply_retention(
                self.conf, self.context, second,
                db_api.get_policy(self.context, self.policy.id), backend)
            return real_verify(policy, backup_id, check, scratch)

        self.useFixture(fixtures.MockPatchObject(
            backend, 'verify_backup', side_effect=racing))
        self.assertEqual(verification.CANCELLED,
                         self.dispatcher.run(self.context, restore_id))
        restore = db_restores.get_restore(self.context, restore_id)
        self.assertEqual('CANCELLED', restore.status)
        self.assertIn('backup %s was deleted' % first.backup_id,
                      restore.status_reason)
        self.assertIsNotNone(restore.scratch_deleted_at)
        self.assertEqual('deleted', db_api.get_execution(
            self.context, first.id).backup_state)
        self.assertIsNone(db_api.get_execution(
            self.context, first.id).verify_result)
        policy = db_api.get_policy(self.context, self.policy.id)
        self.assertFalse(policy.verify_failing)
        self.assertEqual('ok', policy.protection)
        if os.path.exists(self.restore_dir):
            self.assertEqual([], os.listdir(self.restore_dir))

    def test_every_nth_success_once_per_slot(self):
        self._succeed()
        self.assertEqual([], self._due())
        second = self._succeed()
        due = self._due()
        self.assertEqual(1, len(due))
        # Again, or by a second engine: the slot has its verification.
        self.assertEqual([], self._due())
        row = db_restores.get_restore(self.context, due[0])
        self.assertEqual(('verify', second.id, second.backup_id),
                         (row.kind, row.verify_slot, row.backup_id))
        self._succeed()
        self.assertEqual([], self._due())
        self._succeed()
        self.assertEqual(1, len(self._due()))

    def test_the_sweep_records_and_casts_them(self):
        self._succeed()
        self._succeed()
        casts = _Casts()
        sweeps.record_due_verifications(self.context, timeutils.utcnow(True))
        sweeps.recast_restores(self.context, casts, self.conf,
                               timeutils.utcnow(True))
        self.assertEqual(1, len(casts.cast))

    def test_a_good_backup_passes_and_is_recorded(self):
        self._succeed()
        execution = self._succeed()
        restore_id, = self._due()
        self.assertEqual('passed', self.dispatcher.run(self.context,
                                                       restore_id))
        done = db_api.get_execution(self.context, execution.id)
        self.assertEqual('passed', done.verify_result)
        self.assertIsNone(done.verify_reason)
        self.assertIsNotNone(done.verified_at)
        self.assertGreaterEqual(done.verify_duration, 0.0)
        restore = db_restores.get_restore(self.context, restore_id)
        self.assertEqual(backends.scratch_name(restore_id),
                         restore.target_id)
        self.assertIsNotNone(restore.scratch_deleted_at)
        self.assertEqual((None, None),
                         (restore.region_slot, restore.project_slot))
        self.assertEqual([], os.listdir(self.restore_dir))
        # A redelivered message: nothing more.
        self.assertIsNone(self.dispatcher.run(self.context, restore_id))
        newest = db_verifications.newest_verified(self.context,
                                                  self.policy.id)
        self.assertEqual(execution.id, newest.id)

    def test_a_corrupt_backup_fails_and_puts_the_policy_at_risk(self):
        now = timeutils.utcnow(True)
        db_api.update_policy(self.context, self.policy.id, {
            'rpo': 86400, 'effective_rpo': 86400, 'last_success_at': now,
            'protected_until': now + datetime.timedelta(days=1),
            'protection': 'ok'})
        self._succeed()
        execution = self._succeed()
        with open(os.path.join(self.conf.local_backend.backup_dir, INSTANCE,
                               execution.backup_id + files.SQLITE_SUFFIX),
                  'r+b') as stream:
            stream.seek(10)
            stream.write(b'\0\0corrupt\0\0')
        restore_id, = self._due()
        self.assertEqual('failed', self.dispatcher.run(self.context,
                                                       restore_id))
        done = db_api.get_execution(self.context, execution.id)
        self.assertEqual('failed', done.verify_result)
        self.assertIn('backup %s is damaged' % execution.backup_id,
                      done.verify_reason)
        policy = db_api.get_policy(self.context, self.policy.id)
        self.assertTrue(policy.verify_failing)
        self.assertEqual('at_risk', policy.protection)
        self.assertIsNone(db_verifications.newest_verified(
            self.context, self.policy.id))

    def test_a_failing_check_says_what_it_found(self):
        db_api.update_policy(self.context, self.policy.id, {
            'verify_check': {'sql': 'SELECT body FROM note WHERE id = 1',
                             'expected': 'uno'}})
        self._succeed()
        self._succeed()
        restore_id, = self._due()
        self.assertEqual('failed', self.dispatcher.run(self.context,
                                                       restore_id))
        restore = db_restores.get_restore(self.context, restore_id)
        self.assertEqual("the SQL check returned 'one', 'uno' was expected",
                         restore.status_reason)

    def test_at_most_max_concurrent_claimed(self):
        self.flags(group='verify', max_concurrent=2,
                   max_concurrent_per_project=1)
        other = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self) + '-b', project_id='project-b',
            instance_id=INSTANCE, backend='local', schedule_type='cron',
            schedule='30 2 * * *', timezone='UTC', enabled=False,
            paused_reason='created paused', verify_every=1))
        third = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self) + '-c', project_id='project-c',
            instance_id=INSTANCE, backend='local', schedule_type='cron',
            schedule='30 2 * * *', timezone='UTC', enabled=False,
            paused_reason='created paused', verify_every=1))
        self._succeed()
        self._succeed()
        self._succeed(other)
        self._succeed(third)
        due = self._due()
        self.assertEqual(3, len(due))
        extra = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self) + '-d', project_id=PROJECT,
            instance_id=INSTANCE, backend='local', schedule_type='cron',
            schedule='30 2 * * *', timezone='UTC', enabled=False,
            paused_reason='created paused', verify_every=1))
        self._succeed(extra)
        same_project, = self._due()
        now = timeutils.utcnow(True)

        def claim(restore_id):
            return db_verifications.claim_verification(
                self.context, restore_id, 'w', uuidutils.generate_uuid(),
                now, 300, 2, 1)

        by_project = {db_restores.get_restore(self.context, r).project_id: r
                      for r in due}
        self.assertTrue(claim(by_project[PROJECT]))
        # One per project: the second of project-a waits.
        self.assertFalse(claim(same_project))
        self.assertTrue(claim(by_project['project-b']))
        # Two in the region: the third project waits too.
        self.assertFalse(claim(by_project['project-c']))
        self.assertEqual('PENDING', db_restores.get_restore(
            self.context, by_project['project-c']).status)

    def test_the_reconciler_deletes_only_recorded_finished_scratch(self):
        self._succeed()
        self._succeed()
        restore_id, = self._due()
        scratch = backends.scratch_name(restore_id)
        os.makedirs(self.restore_dir, exist_ok=True)
        leftover = os.path.join(self.restore_dir, scratch + '.sqlite')
        stranger = os.path.join(self.restore_dir,
                                backends.scratch_name('x') + '.sqlite')
        for path in (leftover, stranger):
            sqlite3.connect(path).close()
        now = timeutils.utcnow(True)
        claim = uuidutils.generate_uuid()
        self.assertTrue(db_verifications.claim_verification(
            self.context, restore_id, 'w', claim, now, 300, 2, 2))
        self.assertTrue(db_restores.record_restore_target(
            self.context, restore_id, claim, scratch))
        # Running: not the reconciler's.
        self.assertEqual(0, verification.delete_leftover_scratch(
            self.conf, self.context))
        self.assertTrue(os.path.exists(leftover))
        # Finished, but its worker could not delete the scratch file.
        self.assertEqual((True, None), db_verifications.finish_verification(
            self.context, restore_id, claim, now, None, False))
        self.assertEqual(1, verification.delete_leftover_scratch(
            self.conf, self.context))
        self.assertFalse(os.path.exists(leftover))
        self.assertTrue(os.path.exists(stranger))
        self.assertEqual(0, verification.delete_leftover_scratch(
            self.conf, self.context))


class TestVerificationsSQLite(_VerificationTests, base.TestCase):
    pass


class TestVerificationsMySQL(_VerificationTests, base.TestCase):
    DRIVER = 'mysql'


class TestVerificationsPostgreSQL(_VerificationTests, base.TestCase):
    DRIVER = 'postgresql'
