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
"""Restores run by a worker: claimed once, fenced, timed, swept again.

On each database of the service; the backups are real ``local`` dumps of
a SQLite database, made by the backend's own job.
"""

import datetime
import os
import sqlite3
import time

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler.engine import sweeps
from dbaas_scheduler import exception
from dbaas_scheduler.objects import restore as restore_obj
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.worker import restores

PROJECT = 'project-a'
INSTANCE = 'notes'


class _Casts:
    """A worker API that keeps the restores it is asked to cast."""

    def __init__(self, fail=False):
        self.cast = []
        self.fail = fail

    def restore_backup(self, context, restore_id):
        if self.fail:
            raise ConnectionError('no broker')
        self.cast.append(restore_id)


class _RestoreTests(db_fixtures.DatabaseMixin):

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
                   retry_max_delay=0.05, max_attempts=3)
        loader.reset()
        self.addCleanup(loader.reset)
        self.context = dbaas_context.get_admin_context()
        self.policy = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self), project_id=PROJECT,
            instance_id=INSTANCE, backend='local', schedule_type='cron',
            schedule='30 2 * * *', timezone='UTC', enabled=False,
            paused_reason='created paused'))
        backup = self._backup()
        self.execution = db_api.create_execution(self.context, dict(
            policy_id=self.policy.id, project_id=PROJECT,
            instance_id=INSTANCE, status='SUCCEEDED', backup_id=backup.id,
            scheduled_at=timeutils.utcnow(True)))
        self.backup = backup
        self.runner = restores.RestoreRunner(self.conf,
                                             uuidutils.generate_uuid())

    def _backup(self):
        backend = loader.get_backend(self.conf, 'local')
        created = backend.create_backup(self.policy, 'n', 'd')
        deadline = time.monotonic() + 60
        while not backend.get_backup(self.policy, created.id).finished:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.05)
        return backend.get_backup(self.policy, created.id)

    def _ask(self, casts=None, **params):
        return restore_obj.create_restore(
            self.context, self.conf, self.execution, casts or _Casts(),
            params)

    def test_a_restore_runs_once_and_is_timed(self):
        casts = _Casts()
        asked = self._ask(casts)
        self.assertEqual([asked.id], casts.cast)
        self.assertEqual('PENDING', asked.status)
        self.assertEqual('SUCCEEDED', self.runner.run(self.context, asked.id))
        done = db_restores.get_restore(self.context, asked.id)
        self.assertEqual('SUCCEEDED', done.status)
        self.assertEqual('%s.sqlite' % asked.id, done.target_id)
        self.assertEqual(1, done.attempts)
        self.assertIsNotNone(done.finished_at)
        self.assertGreaterEqual(done.duration, 0.0)
        self.assertAlmostEqual(
            (done.finished_at - done.started_at).total_seconds(),
            done.duration, places=3)
        connection = sqlite3.connect(os.path.join(self.restore_dir,
                                                  done.target_id))
        self.addCleanup(connection.close)
        self.assertEqual(['one', 'two'], [row for row, in connection.execute(
            'SELECT body FROM note ORDER BY id')])
        # The same message again (a redelivery, a sweep): nothing.
        self.assertIsNone(self.runner.run(self.context, asked.id))
        self.assertEqual(1, db_restores.get_restore(
            self.context, asked.id).attempts)
        times = restore_obj.restore_times(self.context, self.policy.id)
        self.assertEqual(1, times['count'])
        self.assertEqual(round(done.duration, 3), times['last'])

    def test_a_damaged_backup_fails_with_its_reason(self):
        with open(self.backup.location, 'r+b') as stream:
            stream.seek(10)
            stream.write(b'\0\0damaged\0\0')
        asked = self._ask()
        self.assertEqual('FAILED', self.runner.run(self.context, asked.id))
        done = db_restores.get_restore(self.context, asked.id)
        self.assertIn('backup %s is damaged' % self.backup.id,
                      done.status_reason)
        self.assertIsNone(done.target_id)
        self.assertEqual([], os.listdir(self.restore_dir)
                         if os.path.isdir(self.restore_dir) else [])

    def test_a_superseded_claim_records_nothing(self):
        asked = self._ask()
        now = timeutils.utcnow(True)
        old_claim = uuidutils.generate_uuid()
        # A worker that claimed it, then froze past its lease.
        self.assertTrue(db_restores.claim_restore(
            self.context, asked.id, 'frozen-worker', old_claim,
            now - datetime.timedelta(seconds=600), 300))
        self.assertFalse(db_restores.claim_restore(
            self.context, asked.id, 'other', uuidutils.generate_uuid(),
            now - datetime.timedelta(seconds=599), 300))
        self.assertEqual('SUCCEEDED', self.runner.run(self.context, asked.id))
        self.assertFalse(db_restores.finish_restore(
            self.context, asked.id, old_claim, 'FAILED', now,
            reason='too late'))
        self.assertFalse(db_restores.record_restore_target(
            self.context, asked.id, old_claim, 'elsewhere'))
        done = db_restores.get_restore(self.context, asked.id)
        self.assertEqual(('SUCCEEDED', 2), (done.status, done.attempts))

    def test_the_sweep_casts_lost_restores_again(self):
        asked = self._ask(_Casts(fail=True))
        self.assertEqual('PENDING', asked.status)
        casts = _Casts()
        later = asked.dispatched_at + datetime.timedelta(
            seconds=self.conf.engine.dispatch_timeout + 1)
        self.assertEqual(0, sweeps.recast_restores(
            self.context, casts, self.conf, asked.dispatched_at))
        self.assertEqual(1, sweeps.recast_restores(self.context, casts,
                                                   self.conf, later))
        self.assertEqual([asked.id], casts.cast)
        # Stamped: the next pass leaves it alone.
        self.assertEqual(0, sweeps.recast_restores(self.context, casts,
                                                   self.conf, later))

    def test_nothing_to_restore_is_a_conflict(self):
        failed = db_api.create_execution(self.context, dict(
            policy_id=self.policy.id, project_id=PROJECT,
            instance_id=INSTANCE, status='FAILED',
            scheduled_at=timeutils.utcnow(True)))
        error = self.assertRaises(
            exception.Conflict, restore_obj.create_restore, self.context,
            self.conf, failed, _Casts(), {})
        self.assertIn('has no backup to restore (it is FAILED)', str(error))

    def test_the_backend_refuses_before_anything_is_recorded(self):
        self.assertRaises(exception.Invalid, self._ask, target=INSTANCE)
        self.assertEqual([], db_restores.list_restores(self.context))


class _TroveRestoreTests(db_fixtures.DatabaseMixin):
    """A new instance from the backup, on the fake Trove."""

    def setUp(self):
        super().setUp()
        self.trove = self.useFixture(fake_trove.FakeTrove())
        self.flags(group='trove', endpoint_override=self.trove.url)
        self.flags(group='service_credentials', auth_type='none')
        self.flags(group='worker', retry_initial_delay=0.01,
                   retry_max_delay=0.05, max_attempts=3)
        loader.reset()
        self.addCleanup(loader.reset)
        self.context = dbaas_context.get_admin_context()
        self.source = self.trove.add_instance(project_id=PROJECT)
        backup_id = self.trove.add_backup(PROJECT, self.source)
        self.policy = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self), project_id=PROJECT,
            instance_id=self.source, backend='trove', schedule_type='cron',
            schedule='30 2 * * *', timezone='UTC', enabled=False,
            paused_reason='created paused'))
        self.execution = db_api.create_execution(self.context, dict(
            policy_id=self.policy.id, project_id=PROJECT,
            instance_id=self.source, status='SUCCEEDED',
            backup_id=backup_id, scheduled_at=timeutils.utcnow(True)))
        self.runner = restores.RestoreRunner(
            self.conf, uuidutils.generate_uuid(), poll=0.05)

    def _ask(self, **params):
        return restore_obj.create_restore(
            self.context, self.conf, self.execution, _Casts(), params)

    def test_a_new_instance_waited_for_until_active(self):
        self.trove.restore_build_seconds = 0.3
        asked = self._ask()
        self.assertEqual('SUCCEEDED', self.runner.run(self.context, asked.id))
        made, = self.trove.restored_instances(self.execution.backup_id)
        done = db_restores.get_restore(self.context, asked.id)
        self.assertEqual(made.id, done.target_id)
        self.assertEqual('ACTIVE', made.status)
        # Flavor and volume of the source; the name derived.
        self.assertEqual(('6', 1), (made.flavor_id, made.volume_size))
        self.assertEqual('instance-%s-restore-%s' % (self.source[:8],
                                                     asked.id[:8]),
                         made.name)
        self.assertGreaterEqual(done.duration, 0.3)

    def test_given_name_flavor_and_size(self):
        asked = self._ask(name='orders-copy', flavor_id='7', volume_size=3)
        self.assertEqual('SUCCEEDED', self.runner.run(self.context, asked.id))
        made, = self.trove.restored_instances()
        self.assertEqual(('orders-copy', '7', 3),
                         (made.name, made.flavor_id, made.volume_size))

    def test_a_resumed_restore_finds_its_instance(self):
        asked = self._ask()
        now = timeutils.utcnow(True)
        # A worker claimed it, asked Trove for the instance and died
        # before recording it.
        self.assertTrue(db_restores.claim_restore(
            self.context, asked.id, 'dead-worker',
            uuidutils.generate_uuid(), now - datetime.timedelta(hours=1),
            60))
        backend = loader.get_backend(self.conf, 'trove')
        backend.restore_backup(self.policy, self.execution.backup_id, {},
                               asked.id)
        self.assertEqual('SUCCEEDED', self.runner.run(self.context, asked.id))
        self.assertEqual(1, len(self.trove.restored_instances()))
        done = db_restores.get_restore(self.context, asked.id)
        self.assertEqual(self.trove.restored_instances()[0].id,
                         done.target_id)

    def test_an_instance_that_fails_fails_the_restore(self):
        self.trove.restore_build_seconds = 30
        asked = self._ask()

        def break_it(seconds):
            made, = self.trove.restored_instances()
            self.trove.set_instance_status(made.id, 'ERROR',
                                           fault='no space left')

        self.runner.sleep = break_it
        self.assertEqual('FAILED', self.runner.run(self.context, asked.id))
        done = db_restores.get_restore(self.context, asked.id)
        self.assertIn('is ERROR: no space left', done.status_reason)

    def test_local_options_are_refused(self):
        error = self.assertRaises(exception.Invalid, self._ask,
                                  target='copy')
        self.assertIn('apply to local restores only', str(error))


class TestTroveRestoresSQLite(_TroveRestoreTests, base.TestCase):
    pass


class TestRestoresSQLite(_RestoreTests, base.TestCase):
    pass


class TestRestoresMySQL(_RestoreTests, base.TestCase):
    DRIVER = 'mysql'


class TestRestoresPostgreSQL(_RestoreTests, base.TestCase):
    DRIVER = 'postgresql'
