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
"""Local restores of real dumps: PostgreSQL, MariaDB and SQLite.

A backup is made by the backend's own job, then restored into an empty
target database (a second database on the same server, or a new SQLite
file) and read back; a backup damaged on purpose fails with a reason.
"""

import os
import sqlite3
import time
import types
import uuid

import fixtures
from oslo_db.sqlalchemy import provision
import sqlalchemy as sa

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.local import backend as local
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler.tests import base as test_base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

INSTANCE = 'orders'
PROJECT = 'project-a'
TIMEOUT = 60


def _policy():
    return types.SimpleNamespace(id='policy-1', instance_id=INSTANCE,
                                 project_id=PROJECT)


class _RestoreContract:
    """What a local restore does for every kind of database."""

    def setUp(self):
        super().setUp()
        self.backup_dir = self.useFixture(fixtures.TempDir()).path
        self.restore_dir = self.useFixture(fixtures.TempDir()).path
        self.marker = uuid.uuid4().hex[:12]
        self.table = 'restore_rows_%s' % self.marker
        self.rows = ['alpha-%s' % self.marker, 'beta-%s' % self.marker,
                     'gamma-%s' % self.marker]
        self.url = self.create_database()
        self.target_url = self.create_target()
        self.flags(group='local_backend', backup_dir=self.backup_dir,
                   restore_dir=self.restore_dir,
                   instances={INSTANCE: self.url},
                   restore_targets={'copy': self.target_url,
                                    'theirs': self.target_url},
                   restore_target_projects={'copy': PROJECT,
                                            'theirs': 'project-b'})
        self.backend = local.LocalBackend(self.conf)
        self.backup = self._make_backup()

    def _make_backup(self):
        created = self.backend.create_backup(_policy(), 'nightly', 'd')
        deadline = time.monotonic() + TIMEOUT
        while True:
            backup = self.backend.get_backup(_policy(), created.id)
            if backup.finished:
                break
            if time.monotonic() > deadline:
                self.fail('the backup did not finish')
            time.sleep(0.05)
        self.assertEqual(base.BackupStatus.COMPLETED, backup.status,
                         backup.fault)
        return backup

    def _restore(self, **params):
        restore_id = str(uuid.uuid4())
        self.backend.check_restore(_policy(), self.backup.id, params)
        return self.backend.restore_backup(_policy(), self.backup.id, params,
                                           restore_id)

    def _damage(self):
        with open(self.backup.location, 'r+b') as stream:
            stream.seek(os.path.getsize(self.backup.location) // 2)
            stream.write(b'\0damaged\0')

    def test_restore_into_a_target_holds_the_rows(self):
        started = time.monotonic()
        progress = self._restore(target='copy')
        self.assertTrue(progress.done)
        self.assertEqual('copy', progress.target_id)
        self.assertEqual(self.rows, self.target_rows())
        # Seen in the test log: how long the restore took here.
        print('restore of %s took %.2fs'
              % (self.DRIVER_NAME, time.monotonic() - started))

    def test_a_damaged_backup_fails_with_a_clear_reason(self):
        self._damage()
        error = self.assertRaises(base.PermanentBackendError, self._restore,
                                  target='copy')
        self.assertIn('backup %s is damaged' % self.backup.id, str(error))
        self.assertEqual([], self.target_tables())

    def test_a_target_with_tables_needs_replace(self):
        self._restore(target='copy')
        error = self.assertRaises(base.PermanentBackendError, self._restore,
                                  target='copy')
        self.assertIn('target copy is not empty', str(error))
        self._restore(target='copy', replace=True)
        self.assertEqual(self.rows, self.target_rows())

    def test_the_source_only_when_named_and_allowed(self):
        error = self.assertRaises(exception.Invalid,
                                  self.backend.check_restore, _policy(),
                                  self.backup.id, {'target': INSTANCE})
        self.assertIn('set allow_source to true', str(error))
        self.backend.check_restore(_policy(), self.backup.id,
                                   {'target': INSTANCE,
                                    'allow_source': True})

    def test_another_projects_target_is_unknown(self):
        for target in ('theirs', 'nowhere'):
            error = self.assertRaises(
                exception.Invalid, self.backend.check_restore, _policy(),
                self.backup.id, {'target': target})
            self.assertIn('%s is not a restore target of this project'
                          % target, str(error))

    def test_a_deleted_backup_is_refused(self):
        self.backend.delete_backup(_policy(), self.backup.id)
        error = self.assertRaises(exception.Invalid,
                                  self.backend.check_restore, _policy(),
                                  self.backup.id, {'target': 'copy'})
        self.assertIn('no longer exists', str(error))


class _ServerDatabase(db_fixtures.DatabaseMixin, _RestoreContract):

    FIXTURE = db_fixtures.EmptyDatabase

    def create_database(self):
        engine = db_api.get_engine()
        with engine.begin() as connection:
            connection.execute(sa.text(
                'CREATE TABLE %s (id INTEGER PRIMARY KEY, '
                'label VARCHAR(64) NOT NULL)' % self.table))
            for number, label in enumerate(self.rows):
                connection.execute(
                    sa.text('INSERT INTO %s (id, label) VALUES (:id, :label)'
                            % self.table), {'id': number, 'label': label})
        self.addCleanup(self._drop_table, engine)
        return engine.url.render_as_string(hide_password=False)

    def _drop_table(self, engine):
        with engine.begin() as connection:
            connection.execute(sa.text('DROP TABLE IF EXISTS %s'
                                       % self.table))

    def create_target(self):
        server = provision.Backend.backend_for_database_type(self.DRIVER)
        name = 'restore_%s' % self.marker
        server.create_named_database(name)
        self.addCleanup(server.drop_named_database, name)
        return server.provisioned_database_url(name).render_as_string(
            hide_password=False)

    def _target_engine(self):
        engine = sa.create_engine(self.target_url,
                                  poolclass=sa.pool.NullPool)
        self.addCleanup(engine.dispose)
        return engine

    def target_tables(self):
        return sa.inspect(self._target_engine()).get_table_names()

    def target_rows(self):
        with self._target_engine().connect() as connection:
            return [row for row, in connection.execute(sa.text(
                'SELECT label FROM %s ORDER BY id' % self.table))]


class TestPostgreSQLRestores(_ServerDatabase, test_base.TestCase):

    DRIVER = 'postgresql'
    DRIVER_NAME = 'PostgreSQL'


class TestMySQLRestores(_ServerDatabase, test_base.TestCase):

    DRIVER = 'mysql'
    DRIVER_NAME = 'MariaDB'


class TestSQLiteRestores(_RestoreContract, test_base.TestCase):

    DRIVER_NAME = 'SQLite'

    def create_database(self):
        databases = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(databases, 'orders.db')
        connection = sqlite3.connect(path)
        with connection:
            connection.execute('CREATE TABLE %s (id INTEGER PRIMARY KEY, '
                               'label TEXT NOT NULL)' % self.table)
            connection.executemany(
                'INSERT INTO %s (label) VALUES (?)' % self.table,
                [(row,) for row in self.rows])
        connection.close()
        return 'sqlite:///' + path

    def create_target(self):
        self.target_path = os.path.join(
            self.useFixture(fixtures.TempDir()).path, 'copy.db')
        return 'sqlite:///' + self.target_path

    def _rows_of(self, path):
        connection = sqlite3.connect(path)
        try:
            return [row for row, in connection.execute(
                'SELECT label FROM %s ORDER BY id' % self.table)]
        finally:
            connection.close()

    def target_tables(self):
        if not os.path.exists(self.target_path):
            return []
        connection = sqlite3.connect(self.target_path)
        try:
            return [row for row, in connection.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table'")]
        finally:
            connection.close()

    def target_rows(self):
        return self._rows_of(self.target_path)

    def test_without_a_target_a_new_file(self):
        progress = self._restore()
        self.assertTrue(progress.target_id.endswith('.sqlite'))
        self.assertEqual(self.rows, self._rows_of(
            os.path.join(self.restore_dir, progress.target_id)))

    def test_a_damaged_backup_leaves_no_new_file(self):
        self._damage()
        error = self.assertRaises(base.PermanentBackendError, self._restore)
        self.assertIn('is damaged', str(error))
        self.assertEqual([], os.listdir(self.restore_dir))
