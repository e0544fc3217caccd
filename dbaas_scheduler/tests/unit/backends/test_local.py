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
"""The local backend without databases: commands, manifests, states."""

import datetime
import gzip
import hashlib
import io
import json
import os
import stat
import subprocess
import sys
import time
from unittest import mock
import uuid

import fixtures
from oslotest import base as oslotest_base

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends import local
from dbaas_scheduler.backends import local_job
from dbaas_scheduler.tests import base as test_base

UTC = datetime.timezone.utc
CREATED = datetime.datetime(2026, 11, 22, 2, 30, 15, 123456, tzinfo=UTC)
# Above the largest pid Linux can hand out: never a live process.
DEAD_PID = 2 ** 22 + 1
SECRET = 's3cr3t "pass" \\ word'


def _policy(instance='orders'):
    return mock.Mock(id='policy-1', instance_id=instance)


class TestDumpCommand(oslotest_base.BaseTestCase):

    def test_postgresql_password_goes_to_the_environment(self):
        command = local_job.dump_command(
            'postgresql+psycopg2://backup:%s@db1:5433/orders' % SECRET)
        self.assertEqual(local_job.POSTGRESQL, command.kind)
        self.assertEqual('.sql.gz', command.suffix)
        self.assertEqual(
            ('pg_dump', '--format=plain', '--no-password', '--host=db1',
             '--port=5433', '--username=backup', '--dbname=orders'),
            command.argv)
        self.assertEqual(SECRET, command.env['PGPASSWORD'])
        self.assertNotIn(SECRET, ' '.join(command.argv))
        self.assertIsNone(command.option_file)

    def test_postgresql_socket_and_ssl_from_the_query(self):
        command = local_job.dump_command(
            'postgresql://backup@/orders?host=/run/postgresql'
            '&sslmode=require')
        self.assertIn('--host=/run/postgresql', command.argv)
        self.assertEqual('require', command.env['PGSSLMODE'])
        self.assertNotIn('PGPASSWORD', command.env)

    def test_mysql_password_goes_to_an_option_file(self):
        command = local_job.dump_command(
            'mysql+pymysql://backup:%s@db2:3307/wiki?charset=utf8' % SECRET)
        self.assertEqual(local_job.MYSQL, command.kind)
        self.assertEqual('.sql.gz', command.suffix)
        argv = command.argv
        self.assertIn(argv[0], ('mariadb-dump', 'mysqldump'))
        for option in ('--single-transaction', '--routines', '--events',
                       '--triggers', '--protocol=tcp', '--host=db2',
                       '--port=3307', '--user=backup',
                       '--default-character-set=utf8'):
            self.assertIn(option, argv)
        self.assertEqual(('--', 'wiki'), argv[-2:])
        self.assertNotIn('s3cr3t', ' '.join(argv))
        self.assertEqual({}, command.env)
        self.assertEqual(
            '[client]\npassword="s3cr3t \\"pass\\" \\\\ word"\n',
            command.option_file)

    def test_mariadb_scheme_and_unix_socket(self):
        command = local_job.dump_command(
            'mariadb://backup@localhost/wiki?unix_socket=/run/mysqld.sock')
        self.assertEqual(local_job.MYSQL, command.kind)
        self.assertIn('--socket=/run/mysqld.sock', command.argv)
        self.assertNotIn('--protocol=tcp', command.argv)
        self.assertIn('--default-character-set=utf8mb4', command.argv)
        self.assertIsNone(command.option_file)

    def test_mysqldump_when_mariadb_dump_is_missing(self):
        url = 'mysql://backup@db2/wiki'
        command = local_job.dump_command(
            url, find_tool=lambda name: name == 'mysqldump')
        self.assertEqual('mysqldump', command.argv[0])
        command = local_job.dump_command(url, find_tool=lambda name: True)
        self.assertEqual('mariadb-dump', command.argv[0])

    def test_sqlite_file(self):
        command = local_job.dump_command('sqlite:////var/lib/notes/notes.db')
        self.assertEqual(local_job.SQLITE, command.kind)
        self.assertEqual('.sqlite.gz', command.suffix)
        self.assertEqual('/var/lib/notes/notes.db', command.sqlite_path)
        self.assertEqual((), command.argv)

    def test_unusable_urls(self):
        for url in ('sqlite://', 'sqlite:///relative.db',
                    'sqlite:///:memory:', 'oracle://u:p@h/db',
                    'postgresql://u:p@h', 'mysql://u:p@h/'):
            self.assertRaises(local_job.UnsupportedDatabase,
                              local_job.dump_command, url)

    def test_an_unparsable_url_is_not_quoted(self):
        error = self.assertRaises(local_job.UnsupportedDatabase,
                                  local_job.dump_command,
                                  'not a url with %s' % SECRET)
        self.assertNotIn('s3cr3t', str(error))


class TestManifestFiles(oslotest_base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(self.directory, 'b.json')

    def test_round_trip_leaves_only_the_manifest(self):
        local_job.write_manifest(self.path, {'id': 'b', 'status': 'NEW'})
        local_job.write_manifest(self.path, {'id': 'b', 'status': 'DONE'})
        self.assertEqual({'id': 'b', 'status': 'DONE'},
                         local_job.read_manifest(self.path))
        self.assertEqual(['b.json'], os.listdir(self.directory))
        self.assertEqual(0o600, stat.S_IMODE(os.stat(self.path).st_mode))

    def test_missing_manifest(self):
        self.assertIsNone(local_job.read_manifest(self.path))

    def test_a_failed_write_keeps_the_old_manifest(self):
        local_job.write_manifest(self.path, {'id': 'b'})
        self.assertRaises(TypeError, local_job.write_manifest, self.path,
                          {'id': object()})
        self.assertEqual({'id': 'b'}, local_job.read_manifest(self.path))
        self.assertEqual(['b.json'], os.listdir(self.directory))

    def test_finish(self):
        manifest = {'id': 'b', 'status': 'BUILDING', 'pid': 12}
        done = local_job.finish_manifest(manifest, 'FAILED', now=CREATED,
                                         fault='no')
        self.assertEqual(
            {'id': 'b', 'status': 'FAILED', 'pid': None, 'fault': 'no',
             'finished_at': CREATED.isoformat(),
             'updated_at': CREATED.isoformat()}, done)
        self.assertEqual('BUILDING', manifest['status'])

    def test_trim_fault_keeps_the_end(self):
        self.assertEqual('oops', local_job.trim_fault('\n oops \n'))
        trimmed = local_job.trim_fault('x' * 5000 + 'the end')
        self.assertTrue(trimmed.endswith('the end'))
        self.assertEqual(local_job.FAULT_LIMIT + 3, len(trimmed))


class TestJobAlive(oslotest_base.BaseTestCase):

    def test_this_process_is_alive(self):
        pid = os.getpid()
        self.assertTrue(local.job_alive(pid))
        self.assertTrue(local.job_alive(pid, local.process_start_time(pid)))

    def test_no_pid_or_no_process(self):
        self.assertFalse(local.job_alive(None))
        self.assertFalse(local.job_alive(DEAD_PID))

    def test_a_reused_pid_is_not_the_job(self):
        pid = os.getpid()
        started = local.process_start_time(pid)
        if started is None:
            self.skipTest('no /proc on this system')
        self.assertFalse(local.job_alive(pid, started - 1))

    def test_a_zombie_has_finished(self):
        if local.process_start_time(os.getpid()) is None:
            self.skipTest('no /proc on this system')
        process = subprocess.Popen(['true'])
        self.addCleanup(process.wait)
        deadline = time.monotonic() + 10
        while local._proc_stat(process.pid)[0] != 'Z':
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)
        self.assertFalse(local.job_alive(process.pid))


class TestHasTag(oslotest_base.BaseTestCase):

    def test_whole_tag_only(self):
        tag = base.execution_tag('abc')
        self.assertTrue(local.has_tag('nightly; %s' % tag, tag))
        self.assertTrue(local.has_tag('%s, by hand' % tag, tag))
        self.assertFalse(local.has_tag(base.execution_tag('abcd'), tag))
        self.assertFalse(local.has_tag(base.execution_tag('abc-1'), tag))
        self.assertFalse(local.has_tag(None, tag))


class _FakeStdin:

    def __init__(self, job):
        self.job = job
        self.written = b''
        self.closed = False

    def write(self, data):
        if self.job.broken:
            raise BrokenPipeError(32, 'Broken pipe')
        if data.startswith(local_job.START):
            # The job may only start once its manifest is on disk.
            self.job.manifest_at_start = local_job.read_manifest(
                self.job.argv[-1])
        self.written += data

    def close(self):
        self.closed = True


class _FakeJob:
    """A Popen that starts nothing; its pid is the test's own."""

    broken = False

    def __init__(self, argv, **kwargs):
        self.argv = argv
        self.kwargs = kwargs
        self.pid = os.getpid()
        self.stdin = _FakeStdin(self)
        self.killed = False
        self.manifest_at_start = None

    def poll(self):
        return None

    def kill(self):
        self.killed = True

    def wait(self):
        return -9


class _BackendTestCase(test_base.TestCase):

    def setUp(self):
        super().setUp()
        self.state_path = self.useFixture(fixtures.TempDir()).path
        self.flags(state_path=self.state_path)
        self.flags(group='local_backend', compression_level=3, instances={
            'orders': 'postgresql://backup:%s@db1/orders' % SECRET,
            'notes': 'sqlite:////var/lib/notes/notes.db',
        })
        self.backend = local.LocalBackend(self.conf)
        self.directory = os.path.join(self.state_path, 'backups', 'orders')
        self.jobs = []

    def _popen(self, argv, **kwargs):
        job = _FakeJob(argv, **kwargs)
        self.jobs.append(job)
        return job

    def _write(self, status=base.BackupStatus.BUILDING, created=CREATED,
               description='nightly', **values):
        os.makedirs(self.directory, exist_ok=True)
        backup_id = str(uuid.uuid4())
        manifest = local.new_manifest(
            backup_id, _policy(), 'orders-20261122T023015Z', description,
            local_job.POSTGRESQL, self.conf.host, DEAD_PID, None,
            now=created)
        manifest.update(status=status, **values)
        local_job.write_manifest(self._manifest_path(backup_id), manifest)
        return backup_id

    def _manifest_path(self, backup_id):
        return os.path.join(self.directory, backup_id + '.json')

    def _touch(self, filename, content=b'data'):
        path = os.path.join(self.directory, filename)
        with open(path, 'wb') as stream:
            stream.write(content)
        return path


class TestCreateBackup(_BackendTestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatch(
            'subprocess.Popen', side_effect=self._popen))

    def test_manifest_first_then_the_job_starts(self):
        tag = base.execution_tag('e-1')
        backup = self.backend.create_backup(_policy(), 'nightly-x',
                                            'nightly %s' % tag)
        self.assertEqual(base.BackupStatus.BUILDING, backup.status)
        self.assertEqual('orders', backup.instance_id)
        self.assertEqual('nightly-x', backup.name)
        self.assertIsNotNone(backup.created_at.tzinfo)
        [job] = self.jobs
        manifest_path = self._manifest_path(backup.id)
        self.assertEqual([sys.executable, '-m',
                          'dbaas_scheduler.backends.local_job',
                          manifest_path], job.argv)
        self.assertTrue(job.kwargs['start_new_session'])
        self.assertNotIn(SECRET, ' '.join(job.argv))
        manifest = job.manifest_at_start
        self.assertEqual(base.BackupStatus.BUILDING, manifest['status'])
        self.assertEqual(os.getpid(), manifest['pid'])
        self.assertEqual(self.conf.host, manifest['host'])
        self.assertEqual('nightly %s' % tag, manifest['description'])
        self.assertEqual('postgresql', manifest['kind'])
        self.assertNotIn('s3cr3t', json.dumps(manifest))
        # The URL travels through the pipe, with the compression level.
        orders_line, start = job.stdin.written.splitlines()
        self.assertEqual(
            {'url': 'postgresql://backup:%s@db1/orders' % SECRET,
             'compression_level': 3}, json.loads(orders_line))
        self.assertEqual(local_job.START, start)
        self.assertTrue(job.stdin.closed)

    def test_directories_under_the_state_path(self):
        self.backend.create_backup(_policy(), 'n', 'd')
        for path in (os.path.join(self.state_path, 'backups'),
                     self.directory):
            self.assertEqual(0o700, stat.S_IMODE(os.stat(path).st_mode))

    def test_the_running_job_is_building(self):
        backup = self.backend.create_backup(_policy(), 'n', 'd')
        self.assertEqual(base.BackupStatus.BUILDING,
                         self.backend.get_backup(_policy(), backup.id).status)
        # Another worker, without the Popen, judges by pid and start time.
        other = local.LocalBackend(self.conf)
        self.assertEqual(base.BackupStatus.BUILDING,
                         other.get_backup(_policy(), backup.id).status)

    def test_a_job_that_cannot_take_its_orders_leaves_nothing(self):
        _FakeJob.broken = True
        self.addCleanup(setattr, _FakeJob, 'broken', False)
        self.assertRaises(base.TransientBackendError,
                          self.backend.create_backup, _policy(), 'n', 'd')
        self.assertTrue(self.jobs[0].killed)
        self.assertEqual([], os.listdir(self.directory))

    def test_unknown_instance(self):
        error = self.assertRaises(base.InstanceNotFound,
                                  self.backend.create_backup,
                                  _policy('wiki'), 'n', 'd')
        self.assertIn('notes, orders', str(error))
        self.assertIn('wiki', str(error))
        self.assertEqual([], self.jobs)

    def test_no_instances_configured(self):
        self.flags(group='local_backend', instances={})
        error = self.assertRaises(base.InstanceNotFound,
                                  self.backend.create_backup,
                                  _policy(), 'n', 'd')
        self.assertIn('no instances are configured', str(error))

    def test_unsupported_url(self):
        self.flags(group='local_backend',
                   instances={'orders': 'oracle://u:%s@h/db' % SECRET})
        error = self.assertRaises(base.PermanentBackendError,
                                  self.backend.create_backup,
                                  _policy(), 'n', 'd')
        self.assertIn('cannot back up oracle databases', str(error))
        self.assertNotIn('s3cr3t', str(error))
        self.assertEqual([], self.jobs)

    def test_instance_names_cannot_escape_the_backup_dir(self):
        self.flags(group='local_backend',
                   instances={'../etc': 'sqlite:////tmp/x.db'})
        self.assertRaises(base.PermanentBackendError,
                          self.backend.create_backup,
                          _policy('../etc'), 'n', 'd')


class TestBackupStates(_BackendTestCase):

    def test_completed(self):
        finished = CREATED + datetime.timedelta(minutes=3)
        backup_id = self._write(
            status=base.BackupStatus.COMPLETED, pid=None,
            updated_at=finished.isoformat(), file='x.sql.gz',
            size_bytes=1234, sha256='ab' * 32)
        backup = self.backend.get_backup(_policy(), backup_id)
        self.assertEqual(base.BackupStatus.COMPLETED, backup.status)
        self.assertTrue(backup.finished)
        self.assertEqual(CREATED, backup.created_at)
        self.assertEqual(finished, backup.updated_at)
        self.assertEqual(1234, backup.size_bytes)
        self.assertEqual(os.path.join(self.directory, 'x.sql.gz'),
                         backup.location)
        self.assertIsNone(backup.fault)

    def test_failed_keeps_the_tools_words(self):
        backup_id = self._write(status=base.BackupStatus.FAILED, pid=None,
                                fault='pg_dump: error: connection refused')
        backup = self.backend.get_backup(_policy(), backup_id)
        self.assertEqual(base.BackupStatus.FAILED, backup.status)
        self.assertEqual('pg_dump: error: connection refused', backup.fault)
        self.assertIsNone(backup.location)

    def test_building_with_a_live_job(self):
        pid = os.getpid()
        backup_id = self._write(pid=pid,
                                pid_started=local.process_start_time(pid))
        backup = self.backend.get_backup(_policy(), backup_id)
        self.assertEqual(base.BackupStatus.BUILDING, backup.status)
        self.assertFalse(backup.finished)

    def test_building_with_a_dead_job_is_failed_and_cleaned_up(self):
        backup_id = self._write(pid=DEAD_PID)
        part = self._touch(backup_id + '.sql.gz.part')
        self._touch(backup_id + '.log', b'Traceback: MemoryError\n')
        backup = self.backend.get_backup(_policy(), backup_id)
        self.assertEqual(base.BackupStatus.FAILED, backup.status)
        self.assertIn('the dump process (pid %d) died' % DEAD_PID,
                      backup.fault)
        self.assertIn('MemoryError', backup.fault)
        self.assertFalse(os.path.exists(part))
        # Recorded, so that a later pid reuse cannot revive it.
        manifest = local_job.read_manifest(self._manifest_path(backup_id))
        self.assertEqual(base.BackupStatus.FAILED, manifest['status'])
        self.assertIsNone(manifest['pid'])

    def test_building_with_a_reused_pid_is_failed(self):
        pid = os.getpid()
        started = local.process_start_time(pid)
        if started is None:
            self.skipTest('no /proc on this system')
        backup_id = self._write(pid=pid, pid_started=started - 1)
        self.assertEqual(base.BackupStatus.FAILED,
                         self.backend.get_backup(_policy(), backup_id).status)

    def test_a_job_finishing_while_we_look_is_not_failed(self):
        backup_id = self._write(pid=DEAD_PID)
        data = self._touch(backup_id + '.sql.gz')
        manifest_path = self._manifest_path(backup_id)

        def job_finishes(pid, started):
            manifest = local_job.read_manifest(manifest_path)
            local_job.write_manifest(manifest_path, local_job.finish_manifest(
                manifest, base.BackupStatus.COMPLETED,
                file=backup_id + '.sql.gz'))
            return False

        with mock.patch.object(local, 'job_alive', autospec=True,
                               side_effect=job_finishes):
            backup = self.backend.get_backup(_policy(), backup_id)
        self.assertEqual(base.BackupStatus.COMPLETED, backup.status)
        self.assertTrue(os.path.exists(data))

    def test_another_hosts_job_is_not_judged_here(self):
        backup_id = self._write(pid=DEAD_PID, host='other-host')
        part = self._touch(backup_id + '.sql.gz.part')
        backup = self.backend.get_backup(_policy(), backup_id)
        self.assertEqual(base.BackupStatus.BUILDING, backup.status)
        self.assertTrue(os.path.exists(part))
        error = self.assertRaises(base.TransientBackendError,
                                  self.backend.delete_backup, _policy(),
                                  backup_id)
        self.assertIn('other-host', str(error))
        self.assertTrue(os.path.exists(part))
        self.flags(host='other-host')
        self.assertEqual(base.BackupStatus.FAILED,
                         self.backend.get_backup(_policy(), backup_id).status)

    def test_unknown_backup(self):
        os.makedirs(self.directory)
        for backup_id in (str(uuid.uuid4()), '../../etc/passwd', '',
                          str(uuid.uuid4()).upper()):
            self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                              _policy(), backup_id)

    def test_a_backup_of_another_instance_is_not_found(self):
        backup_id = self._write(status=base.BackupStatus.COMPLETED)
        self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                          _policy('notes'), backup_id)

    def test_unknown_instance(self):
        self.assertRaises(base.InstanceNotFound, self.backend.get_backup,
                          _policy('wiki'), str(uuid.uuid4()))


class TestFindListDelete(_BackendTestCase):

    def test_nothing_yet(self):
        self.assertEqual([], self.backend.list_backups(_policy()))
        self.assertIsNone(self.backend.find_backup(
            _policy(), base.execution_tag('e-1')))

    def test_list_is_oldest_first_and_skips_other_files(self):
        later = self._write(status=base.BackupStatus.COMPLETED,
                            created=CREATED + datetime.timedelta(days=1))
        earlier = self._write(status=base.BackupStatus.FAILED)
        self._touch('.%s.json1234.tmp' % later, b'{')
        self._touch('notes.txt')
        self._touch('%s.sql.gz' % later)
        backups = self.backend.list_backups(_policy())
        self.assertEqual([earlier, later], [b.id for b in backups])
        self.assertEqual([], self.backend.list_backups(_policy('notes')))

    def test_an_unreadable_manifest_is_skipped(self):
        backup_id = self._write(status=base.BackupStatus.COMPLETED)
        self._touch('%s.json' % uuid.uuid4(), b'{"id": ')
        self.assertEqual([backup_id], [
            b.id for b in self.backend.list_backups(_policy())])

    def test_list_reports_dead_jobs_as_failed(self):
        self._write(pid=DEAD_PID)
        [backup] = self.backend.list_backups(_policy())
        self.assertEqual(base.BackupStatus.FAILED, backup.status)

    def test_find_by_tag(self):
        wanted = self._write(status=base.BackupStatus.COMPLETED,
                             description='nightly; %s' % base.execution_tag(
                                 'e-1'))
        self._write(status=base.BackupStatus.COMPLETED,
                    description=base.execution_tag('e-10'))
        found = self.backend.find_backup(_policy(),
                                         base.execution_tag('e-1'))
        self.assertEqual(wanted, found.id)
        self.assertIsNone(self.backend.find_backup(
            _policy(), base.execution_tag('e-2')))
        self.assertIsNone(self.backend.find_backup(
            _policy('notes'), base.execution_tag('e-1')))

    def test_find_prefers_the_newest(self):
        tag = base.execution_tag('e-1')
        self._write(status=base.BackupStatus.FAILED, description=tag)
        newest = self._write(status=base.BackupStatus.COMPLETED,
                             description=tag,
                             created=CREATED + datetime.timedelta(hours=1))
        self.assertEqual(newest,
                         self.backend.find_backup(_policy(), tag).id)

    def test_delete_removes_every_file_of_the_backup(self):
        backup_id = self._write(status=base.BackupStatus.COMPLETED)
        kept = self._write(status=base.BackupStatus.COMPLETED)
        for suffix in ('.sql.gz', '.sql.gz.part', '.log'):
            self._touch(backup_id + suffix)
        self._touch(kept + '.sql.gz')
        self.backend.delete_backup(_policy(), backup_id)
        self.assertEqual(sorted([kept + '.json', kept + '.sql.gz']),
                         sorted(os.listdir(self.directory)))
        self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                          _policy(), backup_id)
        # Gone already: no error.
        self.backend.delete_backup(_policy(), backup_id)

    def test_delete_without_a_directory(self):
        self.backend.delete_backup(_policy(), str(uuid.uuid4()))

    def test_delete_of_a_dead_job(self):
        backup_id = self._write(pid=DEAD_PID)
        self._touch(backup_id + '.sql.gz.part')
        self.backend.delete_backup(_policy(), backup_id)
        self.assertEqual([], os.listdir(self.directory))


class TestJob(oslotest_base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.backup_id = str(uuid.uuid4())
        self.manifest_path = os.path.join(self.directory,
                                          self.backup_id + '.json')
        self.manifest = local.new_manifest(
            self.backup_id, _policy(), 'n', 'd', local_job.SQLITE, 'host-1',
            os.getpid(), None, now=CREATED)

    def test_orders(self):
        orders = {'url': 'sqlite:////x.db', 'compression_level': 6}
        line = json.dumps(orders).encode() + b'\n'
        self.assertEqual(orders, local_job.receive_orders(
            io.BytesIO(line + b'start\n')))
        # The creator died after sending them: the manifest decides.
        self.assertEqual(orders, local_job.receive_orders(io.BytesIO(line)))
        self.assertIsNone(local_job.receive_orders(io.BytesIO(b'')))
        self.assertIsNone(local_job.receive_orders(
            io.BytesIO(line[:10])))

    def _main(self, stdin=b'{"url": "sqlite:////x.db"}\nstart\n'):
        stream = mock.Mock(buffer=io.BytesIO(stdin))
        with mock.patch.object(sys, 'stdin', stream), \
                mock.patch.object(local_job, 'run', autospec=True) as run, \
                mock.patch.object(local_job.signal, 'signal', autospec=True), \
                mock.patch.object(os, 'umask', autospec=True):
            run.return_value = {'status': base.BackupStatus.COMPLETED}
            code = local_job.main([self.manifest_path])
        return code, run

    def test_no_manifest_no_backup(self):
        code, run = self._main()
        self.assertEqual(0, code)
        run.assert_not_called()

    def test_a_manifest_naming_another_job(self):
        self.manifest['pid'] = DEAD_PID
        local_job.write_manifest(self.manifest_path, self.manifest)
        code, run = self._main()
        self.assertEqual(0, code)
        run.assert_not_called()

    def test_no_orders(self):
        local_job.write_manifest(self.manifest_path, self.manifest)
        code, run = self._main(stdin=b'')
        self.assertEqual(1, code)
        run.assert_not_called()

    def test_its_own_manifest(self):
        local_job.write_manifest(self.manifest_path, self.manifest)
        code, run = self._main()
        run.assert_called_once_with(self.manifest_path, self.manifest,
                                    {'url': 'sqlite:////x.db'})
        self.assertEqual(0, code)

    def _fake_tool(self, script):
        tools = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tools, 'fake-dump')
        with open(path, 'w') as stream:
            stream.write('#!/bin/sh\n' + script)
        os.chmod(path, 0o700)
        return path

    def _run(self, command):
        with mock.patch.object(local_job, 'dump_command', autospec=True,
                               return_value=command):
            return local_job.run(self.manifest_path, self.manifest,
                                 {'url': 'x', 'compression_level': 1})

    def test_a_tool_failing_half_way_leaves_no_file(self):
        tool = self._fake_tool('echo "CREATE TABLE half;"\n'
                               'echo "fake-dump: lost connection" >&2\n'
                               'exit 3\n')
        result = self._run(local_job.DumpCommand(
            kind=local_job.POSTGRESQL, suffix='.sql.gz', argv=(tool,)))
        self.assertEqual(base.BackupStatus.FAILED, result['status'])
        self.assertEqual('fake-dump: lost connection', result['fault'])
        self.assertEqual([self.backup_id + '.json'],
                         os.listdir(self.directory))
        self.assertEqual(result, local_job.read_manifest(self.manifest_path))

    def test_a_missing_tool(self):
        result = self._run(local_job.DumpCommand(
            kind=local_job.POSTGRESQL, suffix='.sql.gz',
            argv=('/nonexistent/pg_dump',)))
        self.assertEqual(base.BackupStatus.FAILED, result['status'])
        self.assertIn('/nonexistent/pg_dump is not installed',
                      result['fault'])

    def test_the_option_file_reaches_the_tool_and_no_directory(self):
        # The fake tool prints its option file and its arguments.
        tool = self._fake_tool('cat "${1#--defaults-extra-file=}"\n'
                               'echo "$@"\n'
                               'ls -A "%s"\n' % self.directory)
        result = self._run(local_job.DumpCommand(
            kind=local_job.MYSQL, suffix='.sql.gz', argv=(tool, '--', 'db'),
            option_file='[client]\npassword="pw"\n'))
        self.assertEqual(base.BackupStatus.COMPLETED, result['status'])
        data_path = os.path.join(self.directory, self.backup_id + '.sql.gz')
        with gzip.open(data_path, 'rb') as stream:
            output = stream.read().decode().splitlines()
        self.assertEqual(['[client]', 'password="pw"'], output[:2])
        self.assertTrue(output[2].startswith('--defaults-extra-file=/dev/fd/'))
        self.assertTrue(output[2].endswith(' -- db'))
        # While the tool ran, the directory held its partial dump only.
        self.assertEqual([self.backup_id + '.sql.gz.part'], output[3:])

    def test_checksum_and_size_of_the_compressed_file(self):
        tool = self._fake_tool('seq 1 20000\n')
        result = self._run(local_job.DumpCommand(
            kind=local_job.POSTGRESQL, suffix='.sql.gz', argv=(tool,)))
        data_path = os.path.join(self.directory, self.backup_id + '.sql.gz')
        with open(data_path, 'rb') as stream:
            content = stream.read()
        self.assertEqual(hashlib.sha256(content).hexdigest(),
                         result['sha256'])
        self.assertEqual(len(content), result['size_bytes'])
        self.assertEqual(self.backup_id + '.sql.gz', result['file'])
        self.assertEqual(
            ''.join('%d\n' % n for n in range(1, 20001)).encode(),
            gzip.decompress(content))
        self.assertEqual(0o600, stat.S_IMODE(os.stat(data_path).st_mode))
