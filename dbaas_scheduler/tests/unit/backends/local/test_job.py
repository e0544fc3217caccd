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
"""The job process: its orders, its refusals, the dump it records."""

import gzip
import hashlib
import io
import json
import os
import stat
import sys
from unittest import mock
import uuid

import fixtures
from oslotest import base as oslotest_base

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.backends.local import job as local_job
from dbaas_scheduler.backends.local import manifests
from dbaas_scheduler.tests.unit.backends.local import fakes


class TestJob(oslotest_base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.backup_id = str(uuid.uuid4())
        self.manifest_path = os.path.join(self.directory,
                                          self.backup_id + '.json')
        self.manifest = manifests.new_manifest(
            self.backup_id, fakes.policy(), 'n', 'd', commands.SQLITE,
            'host-1', os.getpid(), None, now=fakes.CREATED)

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
        self.manifest['pid'] = fakes.DEAD_PID
        manifests.write_manifest(self.manifest_path, self.manifest)
        code, run = self._main()
        self.assertEqual(0, code)
        run.assert_not_called()

    def test_no_orders(self):
        manifests.write_manifest(self.manifest_path, self.manifest)
        code, run = self._main(stdin=b'')
        self.assertEqual(1, code)
        run.assert_not_called()

    def test_its_own_manifest(self):
        manifests.write_manifest(self.manifest_path, self.manifest)
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
        with mock.patch.object(commands, 'dump_command', autospec=True,
                               return_value=command):
            return local_job.run(self.manifest_path, self.manifest,
                                 {'url': 'x', 'compression_level': 1})

    def test_a_tool_failing_half_way_leaves_no_file(self):
        tool = self._fake_tool('echo "CREATE TABLE half;"\n'
                               'echo "fake-dump: lost connection" >&2\n'
                               'exit 3\n')
        result = self._run(commands.DumpCommand(
            kind=commands.POSTGRESQL, suffix='.sql.gz', argv=(tool,)))
        self.assertEqual(base.BackupStatus.FAILED, result['status'])
        self.assertEqual('fake-dump: lost connection', result['fault'])
        self.assertEqual([self.backup_id + '.json'],
                         os.listdir(self.directory))
        self.assertEqual(result, manifests.read_manifest(self.manifest_path))

    def test_a_missing_tool(self):
        result = self._run(commands.DumpCommand(
            kind=commands.POSTGRESQL, suffix='.sql.gz',
            argv=('/nonexistent/pg_dump',)))
        self.assertEqual(base.BackupStatus.FAILED, result['status'])
        self.assertIn('/nonexistent/pg_dump is not installed',
                      result['fault'])

    def test_the_option_file_reaches_the_tool_and_no_directory(self):
        # The fake tool prints its option file and its arguments.
        tool = self._fake_tool('cat "${1#--defaults-extra-file=}"\n'
                               'echo "$@"\n'
                               'ls -A "%s"\n' % self.directory)
        result = self._run(commands.DumpCommand(
            kind=commands.MYSQL, suffix='.sql.gz', argv=(tool, '--', 'db'),
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
        result = self._run(commands.DumpCommand(
            kind=commands.POSTGRESQL, suffix='.sql.gz', argv=(tool,)))
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
