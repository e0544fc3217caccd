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
"""LocalBackend without databases: the manifests' states, the job's start."""

import datetime
import json
import logging
import os
import stat
import sys
from unittest import mock
import uuid

import fixtures
from oslotest import base as oslotest_base

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.local import backend as local
from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.backends.local import job as local_job
from dbaas_scheduler.backends.local import job_control
from dbaas_scheduler.backends.local import manifests
from dbaas_scheduler.tests import base as test_base
from dbaas_scheduler.tests.unit.backends.local import fakes

# The execution a backup's description names (its tag).
EXECUTION = '0b7e0c5e-3c1a-4f0e-9d6b-2a8f4e1c7d90'


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
            self.job.manifest_at_start = manifests.read_manifest(
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
            'orders': 'postgresql://backup:%s@db1/orders' % fakes.SECRET,
            'notes': 'sqlite:////var/lib/notes/notes.db',
        })
        self.backend = local.LocalBackend(self.conf)
        self.directory = os.path.join(self.state_path, 'backups', 'orders')
        self.jobs = []

    def _popen(self, argv, **kwargs):
        job = _FakeJob(argv, **kwargs)
        self.jobs.append(job)
        return job

    def _write(self, status=base.BackupStatus.BUILDING, created=fakes.CREATED,
               description='nightly', **values):
        os.makedirs(self.directory, exist_ok=True)
        backup_id = str(uuid.uuid4())
        manifest = manifests.new_manifest(
            backup_id, fakes.policy(), 'orders-20261122T023015Z', description,
            commands.POSTGRESQL, self.conf.host, fakes.DEAD_PID, None,
            now=created)
        manifest.update(status=status, **values)
        manifests.write_manifest(self._manifest_path(backup_id), manifest)
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
        backup = self.backend.create_backup(fakes.policy(), 'nightly-x',
                                            'nightly %s' % tag)
        self.assertEqual(base.BackupStatus.BUILDING, backup.status)
        self.assertEqual('orders', backup.instance_id)
        self.assertEqual('nightly-x', backup.name)
        self.assertIsNotNone(backup.created_at.tzinfo)
        [job] = self.jobs
        manifest_path = self._manifest_path(backup.id)
        self.assertEqual([sys.executable, '-m',
                          'dbaas_scheduler.backends.local.job',
                          manifest_path], job.argv)
        self.assertTrue(job.kwargs['start_new_session'])
        self.assertNotIn(fakes.SECRET, ' '.join(job.argv))
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
            {'url': 'postgresql://backup:%s@db1/orders' % fakes.SECRET,
             'compression_level': 3}, json.loads(orders_line))
        self.assertEqual(local_job.START, start)
        self.assertTrue(job.stdin.closed)

    def test_directories_under_the_state_path(self):
        self.backend.create_backup(fakes.policy(), 'n', 'd')
        for path in (os.path.join(self.state_path, 'backups'),
                     self.directory):
            self.assertEqual(0o700, stat.S_IMODE(os.stat(path).st_mode))

    def test_the_running_job_is_building(self):
        backup = self.backend.create_backup(fakes.policy(), 'n', 'd')
        self.assertEqual(base.BackupStatus.BUILDING,
                         self.backend.get_backup(fakes.policy(),
                                                 backup.id).status)
        # Another worker, without the Popen, judges by pid and start time.
        other = local.LocalBackend(self.conf)
        self.assertEqual(base.BackupStatus.BUILDING,
                         other.get_backup(fakes.policy(), backup.id).status)

    def test_a_job_that_cannot_take_its_orders_leaves_nothing(self):
        _FakeJob.broken = True
        self.addCleanup(setattr, _FakeJob, 'broken', False)
        self.assertRaises(base.TransientBackendError,
                          self.backend.create_backup, fakes.policy(), 'n', 'd')
        self.assertTrue(self.jobs[0].killed)
        self.assertEqual([], os.listdir(self.directory))

    def test_unknown_instance(self):
        error = self.assertRaises(base.InstanceNotFound,
                                  self.backend.create_backup,
                                  fakes.policy('wiki'), 'n', 'd')
        # A tenant reads it: the operator's instance names are not in it.
        self.assertNotIn('notes', str(error))
        self.assertNotIn('orders', str(error))
        self.assertIn('wiki', str(error))
        self.assertIn('not a local instance of this service', str(error))
        self.assertEqual([], self.jobs)

    def test_no_instances_configured(self):
        self.flags(group='local_backend', instances={})
        error = self.assertRaises(base.InstanceNotFound,
                                  self.backend.create_backup,
                                  fakes.policy(), 'n', 'd')
        self.assertIn('not a local instance of this service', str(error))

    def test_unsupported_url(self):
        self.flags(group='local_backend',
                   instances={'orders': 'oracle://u:%s@h/db' % fakes.SECRET})
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        error = self.assertRaises(
            base.PermanentBackendError, self.backend.create_backup,
            fakes.policy(), 'n', 'd ' + base.execution_tag(EXECUTION))
        self.assertIn('instance orders cannot be backed up as configured; '
                      'the service\'s operator finds the cause in its log',
                      str(error))
        self.assertNotIn('oracle', str(error))
        self.assertIn('Execution %s: local backend: instance orders in '
                      '[local_backend] instances: cannot back up oracle '
                      'databases' % EXECUTION, log.output)
        self.assertNotIn('s3cr3t', str(error) + log.output)
        self.assertEqual([], self.jobs)

    def test_instance_names_cannot_escape_the_backup_dir(self):
        self.flags(group='local_backend',
                   instances={'../etc': 'sqlite:////tmp/x.db'})
        self.assertRaises(base.PermanentBackendError,
                          self.backend.create_backup,
                          fakes.policy('../etc'), 'n', 'd')


class TestBackupStates(_BackendTestCase):

    def test_completed(self):
        finished = fakes.CREATED + datetime.timedelta(minutes=3)
        backup_id = self._write(
            status=base.BackupStatus.COMPLETED, pid=None,
            updated_at=finished.isoformat(), file='x.sql.gz',
            size_bytes=1234, sha256='ab' * 32)
        backup = self.backend.get_backup(fakes.policy(), backup_id)
        self.assertEqual(base.BackupStatus.COMPLETED, backup.status)
        self.assertTrue(backup.finished)
        self.assertEqual(fakes.CREATED, backup.created_at)
        self.assertEqual(finished, backup.updated_at)
        self.assertEqual(1234, backup.size_bytes)
        self.assertEqual(os.path.join(self.directory, 'x.sql.gz'),
                         backup.location)
        self.assertIsNone(backup.fault)

    def test_the_tools_words_go_to_the_log_not_the_fault(self):
        log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
        words = ('pg_dump: error: connection to server at "db1.internal" '
                 '(10.0.0.5), port 5432 failed')
        backup_id = self._write(
            status=base.BackupStatus.FAILED, pid=None, fault=words,
            description='x ' + base.execution_tag(EXECUTION))
        backup = self.backend.get_backup(fakes.policy(), backup_id)
        self.assertEqual(base.BackupStatus.FAILED, backup.status)
        # The fault reaches the tenant's execution: no host, no path.
        self.assertEqual('the dump failed; the service\'s operator finds '
                         'the cause in its log (backup %s)' % backup_id,
                         backup.fault)
        self.assertIsNone(backup.location)
        self.assertIn('Execution %s: local backup %s of instance orders '
                      'failed: %s' % (EXECUTION, backup_id, words),
                      log.output)
        [listed] = self.backend.list_backups(fakes.policy())
        self.assertEqual(backup.fault, listed.fault)

    def test_building_with_a_live_job(self):
        pid = os.getpid()
        backup_id = self._write(pid=pid,
                                pid_started=job_control.process_start_time(
                                    pid))
        backup = self.backend.get_backup(fakes.policy(), backup_id)
        self.assertEqual(base.BackupStatus.BUILDING, backup.status)
        self.assertFalse(backup.finished)

    def test_building_with_a_dead_job_is_failed_and_cleaned_up(self):
        backup_id = self._write(pid=fakes.DEAD_PID)
        part = self._touch(backup_id + '.sql.gz.part')
        self._touch(backup_id + '.log', b'Traceback: MemoryError\n')
        backup = self.backend.get_backup(fakes.policy(), backup_id)
        self.assertEqual(base.BackupStatus.FAILED, backup.status)
        self.assertNotIn('MemoryError', backup.fault)
        self.assertFalse(os.path.exists(part))
        # Recorded, so that a later pid reuse cannot revive it; the
        # manifest (the operator's) keeps the job's last words.
        manifest = manifests.read_manifest(self._manifest_path(backup_id))
        self.assertEqual(base.BackupStatus.FAILED, manifest['status'])
        self.assertIsNone(manifest['pid'])
        self.assertIn('the dump process (pid %d) died' % fakes.DEAD_PID,
                      manifest['fault'])
        self.assertIn('MemoryError', manifest['fault'])

    def test_building_with_a_reused_pid_is_failed(self):
        pid = os.getpid()
        started = job_control.process_start_time(pid)
        if started is None:
            self.skipTest('no /proc on this system')
        backup_id = self._write(pid=pid, pid_started=started - 1)
        self.assertEqual(base.BackupStatus.FAILED,
                         self.backend.get_backup(fakes.policy(),
                                                 backup_id).status)

    def test_a_job_finishing_while_we_look_is_not_failed(self):
        backup_id = self._write(pid=fakes.DEAD_PID)
        data = self._touch(backup_id + '.sql.gz')
        manifest_path = self._manifest_path(backup_id)

        def job_finishes(pid, started):
            manifest = manifests.read_manifest(manifest_path)
            manifests.write_manifest(manifest_path, manifests.finish_manifest(
                manifest, base.BackupStatus.COMPLETED,
                file=backup_id + '.sql.gz'))
            return False

        with mock.patch.object(job_control, 'job_alive', autospec=True,
                               side_effect=job_finishes):
            backup = self.backend.get_backup(fakes.policy(), backup_id)
        self.assertEqual(base.BackupStatus.COMPLETED, backup.status)
        self.assertTrue(os.path.exists(data))

    def test_another_hosts_job_is_not_judged_here(self):
        backup_id = self._write(pid=fakes.DEAD_PID, host='other-host')
        part = self._touch(backup_id + '.sql.gz.part')
        backup = self.backend.get_backup(fakes.policy(), backup_id)
        self.assertEqual(base.BackupStatus.BUILDING, backup.status)
        self.assertTrue(os.path.exists(part))
        error = self.assertRaises(base.TransientBackendError,
                                  self.backend.delete_backup, fakes.policy(),
                                  backup_id)
        self.assertIn('other-host', str(error))
        self.assertTrue(os.path.exists(part))
        self.flags(host='other-host')
        self.assertEqual(base.BackupStatus.FAILED,
                         self.backend.get_backup(fakes.policy(),
                                                 backup_id).status)

    def test_unknown_backup(self):
        os.makedirs(self.directory)
        for backup_id in (str(uuid.uuid4()), '../../etc/passwd', '',
                          str(uuid.uuid4()).upper()):
            self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                              fakes.policy(), backup_id)

    def test_a_backup_of_another_instance_is_not_found(self):
        backup_id = self._write(status=base.BackupStatus.COMPLETED)
        self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                          fakes.policy('notes'), backup_id)

    def test_unknown_instance(self):
        self.assertRaises(base.InstanceNotFound, self.backend.get_backup,
                          fakes.policy('wiki'), str(uuid.uuid4()))


class TestFindListDelete(_BackendTestCase):

    def test_a_file_where_the_directory_goes_is_a_clear_error(self):
        os.makedirs(os.path.dirname(self.directory))
        with open(self.directory, 'w') as stream:
            stream.write('not a directory')
        for call, args in ((self.backend.list_backups, ()),
                           (self.backend.find_backup, ('tag',)),
                           (self.backend.get_backup, (str(uuid.uuid4()),)),
                           (self.backend.delete_backup,
                            (str(uuid.uuid4()),)),
                           (self.backend.create_backup, ('n', 'd'))):
            log = self.useFixture(fixtures.FakeLogger(level=logging.WARNING))
            error = self.assertRaises(base.PermanentBackendError, call,
                                      fakes.policy(), *args)
            self.assertIn('the backup directory of instance orders is '
                          'unusable; the service\'s operator finds the '
                          'cause in its log', str(error))
            self.assertNotIn(self.directory, str(error))
            self.assertIn('%s, where the backups of instance orders go, '
                          'is not a directory' % self.directory, log.output)

    def test_nothing_yet(self):
        self.assertEqual([], self.backend.list_backups(fakes.policy()))
        self.assertIsNone(self.backend.find_backup(
            fakes.policy(), base.execution_tag('e-1')))

    def test_list_is_oldest_first_and_skips_other_files(self):
        later = self._write(status=base.BackupStatus.COMPLETED,
                            created=fakes.CREATED + datetime.timedelta(days=1))
        earlier = self._write(status=base.BackupStatus.FAILED)
        self._touch('.%s.json1234.tmp' % later, b'{')
        self._touch('notes.txt')
        self._touch('%s.sql.gz' % later)
        backups = self.backend.list_backups(fakes.policy())
        self.assertEqual([earlier, later], [b.id for b in backups])
        self.assertEqual([], self.backend.list_backups(fakes.policy('notes')))

    def test_an_unreadable_manifest_is_skipped(self):
        backup_id = self._write(status=base.BackupStatus.COMPLETED)
        self._touch('%s.json' % uuid.uuid4(), b'{"id": ')
        self.assertEqual([backup_id], [
            b.id for b in self.backend.list_backups(fakes.policy())])

    def test_list_reports_dead_jobs_as_failed(self):
        self._write(pid=fakes.DEAD_PID)
        [backup] = self.backend.list_backups(fakes.policy())
        self.assertEqual(base.BackupStatus.FAILED, backup.status)

    def test_find_by_tag(self):
        wanted = self._write(status=base.BackupStatus.COMPLETED,
                             description='nightly; %s' % base.execution_tag(
                                 'e-1'))
        self._write(status=base.BackupStatus.COMPLETED,
                    description=base.execution_tag('e-10'))
        found = self.backend.find_backup(fakes.policy(),
                                         base.execution_tag('e-1'))
        self.assertEqual(wanted, found.id)
        self.assertIsNone(self.backend.find_backup(
            fakes.policy(), base.execution_tag('e-2')))
        self.assertIsNone(self.backend.find_backup(
            fakes.policy('notes'), base.execution_tag('e-1')))

    def test_find_prefers_the_newest(self):
        tag = base.execution_tag('e-1')
        self._write(status=base.BackupStatus.FAILED, description=tag)
        newest = self._write(status=base.BackupStatus.COMPLETED,
                             description=tag,
                             created=(fakes.CREATED
                                      + datetime.timedelta(hours=1)))
        self.assertEqual(newest,
                         self.backend.find_backup(fakes.policy(), tag).id)

    def test_delete_removes_every_file_of_the_backup(self):
        backup_id = self._write(status=base.BackupStatus.COMPLETED)
        kept = self._write(status=base.BackupStatus.COMPLETED)
        for suffix in ('.sql.gz', '.sql.gz.part', '.log'):
            self._touch(backup_id + suffix)
        self._touch(kept + '.sql.gz')
        self.backend.delete_backup(fakes.policy(), backup_id)
        self.assertEqual(sorted([kept + '.json', kept + '.sql.gz']),
                         sorted(os.listdir(self.directory)))
        self.assertRaises(base.BackupNotFound, self.backend.get_backup,
                          fakes.policy(), backup_id)
        # Gone already: no error.
        self.backend.delete_backup(fakes.policy(), backup_id)

    def test_delete_without_a_directory(self):
        self.backend.delete_backup(fakes.policy(), str(uuid.uuid4()))

    def test_delete_of_a_dead_job(self):
        backup_id = self._write(pid=fakes.DEAD_PID)
        self._touch(backup_id + '.sql.gz.part')
        self.backend.delete_backup(fakes.policy(), backup_id)
        self.assertEqual([], os.listdir(self.directory))
