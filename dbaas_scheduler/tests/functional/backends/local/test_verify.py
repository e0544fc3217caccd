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
"""Local verifications of real dumps: PostgreSQL, MariaDB and SQLite.

A backup made by the backend's own job records its tables and row counts
in its manifest; a verification restores it into a scratch database on
the same server (or a scratch SQLite file), compares, runs the user's
check, and leaves no scratch target behind.
"""

import json
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
from dbaas_scheduler.backends.local import files
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.tests import base as test_base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

INSTANCE = 'orders'
PROJECT = 'project-a'
TIMEOUT = 60


def _policy():
    return types.SimpleNamespace(id='policy-1', instance_id=INSTANCE,
                                 project_id=PROJECT)


class _VerifyContract:
    """What a local verification does for every kind of database."""

    def setUp(self):
        super().setUp()
        self.backup_dir = self.useFixture(fixtures.TempDir()).path
        self.restore_dir = self.useFixture(fixtures.TempDir()).path
        self.marker = uuid.uuid4().hex[:12]
        self.table = 'verify_rows_%s' % self.marker
        self.empty = 'verify_empty_%s' % self.marker
        # Strings that look like rows to a careless count.
        self.rows = ["it's (one)", 'two),(three', 'back\\slash\n(x)']
        self.url = self.create_database()
        self.flags(group='local_backend', backup_dir=self.backup_dir,
                   restore_dir=self.restore_dir,
                   instances={INSTANCE: self.url})
        self.backend = local.LocalBackend(self.conf)
        self.backup = self._make_backup()
        self.scratch = base.scratch_name(str(uuid.uuid4()))

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

    def _manifest_path(self):
        return files.manifest_path(os.path.join(self.backup_dir, INSTANCE),
                                   self.backup.id)

    def _verify(self, check=None):
        return self.backend.verify_backup(_policy(), self.backup.id, check,
                                          self.scratch)

    def test_the_manifest_records_tables_and_rows(self):
        with open(self._manifest_path()) as stream:
            manifest = json.load(stream)
        self.assertEqual({self.table: 3, self.empty: 0},
                         manifest['tables'])

    def test_a_good_backup_passes_and_leaves_nothing(self):
        started = time.monotonic()
        self.assertIsNone(self._verify())
        print('verification on %s took %.2fs'
              % (self.DRIVER_NAME, time.monotonic() - started))
        self.assertFalse(self.scratch_exists())

    def test_the_users_check(self):
        sql = 'SELECT COUNT(*) FROM %s' % self.table
        self.assertIsNone(self._verify({'sql': sql, 'expected': 3}))
        reason = self._verify({'sql': sql, 'expected': 4})
        self.assertEqual("the SQL check returned '3', 4 was expected",
                         reason)
        self.assertFalse(self.scratch_exists())

    def test_the_check_is_read_only(self):
        reason = self._verify({'sql': 'DELETE FROM %s' % self.table,
                               'expected': None})
        self.assertIn('the SQL check failed', reason)

    def test_rows_missing_from_the_dump_fail(self):
        with open(self._manifest_path()) as stream:
            manifest = json.load(stream)
        manifest['tables'][self.table] = 5
        with open(self._manifest_path(), 'w') as stream:
            json.dump(manifest, stream)
        reason = self._verify()
        self.assertEqual(
            'the restored database differs from the backup: table %s has '
            '3 rows, the backup recorded 5' % self.table, reason)
        self.assertFalse(self.scratch_exists())

    def test_a_damaged_backup_fails_with_a_clear_reason(self):
        with open(self.backup.location, 'r+b') as stream:
            stream.seek(os.path.getsize(self.backup.location) // 2)
            stream.write(b'\0damaged\0')
        error = self.assertRaises(base.PermanentBackendError, self._verify)
        self.assertIn('backup %s is damaged' % self.backup.id, str(error))
        self.assertFalse(self.scratch_exists())

    def test_a_leftover_scratch_is_deleted(self):
        self.make_scratch()
        self.assertTrue(self.scratch_exists())
        self.backend.delete_scratch(_policy(), self.scratch)
        self.assertFalse(self.scratch_exists())
        # Again: nothing to delete is no error.
        self.backend.delete_scratch(_policy(), self.scratch)


class _ServerDatabase(db_fixtures.DatabaseMixin, _VerifyContract):

    FIXTURE = db_fixtures.EmptyDatabase

    def create_database(self):
        engine = db_api.get_engine()
        with engine.begin() as connection:
            connection.execute(sa.text(
                'CREATE TABLE %s (id INTEGER PRIMARY KEY, '
                'label VARCHAR(64) NOT NULL)' % self.table))
            connection.execute(sa.text(
                'CREATE TABLE %s (id INTEGER PRIMARY KEY)' % self.empty))
            for number, label in enumerate(self.rows):
                connection.execute(
                    sa.text('INSERT INTO %s (id, label) VALUES (:id, :label)'
                            % self.table), {'id': number, 'label': label})
        self.addCleanup(self._drop_tables, engine)
        return engine.url.render_as_string(hide_password=False)

    def _drop_tables(self, engine):
        with engine.begin() as connection:
            for table in (self.table, self.empty):
                connection.execute(sa.text('DROP TABLE IF EXISTS %s'
                                           % table))

    def _server(self):
        return provision.Backend.backend_for_database_type(self.DRIVER)

    def scratch_exists(self):
        # (oslo.db's database_exists does not run on SQLAlchemy 2.)
        engine = db_api.get_engine()
        if engine.dialect.name == 'postgresql':
            query = 'SELECT 1 FROM pg_database WHERE datname = :name'
        else:
            query = ('SELECT 1 FROM information_schema.schemata '
                     'WHERE schema_name = :name')
        with engine.connect() as connection:
            return connection.execute(sa.text(query),
                                      {'name': self.scratch}).first() \
                is not None

    def make_scratch(self):
        self._server().create_named_database(self.scratch)
        self.addCleanup(self._server().drop_named_database, self.scratch,
                        conditional=True)
        self.assertTrue(self.scratch_exists())


class TestPostgreSQLVerifications(_ServerDatabase, test_base.TestCase):

    DRIVER = 'postgresql'
    DRIVER_NAME = 'PostgreSQL'


class TestMySQLVerifications(_ServerDatabase, test_base.TestCase):

    DRIVER = 'mysql'
    DRIVER_NAME = 'MariaDB'


class TestSQLiteVerifications(_VerifyContract, test_base.TestCase):

    DRIVER_NAME = 'SQLite'

    def create_database(self):
        databases = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(databases, 'orders.db')
        connection = sqlite3.connect(path)
        with connection:
            connection.execute('CREATE TABLE %s (id INTEGER PRIMARY KEY, '
                               'label TEXT NOT NULL)' % self.table)
            connection.execute('CREATE TABLE %s (id INTEGER PRIMARY KEY)'
                               % self.empty)
            connection.executemany(
                'INSERT INTO %s (label) VALUES (?)' % self.table,
                [(row,) for row in self.rows])
        connection.close()
        return 'sqlite:///' + path

    def _scratch_path(self):
        return os.path.join(self.restore_dir, self.scratch + '.sqlite')

    def scratch_exists(self):
        return os.path.exists(self._scratch_path())

    def make_scratch(self):
        sqlite3.connect(self._scratch_path()).close()
