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
"""An operator's mistakes, made with the real console scripts.

Each program is run as installed (``.venv/bin/dbaas-scheduler-*``) with a
configuration file of the test's own.  A mistake must end the program
with a non-zero status and exactly one line on standard error that names
what to fix -- no traceback, no password -- and ``--debug`` must bring
the traceback back.
"""

import os
import socket
import subprocess
import sys
import urllib.parse

import fixtures
import sqlalchemy as sa
from testtools import content

from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.fixtures import tcp_proxy

SERVICES = ('api', 'engine', 'worker')
PROGRAMS = ('all',) + SERVICES + ('manage', 'status')

# What each program is given to do besides its options.
ARGUMENTS = {'manage': ['db', 'version'], 'status': ['upgrade', 'check']}
# oslo.upgradecheck's exit codes 1 and 2 are a warning and a failure.
ERROR_STATUS = {'status': 255}

PASSWORD = 'Wr0ng-Passw0rd'
MARIADB = ('mysql+pymysql://openstack_citest:%s@127.0.0.1/openstack_citest'
           % PASSWORD)
# Nothing listens on port 1.
UNREACHABLE_DB = ('postgresql+psycopg2://openstack_citest:%s@127.0.0.1:1/'
                  'openstack_citest' % PASSWORD)


def script(program):
    """The installed console script of ``dbaas-scheduler-<program>``."""
    return os.path.join(os.path.dirname(sys.executable),
                        'dbaas-scheduler-%s' % program)


class OperatorMistakeTest(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.state = os.path.join(self.tempdir, 'state')
        # A regular file: no directory can be made below it.
        self.not_a_directory = os.path.join(self.tempdir, 'a-file')
        with open(self.not_a_directory, 'w') as stream:
            stream.write('not a directory\n')

    def config(self, sections, name='test.conf'):
        sections = dict(sections)
        default = dict(sections.get('DEFAULT', {}))
        default.setdefault('state_path', self.state)
        sections['DEFAULT'] = default
        path = os.path.join(self.tempdir, name)
        process_fixtures.write_config(path, sections)
        return path

    def run_program(self, program, config, *extra, timeout=120):
        args = [script(program)]
        if config is not None:
            args += ['--config-file', config]
        args += list(extra) + ARGUMENTS.get(program, [])
        done = subprocess.run(args, capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
        self.addDetail('%s-%d' % (program, len(self.getDetails())),
                       content.text_content(
                           'exit %s\nstdout:\n%s\nstderr:\n%s'
                           % (done.returncode, done.stdout, done.stderr)))
        return done

    def assertRefused(self, program, config, starts_with, *extra,
                      timeout=120):
        """``program`` exits with its error status and one line."""
        done = self.run_program(program, config, *extra, timeout=timeout)
        self.assertEqual(ERROR_STATUS.get(program, 1), done.returncode)
        self.assertNotIn('Traceback', done.stderr + done.stdout)
        self.assertNotIn(PASSWORD, done.stderr + done.stdout)
        lines = [line for line in done.stderr.splitlines()
                 if ' WARNING ' not in line]
        self.assertEqual(1, len(lines), done.stderr)
        self.assertTrue(
            lines[0].startswith('dbaas-scheduler-%s: %s' % (program,
                                                            starts_with)),
            lines[0])
        return lines[0]

    def migrated_sqlite(self):
        """A SQLite database with the schema, made by the manage command."""
        url = 'sqlite:///%s' % os.path.join(self.tempdir, 'shared.sqlite')
        config = self.config({'database': {'connection': url}},
                             'migrate.conf')
        done = subprocess.run(
            [script('manage'), '--config-file', config, 'db', 'upgrade'],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(0, done.returncode, done.stderr)
        return url

    def require(self, reason):
        if reason:
            if db_fixtures.backends_required():
                self.fail(reason)
            self.skipTest(reason)


class TestConfigurationFile(OperatorMistakeTest):

    def test_a_missing_config_file_is_one_line(self):
        missing = os.path.join(self.tempdir, 'no-such.conf')
        for program in PROGRAMS:
            line = self.assertRefused(program, missing,
                                      'configuration file not found: ')
            self.assertIn(missing, line)

    def test_debug_brings_the_traceback_back(self):
        missing = os.path.join(self.tempdir, 'no-such.conf')
        done = self.run_program('manage', missing, '--debug')
        self.assertEqual(1, done.returncode)
        self.assertIn('Traceback', done.stderr)
        self.assertEqual('dbaas-scheduler-manage: configuration file not '
                         'found: %s' % missing,
                         done.stderr.splitlines()[-1])

    def test_a_bad_value_is_one_line_before_anything_is_done(self):
        config = self.config({'engine': {'tick_threads': 'abc'}})
        for program in PROGRAMS:
            line = self.assertRefused(
                program, config, "[engine] tick_threads in %s is not valid: "
                "'abc' is not a whole number" % config)
            self.assertNotIn('LocationInfo', line)
        # Refused before the embedded database was made.
        self.assertFalse(os.path.exists(self.state))

    def test_an_out_of_range_value_is_one_line(self):
        config = self.config({'api': {'bind_port': '99999'}})
        self.assertRefused('all', config, '[api] bind_port in %s is not '
                           'valid: Should be less than or equal to 65535'
                           % config)


class TestDatabase(OperatorMistakeTest):

    def _mariadb_reason(self):
        right = MARIADB.replace(PASSWORD, 'openstack_citest')
        try:
            engine = sa.create_engine(right, poolclass=sa.pool.NullPool)
            with engine.connect():
                pass
        except Exception as exc:
            return 'MariaDB is unavailable: %s' % exc
        return None

    def test_a_wrong_password_is_one_line(self):
        self.require(self._mariadb_reason())
        config = self.config({'database': {'connection': MARIADB}})
        for program in PROGRAMS:
            line = self.assertRefused(
                program, config, 'cannot connect to the database '
                'mysql+pymysql://openstack_citest:***@127.0.0.1/'
                'openstack_citest: ')
            self.assertIn('Access denied', line)

    def test_an_unreachable_database_is_one_line(self):
        # Tried max_retries more times, retry_interval apart, a warning
        # each; then one line.
        config = self.config({'database': {'connection': UNREACHABLE_DB,
                                           'max_retries': 2,
                                           'retry_interval': 1}})
        for program in PROGRAMS:
            line = self.assertRefused(
                program, config, 'cannot connect to the database '
                'postgresql+psycopg2://openstack_citest:***@127.0.0.1:1/'
                'openstack_citest: ')
            self.assertIn('Connection refused', line)
            stderr = self.getDetails()['%s-%d' % (
                program, len(self.getDetails()) - 1)].as_text()
            self.assertEqual(2, stderr.count('does not answer (attempt '),
                             stderr)

    def test_a_database_that_comes_back_is_waited_for(self):
        # A server that answers only from the third attempt on (a failover):
        # the program starts, after two warnings.
        proxy = self.useFixture(tcp_proxy.TCPProxy('127.0.0.1', 5432))
        proxy.cut()
        url = ('postgresql+psycopg2://openstack_citest:openstack_citest@'
               '127.0.0.1:%d/postgres' % proxy.port)
        config = self.config({'database': {'connection': url,
                                           'max_retries': 10,
                                           'retry_interval': 1}})
        process = subprocess.Popen(
            [script('status'), '--config-file', config, 'upgrade', 'check'],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            stdin=subprocess.DEVNULL)
        self.addCleanup(process.kill)
        warnings = []
        for line in process.stderr:
            warnings.append(line)
            if 'does not answer (attempt 2 of 11)' in line:
                # The server is back after the second failed attempt.
                proxy.restore()
                break
        stdout, stderr = process.communicate(timeout=120)
        stderr = ''.join(warnings) + stderr
        self.addDetail('status', content.text_content(
            'stdout:\n%s\nstderr:\n%s' % (stdout, stderr)))
        self.assertIn('does not answer (attempt 1 of 11)', stderr)
        self.assertNotIn('cannot connect', stderr)
        # Connected: the checks ran (this database has no schema).
        self.assertEqual(2, process.returncode)
        self.assertIn('has no schema', stdout)

    def test_a_driver_not_installed_names_the_extra(self):
        # mysqlclient (MySQLdb) is no dependency of this service.
        config = self.config({'database': {
            'connection': 'mysql+mysqldb://openstack_citest:%s@127.0.0.1/x'
                          % PASSWORD}})
        for program in PROGRAMS:
            line = self.assertRefused(
                program, config, 'the database driver MySQLdb of [database] '
                'connection mysql+mysqldb://openstack_citest:***@127.0.0.1/x '
                'is not installed: use a driver this service installs')
            self.assertIn('mysql+pymysql:// (pip install '
                          '"dbaas-scheduler[mysql]")', line)

    def test_services_refuse_to_start_without_a_connection(self):
        # Only dbaas-scheduler-all has the embedded SQLite default: the
        # others would each make a database of their own.
        config = self.config({'DEFAULT': {
            'transport_url': messaging_fixtures.transport_url()}})
        for program in SERVICES:
            self.assertRefused(
                program, config, '[database] connection is not set: '
                'dbaas-scheduler-%s needs the database' % program)
        self.assertFalse(os.path.exists(self.state))

    def test_services_refuse_a_database_without_schema(self):
        url = 'sqlite:///%s' % os.path.join(self.tempdir, 'empty.sqlite')
        config = self.config({'DEFAULT': {
            'transport_url': messaging_fixtures.transport_url()},
            'database': {'connection': url}})
        for program in SERVICES:
            self.assertRefused(program, config, 'the database %s has no '
                               'schema: run "dbaas-scheduler-manage db '
                               'upgrade" first' % url)


class TestMessageBroker(OperatorMistakeTest):

    def setUp(self):
        super().setUp()
        self.require(messaging_fixtures.broker_unavailable_reason())
        self.url = urllib.parse.urlsplit(messaging_fixtures.transport_url())
        self.database = self.migrated_sqlite()

    def _transport(self, netloc=None, path=None):
        return urllib.parse.urlunsplit(self.url._replace(
            netloc=netloc or self.url.netloc, path=path or self.url.path))

    def test_a_wrong_vhost_is_one_line(self):
        transport = self._transport(path='/no-such-vhost-%d' % os.getpid())
        config = self.config({'DEFAULT': {'transport_url': transport},
                              'database': {'connection': self.database}})
        for program in SERVICES:
            line = self.assertRefused(
                program, config, 'the message broker rabbit://')
            self.assertIn('refused to log in (check the user, password and '
                          'vhost of transport_url)', line)
            self.assertIn('no-such-vhost', line)

    def test_wrong_credentials_are_one_line(self):
        netloc = '%s:%s@%s:%s' % (self.url.username, PASSWORD,
                                  self.url.hostname, self.url.port or 5672)
        config = self.config({
            'DEFAULT': {'transport_url': self._transport(netloc=netloc)},
            'database': {'connection': self.database}})
        for program in SERVICES:
            line = self.assertRefused(
                program, config, 'the message broker rabbit://')
            self.assertIn('ACCESS_REFUSED', line)

    def test_an_unreachable_broker_is_retried_then_one_line(self):
        config = self.config({
            'DEFAULT': {'transport_url': 'rabbit://guest:%s@127.0.0.1:1/'
                                         % PASSWORD},
            'database': {'connection': self.database}})
        done = self.run_program('engine', config)
        self.assertEqual(1, done.returncode)
        self.assertNotIn('Traceback', done.stderr)
        self.assertNotIn(PASSWORD, done.stderr)
        # One warning in the log (standard output here) per failed
        # attempt but the last, then the line on standard error.
        self.assertEqual(3, len([line for line in done.stdout.splitlines()
                                 if 'unreachable (attempt' in line]))
        self.assertEqual(['dbaas-scheduler-engine: the message broker '
                          'rabbit://guest:***@127.0.0.1:1/ is unreachable '
                          'after 4 attempts: [Errno 111] Connection refused'],
                         done.stderr.splitlines())


class TestDirectories(OperatorMistakeTest):

    def test_an_unwritable_state_path_is_one_line(self):
        state = os.path.join(self.not_a_directory, 'state')
        config = self.config({'DEFAULT': {'state_path': state}})
        line = self.assertRefused('all', config, 'state_path %s is not a '
                                  'writable directory: ' % state)
        self.assertIn('Not a directory', line)

    def test_an_unwritable_backup_dir_is_one_line(self):
        backups = os.path.join(self.not_a_directory, 'backups')
        local = {'instances': 'notes:sqlite:///%s/notes.db' % self.tempdir,
                 'backup_dir': backups}
        config = self.config({'local_backend': local})
        self.assertRefused('all', config, '[local_backend] backup_dir %s is '
                           'not a writable directory: ' % backups)
        self.require(messaging_fixtures.broker_unavailable_reason())
        config = self.config({
            'DEFAULT': {'transport_url': messaging_fixtures.transport_url()},
            'database': {'connection': self.migrated_sqlite()},
            'local_backend': local})
        self.assertRefused('worker', config, '[local_backend] backup_dir %s '
                           'is not a writable directory: ' % backups)


class TestSecondAllInOne(OperatorMistakeTest):

    def test_a_second_all_in_one_names_the_first(self):
        port = ports.free_port()
        secret = 'S3cret-Backup-Passw0rd'
        config = self.config({
            # The option dump at start, which must not show the secret.
            'DEFAULT': {'debug': 'True'},
            'api': {'bind_host': '127.0.0.1', 'bind_port': port},
            'local_backend': {
                'instances': 'orders:postgresql://backup:%s@127.0.0.1/o'
                             % secret}})
        first = self.useFixture(process_fixtures.ServiceProcess(
            'all', config, os.path.join(self.tempdir, 'first.log')))
        self.addOnException(lambda exc_info: self.addDetail(
            'first.log', content.text_content(first.log()[-20000:])))
        self.assertTrue(process_fixtures.wait_until(
            lambda: 'dbaas-scheduler-api started' in first.log(), 90),
            'the first dbaas-scheduler-all did not start within 90 s')
        # The same state directory, without debug (which would bring the
        # traceback back).
        second = self.config({}, 'second.conf')
        line = self.assertRefused('all', second, 'another '
                                  'dbaas-scheduler-all (pid %d) is running '
                                  'on the state directory %s'
                                  % (first.process.pid, self.state))
        self.assertIn('dbaas-scheduler-all.lock', line)
        self.assertTrue(first.alive())
        log = first.log()
        self.assertIn('instances', log)
        self.assertNotIn(secret, log)


class TestPortInUse(OperatorMistakeTest):

    def test_a_port_in_use_is_one_line(self):
        # Another program listening on the API's port: refused at once,
        # not a child restarted forever with a traceback each time.
        port = ports.free_port()
        other = socket.socket()
        self.addCleanup(other.close)
        other.bind(('127.0.0.1', port))
        other.listen(1)
        config = self.config({'api': {'bind_host': '127.0.0.1',
                                      'bind_port': port}})
        for program in ('all', 'api'):
            line = self.assertRefused(
                program, config, 'another program already listens on '
                '127.0.0.1 port %d: stop it, or give this service another '
                'port ([api] bind_port)' % port, timeout=60)
            self.assertNotIn('Address already in use', line)

    def test_an_address_not_of_this_host_is_one_line(self):
        # 192.0.2.1 (TEST-NET-1) is no address of this host.
        config = self.config({'api': {'bind_host': '192.0.2.1',
                                      'bind_port': ports.free_port()}})
        self.assertRefused('api', config, '[api] bind_host 192.0.2.1 is not '
                           'an address of this host', timeout=60)
