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
"""The local backend on real PostgreSQL, MariaDB and SQLite databases."""

import gzip
import hashlib
import json
import logging
import os
import signal
import sqlite3
import subprocess
import sys
import time
import types
import uuid

import fixtures
import sqlalchemy as sa

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.local import backend as local
from dbaas_scheduler.backends.local import job_control
from dbaas_scheduler.backends.local import manifests
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.tests import base as test_base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

INSTANCE = 'orders'
TIMEOUT = 60

# A worker process that asks for a backup and is killed (SIGKILL) at once;
# with "before-manifest" it dies before the manifest is recorded and says
# which job it had started.
_DYING_WORKER = '''
import json
import logging
import os
import signal
import sys
import types

from oslo_config import cfg

from dbaas_scheduler.backends.local import backend as local
from dbaas_scheduler.backends.local import manifests
from dbaas_scheduler import conf as dbaas_conf

settings = json.load(sys.stdin)
conf = cfg.ConfigOpts()
dbaas_conf.register_opts(conf)
conf([], project='dbaas-scheduler', default_config_files=[])
conf.set_override('backup_dir', settings['backup_dir'], 'local_backend')
conf.set_override('instances', settings['instances'], 'local_backend')

if settings['die'] == 'before-manifest':
    def write_manifest(path, manifest):
        print(manifest['pid'], flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    manifests.write_manifest = write_manifest

policy = types.SimpleNamespace(id='policy-1',
                               instance_id=settings['instance'])
local.LocalBackend(conf).create_backup(policy, 'nightly',
                                       settings['description'])
os.kill(os.getpid(), signal.SIGKILL)
'''


def _policy(instance=INSTANCE):
    return types.SimpleNamespace(id='policy-1', instance_id=instance)


def _wait_for(condition, what, timeout=TIMEOUT):
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError('timed out waiting for %s' % what)
        time.sleep(0.05)


class _BackupContract:
    """What the local backend does for every kind of database.

    A subclass makes the database (``create_database``), says how its
    dump shows the rows and how its broken URLs fail.
    """

    #: Words of the tool's message when the database does not exist.
    MISSING_DATABASE_FAULT = None

    def setUp(self):
        super().setUp()
        self.backup_dir = self.useFixture(fixtures.TempDir()).path
        self.directory = os.path.join(self.backup_dir, INSTANCE)
        self.marker = uuid.uuid4().hex[:12]
        self.table = 'backup_rows_%s' % self.marker
        self.rows = ['alpha-%s' % self.marker, 'beta-%s' % self.marker]
        self.job_pids = []
        self.addCleanup(self._kill_jobs)
        self.url = self.create_database()
        self._configure(self.url)
        self.backend = local.LocalBackend(self.conf)

    def _configure(self, url):
        self.flags(group='local_backend', backup_dir=self.backup_dir,
                   instances={INSTANCE: url})

    def _kill_jobs(self):
        """Whatever a failing test left running, dump tools included."""
        if os.path.isdir(self.directory):
            for name in os.listdir(self.directory):
                if name.endswith('.json') and not name.startswith('.'):
                    manifest = manifests.read_manifest(
                        os.path.join(self.directory, name))
                    if manifest.get('pid'):
                        self.job_pids.append(manifest['pid'])
        for pid in self.job_pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def create_database(self):
        """Make the database with ``self.rows``; return its URL."""
        raise NotImplementedError()

    def missing_database_url(self):
        raise NotImplementedError()

    def assert_dump_holds_the_rows(self, dump):
        """``dump`` is the uncompressed backup file."""
        raise NotImplementedError()

    # Helpers.

    def _job_pid(self, backup_id):
        manifest = manifests.read_manifest(
            os.path.join(self.directory, backup_id + '.json'))
        self.job_pids.append(manifest['pid'])
        return manifest['pid']

    def _wait_until_finished(self, backup_id, backend=None):
        backend = backend or self.backend
        return _wait_for(
            lambda: (lambda b: b if b.finished else None)(
                backend.get_backup(_policy(), backup_id)),
            'backup %s to finish' % backup_id)

    def _data_files(self):
        return sorted(name for name in os.listdir(self.directory)
                      if name.endswith(('.gz', '.part')))

    def _capture_warnings(self):
        # What went wrong, with host paths and the tool's words, is the
        # operator's: in the log, never in the fault a tenant reads.
        return self.useFixture(fixtures.FakeLogger(
            name='dbaas_scheduler.backends.local', level=logging.WARNING))

    def _assert_failed_without_files(self, backup, logs, *words):
        self.assertEqual(base.BackupStatus.FAILED, backup.status, backup)
        self.assertIn('the dump failed; the service\'s operator finds the '
                      'cause in its log', backup.fault)
        for word in words:
            self.assertIn(word, logs.output)
            self.assertNotIn(word, backup.fault)
        self.assertIsNone(backup.location)
        self.assertEqual([], self._data_files())

    def _run_dying_worker(self, description, die='after-create'):
        settings = {'backup_dir': self.backup_dir,
                    'instances': {INSTANCE: self.url},
                    'instance': INSTANCE, 'description': description,
                    'die': die}
        worker = subprocess.run(
            [sys.executable, '-c', _DYING_WORKER],
            input=json.dumps(settings).encode(), stdout=subprocess.PIPE,
            timeout=TIMEOUT)
        self.assertEqual(-signal.SIGKILL, worker.returncode)
        return worker.stdout.decode()

    # The contract.

    def test_the_backup_holds_the_rows(self):
        tag = base.execution_tag(uuid.uuid4())
        created = self.backend.create_backup(_policy(), 'nightly',
                                             'nightly %s' % tag)
        self.assertEqual(base.BackupStatus.BUILDING, created.status)
        backup = self._wait_until_finished(created.id)
        self.assertEqual(base.BackupStatus.COMPLETED, backup.status,
                         backup.fault)
        self.assertIsNone(backup.fault)
        with open(backup.location, 'rb') as stream:
            content = stream.read()
        self.assertEqual(len(content), backup.size_bytes)
        manifest = manifests.read_manifest(
            os.path.join(self.directory, backup.id + '.json'))
        self.assertEqual(hashlib.sha256(content).hexdigest(),
                         manifest['sha256'])
        self.assertEqual(0o600, os.stat(backup.location).st_mode & 0o777)
        self.assert_dump_holds_the_rows(gzip.decompress(content))
        # Nothing but the manifest and the data file.
        self.assertEqual(
            sorted([backup.id + '.json', os.path.basename(backup.location)]),
            sorted(os.listdir(self.directory)))

    def test_a_missing_database_fails_without_a_file(self):
        logs = self._capture_warnings()
        self._configure(self.missing_database_url())
        created = self.backend.create_backup(_policy(), 'n', 'd')
        backup = self._wait_until_finished(created.id)
        self._assert_failed_without_files(backup, logs,
                                          self.MISSING_DATABASE_FAULT)

    def test_a_job_killed_at_once_is_failed(self):
        logs = self._capture_warnings()
        created = self.backend.create_backup(_policy(), 'n', 'd')
        os.kill(self._job_pid(created.id), signal.SIGKILL)
        backup = self._wait_until_finished(created.id)
        self._assert_failed_without_files(backup, logs, 'the dump process',
                                          'died')

    def test_find_by_tag_then_delete(self):
        tag = base.execution_tag(uuid.uuid4())
        other = self.backend.create_backup(
            _policy(), 'other', base.execution_tag(uuid.uuid4()))
        created = self.backend.create_backup(_policy(), 'nightly',
                                             'nightly %s' % tag)
        self._wait_until_finished(other.id)
        self._wait_until_finished(created.id)
        found = self.backend.find_backup(_policy(), tag)
        self.assertEqual(created.id, found.id)
        self.assertEqual(base.BackupStatus.COMPLETED, found.status)
        self.assertEqual(sorted([created.id, other.id]), sorted(
            b.id for b in self.backend.list_backups(_policy())))
        self.backend.delete_backup(_policy(), created.id)
        self.assertIsNone(self.backend.find_backup(_policy(), tag))
        self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                          _policy(), created.id)
        self.assertEqual([other.id], [
            b.id for b in self.backend.list_backups(_policy())])
        self.assertEqual(1, len(self._data_files()))
        self.backend.delete_backup(_policy(), created.id)

    def test_a_worker_killed_after_create_leaves_one_backup(self):
        tag = base.execution_tag(uuid.uuid4())
        self._run_dying_worker('nightly %s' % tag)
        # The next worker (a fresh backend) finds it; the job carried on.
        backend = local.LocalBackend(self.conf)
        found = backend.find_backup(_policy(), tag)
        self.assertIsNotNone(found)
        self.job_pids.append(self._job_pid(found.id))
        backup = self._wait_until_finished(found.id, backend=backend)
        self.assertEqual(base.BackupStatus.COMPLETED, backup.status,
                         backup.fault)
        self.assertEqual([found.id],
                         [b.id for b in backend.list_backups(_policy())])

    def test_a_worker_killed_before_the_manifest_leaves_no_backup(self):
        tag = base.execution_tag(uuid.uuid4())
        job_pid = int(self._run_dying_worker(tag, die='before-manifest'))
        self.job_pids.append(job_pid)
        # The job sees its creator go without a manifest and gives up.
        _wait_for(lambda: not job_control.job_alive(job_pid),
                  'the job to exit')
        self.assertIsNone(self.backend.find_backup(_policy(), tag))
        self.assertEqual([], os.listdir(self.directory))


class _ServerDatabase(db_fixtures.DatabaseMixin, _BackupContract):
    """A table with rows in a database the opportunistic fixture made."""

    FIXTURE = db_fixtures.EmptyDatabase
    #: Words of the tool's message when the credentials are refused.
    BAD_CREDENTIALS_FAULT = None

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

    def bad_credentials_url(self):
        return sa.engine.make_url(self.url).set(
            password='not-the-password').render_as_string(
                hide_password=False)

    def missing_database_url(self):
        return sa.engine.make_url(self.url).set(
            database='no_such_db_%s' % self.marker).render_as_string(
                hide_password=False)

    def assert_dump_holds_the_rows(self, dump):
        text = dump.decode('utf-8')
        self.assertIn(self.table, text)
        for row in self.rows:
            self.assertIn(row, text)

    def test_bad_credentials_fail_without_a_file(self):
        logs = self._capture_warnings()
        self._configure(self.bad_credentials_url())
        created = self.backend.create_backup(_policy(), 'n', 'd')
        backup = self._wait_until_finished(created.id)
        self._assert_failed_without_files(backup, logs,
                                          self.BAD_CREDENTIALS_FAULT)


class TestPostgreSQLBackups(_ServerDatabase, test_base.TestCase):

    DRIVER = 'postgresql'
    BAD_CREDENTIALS_FAULT = 'role "no_such_role'
    MISSING_DATABASE_FAULT = 'does not exist'

    def bad_credentials_url(self):
        # Test servers often trust local connections (this project's do),
        # where a wrong password passes; a role that does not exist fails.
        return sa.engine.make_url(self.url).set(
            username='no_such_role_%s' % self.marker,
            password='not-the-password').render_as_string(
                hide_password=False)

    def _start_a_dump_that_waits(self, locker):
        """A backup whose pg_dump waits for the table ``locker`` holds."""
        locker.execute(sa.text('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE'
                               % self.table))
        created = self.backend.create_backup(_policy(), 'n', 'd')
        pid = self._job_pid(created.id)

        def pg_dump_waits():
            with self.engine.connect() as connection:
                return connection.execute(sa.text(
                    "SELECT count(*) FROM pg_stat_activity "
                    "WHERE application_name = 'pg_dump' "
                    "AND wait_event_type = 'Lock' "
                    "AND datname = current_database()")).scalar()

        _wait_for(pg_dump_waits, 'pg_dump to wait for the lock')
        return created, pid

    def test_a_job_killed_mid_dump_leaves_no_partial_file(self):
        logs = self._capture_warnings()
        with self.engine.connect() as locker:
            created, pid = self._start_a_dump_that_waits(locker)
            part = os.path.join(self.directory, created.id + '.sql.gz.part')
            self.assertTrue(os.path.exists(part))
            os.kill(pid, signal.SIGKILL)
            backup = self._wait_until_finished(created.id)
            self._assert_failed_without_files(backup, logs, 'died')
            locker.rollback()

    def test_delete_stops_a_running_job(self):
        with self.engine.connect() as locker:
            created, pid = self._start_a_dump_that_waits(locker)
            self.backend.delete_backup(_policy(), created.id)
            self.assertFalse(job_control.job_alive(pid))
            self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                              _policy(), created.id)
            self.assertEqual([], os.listdir(self.directory))
            locker.rollback()


class TestMySQLBackups(_ServerDatabase, test_base.TestCase):

    DRIVER = 'mysql'
    BAD_CREDENTIALS_FAULT = 'Access denied'
    MISSING_DATABASE_FAULT = 'Unknown database'


class TestSQLiteBackups(_BackupContract, test_base.TestCase):

    MISSING_DATABASE_FAULT = 'unable to open database file'

    def create_database(self):
        databases = self.useFixture(fixtures.TempDir()).path
        self.database_path = os.path.join(databases, 'orders.db')
        connection = sqlite3.connect(self.database_path)
        with connection:
            connection.execute('CREATE TABLE %s (id INTEGER PRIMARY KEY, '
                               'label TEXT NOT NULL)' % self.table)
            connection.executemany(
                'INSERT INTO %s (label) VALUES (?)' % self.table,
                [(row,) for row in self.rows])
        connection.close()
        return 'sqlite:///' + self.database_path

    def missing_database_url(self):
        return 'sqlite:///' + self.database_path + '.missing'

    def assert_dump_holds_the_rows(self, dump):
        copy = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'copy.db')
        with open(copy, 'wb') as stream:
            stream.write(dump)
        connection = sqlite3.connect(copy)
        self.addCleanup(connection.close)
        self.assertEqual(self.rows, [row for row, in connection.execute(
            'SELECT label FROM %s ORDER BY id' % self.table)])

    def test_a_file_that_is_no_database_fails_without_a_file(self):
        logs = self._capture_warnings()
        with open(self.database_path, 'wb') as stream:
            stream.write(b'not a database, ' * 1000)
        created = self.backend.create_backup(_policy(), 'n', 'd')
        backup = self._wait_until_finished(created.id)
        self._assert_failed_without_files(backup, logs,
                                          'file is not a database')
