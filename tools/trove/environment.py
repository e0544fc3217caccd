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
"""Run a command against a real Trove API server in fake mode.

Usage::

    python -m tools.trove.environment [--venv DIR] -- COMMAND...

1. installs ``trove==26.0.0`` into a virtualenv of its own (``--venv``,
   reused when it already holds that version): Trove runs on eventlet, and
   is never imported by dbaas-scheduler's own processes;
2. creates a throw-away database on the local MariaDB (as the
   ``openstack_citest`` user of tools/test-setup.sh) and Trove's tables
   and ``mysql`` datastore in it (``fakemode.py setup``);
3. starts Trove's API and task manager in fake mode on 127.0.0.1
   (``fakemode.py serve``) with Trove's default rate limits, and waits
   until it answers;
4. runs COMMAND with ``DBAAS_SCHEDULER_TEST_TROVE_URL`` (the server's
   URL), ``DBAAS_SCHEDULER_TEST_TROVE_DB`` (its database),
   ``DBAAS_SCHEDULER_TEST_TROVE_LOG`` (its log file) and
   ``DBAAS_SCHEDULER_TEST_TROVE_NOTIFICATIONS`` (``<exchange> <topic>``
   its notifications go to on the local RabbitMQ, when it answers) in its
   environment;
5. stops Trove, drops its database and deletes its notification exchange
   and queue, whatever happened.

Exits with COMMAND's status, or 2 if the environment could not be set up.
Trove's log is kept in the virtualenv's directory (``trove.log``).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid

import kombu
import pymysql

from dbaas_scheduler.testing import broker
from dbaas_scheduler.testing import ports

TROVE_VERSION = '26.0.0'
URL_ENV = 'DBAAS_SCHEDULER_TEST_TROVE_URL'
# Trove's own database (tests play the guest agent reporting a failed
# database there) and log (tests look for the request ids they sent).
DB_ENV = 'DBAAS_SCHEDULER_TEST_TROVE_DB'
LOG_ENV = 'DBAAS_SCHEDULER_TEST_TROVE_LOG'
# Where Trove's notifications go: "<exchange> <topic>" on the broker of
# DBAAS_SCHEDULER_TEST_TRANSPORT_URL (tests consume them as the engine).
NOTIFICATIONS_ENV = 'DBAAS_SCHEDULER_TEST_TROVE_NOTIFICATIONS'
TRANSPORT_URL_ENV = 'DBAAS_SCHEDULER_TEST_TRANSPORT_URL'
HERE = os.path.dirname(os.path.abspath(__file__))

DB_USER = DB_PASSWORD = 'openstack_citest'

# Trove's configuration: its own fakes for Nova, Cinder, Neutron, Swift and
# the guest agent, ours for Glance (fakemode.py), the fake Keystone
# middleware (api-paste.ini), an in-process message bus.  Quotas are high
# enough for the benchmark's thousand instances; rate limits stay Trove's.
TROVE_CONF = """\
[DEFAULT]
remote_nova_client = trove.tests.fakes.nova.fake_create_nova_client
remote_cinder_client = trove.tests.fakes.nova.fake_create_cinder_client
remote_guest_client = trove.tests.fakes.guestagent.fake_create_guest_client
remote_swift_client = trove.tests.fakes.swift.fake_create_swift_client
remote_neutron_client = trove.tests.fakes.neutron.fake_create_neutron_client
remote_glance_client = fakemode.fake_create_glance_client
# The task manager builds a Swift URL for the guest from this; nothing
# connects to it (the fake guest stores nothing).
swift_url = http://127.0.0.1:9/v1/AUTH_
transport_url = fake:/
bind_host = 127.0.0.1
bind_port = {port}
trove_api_workers = 1
api_paste_config = {paste}
default_datastore = mysql
max_instances_per_tenant = 5000
max_volumes_per_tenant = 50000
max_backups_per_tenant = 5000
max_accepted_volume_size = 10
fake_backup_seconds = {backup_seconds}
# The fake guest agent reports once (prepare) and never heartbeats again;
# after agent_heartbeat_expiry Trove would show every instance's database
# as ERROR (guest agent unreachable).
agent_heartbeat_expiry = 315360000
log_file = {log}
use_stderr = false
debug = false
default_log_levels = eventlet.wsgi.server=WARN,oslo_messaging=WARN

control_exchange = {exchange}

[oslo_messaging_notifications]
driver = {notification_driver}
transport_url = {notification_url}
topics = {topic}
retry = 3

[database]
connection = mysql+pymysql://{user}:{password}@127.0.0.1/{database}
"""

# Trove's api-paste.ini, with the fake Keystone middleware Trove's own
# tests used (the token is the project: "X-Auth-Token: <project>").
API_PASTE = """\
[composite:trove]
use = call:trove.common.wsgi:versioned_urlmap
/: versions
/v1.0: troveapi

[app:versions]
paste.app_factory = trove.versions:app_factory

[pipeline:troveapi]
pipeline = request_id faultwrapper authtoken authorization contextwrapper
    ratelimit extensions troveapp

[filter:request_id]
paste.filter_factory = oslo_middleware.request_id:RequestId.factory

[filter:faultwrapper]
paste.filter_factory = trove.common.wsgi:FaultWrapper.factory

[filter:authtoken]
paste.filter_factory = trove.tests.fakes.keystone:filter_factory

[filter:authorization]
paste.filter_factory = trove.common.auth:AuthorizationMiddleware.factory

[filter:contextwrapper]
paste.filter_factory = trove.common.wsgi:ContextMiddleware.factory

[filter:ratelimit]
paste.filter_factory = trove.common.limits:RateLimitingMiddleware.factory

[filter:extensions]
paste.filter_factory = trove.common.extensions:factory

[app:troveapp]
paste.app_factory = trove.common.api:app_factory
"""


def log(message):
    print('[trove-env] %s' % message, flush=True)


def trove_python(venv):
    return os.path.join(venv, 'bin', 'python')


def installed_version(venv):
    if not os.path.exists(trove_python(venv)):
        return None
    result = subprocess.run(
        [trove_python(venv), '-c',
         'from importlib import metadata; print(metadata.version("trove"))'],
        capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else None


def install(venv):
    if installed_version(venv) == TROVE_VERSION:
        log('trove %s already installed in %s' % (TROVE_VERSION, venv))
        return
    started = time.monotonic()
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    subprocess.run([trove_python(venv), '-m', 'pip', 'install', '-q',
                    '--disable-pip-version-check',
                    'trove==%s' % TROVE_VERSION], check=True)
    log('installed trove %s in %.0f s'
        % (TROVE_VERSION, time.monotonic() - started))


def _admin_connection(database=None):
    return pymysql.connect(host='127.0.0.1', user=DB_USER,
                           password=DB_PASSWORD, database=database,
                           autocommit=True)


def create_database():
    name = 'trove_fakemode_%s' % uuid.uuid4().hex[:12]
    with _admin_connection() as connection, connection.cursor() as cursor:
        cursor.execute('CREATE DATABASE %s' % name)
    return name


def drop_database(name):
    try:
        with _admin_connection() as connection, \
                connection.cursor() as cursor:
            cursor.execute('DROP DATABASE IF EXISTS %s' % name)
    except pymysql.MySQLError as exc:
        log('could not drop database %s: %s' % (name, exc))


def answers(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def broker_url():
    return os.environ.get(TRANSPORT_URL_ENV,
                          'rabbit://guest:guest@127.0.0.1:5672/')


def broker_answers(url):
    try:
        with kombu.Connection(broker.kombu_url(url),
                              connect_timeout=5) as connection:
            connection.ensure_connection(max_retries=1)
        return True
    except Exception as exc:
        log('no notifications from Trove: RabbitMQ at %s: %s' % (url, exc))
        return False


def delete_notification_queue(url, exchange, topic):
    try:
        with kombu.Connection(broker.kombu_url(url)) as connection:
            channel = connection.channel()
            channel.queue_delete('%s.info' % topic)
            channel.exchange_delete(exchange)
    except Exception as exc:
        log('could not delete exchange %s: %s' % (exchange, exc))


class TroveServer:
    """Trove in fake mode: configuration, tables, process."""

    def __init__(self, venv, workdir, backup_seconds):
        self.venv = venv
        self.workdir = workdir
        self.port = ports.free_port()
        self.database = None
        self.process = None
        self.log_file = os.path.join(venv, 'trove.log')
        self.config = os.path.join(workdir, 'trove.conf')
        self.backup_seconds = backup_seconds
        # Trove's notifications, on the local RabbitMQ, to an exchange and
        # topic of this run (queue names do not depend on the exchange).
        name = 'trove-fakemode-%s' % uuid.uuid4().hex[:12]
        self.exchange, self.topic = name, name + '-notifications'
        self.broker_url = broker_url()
        self.notifying = broker_answers(self.broker_url)

    @property
    def url(self):
        return 'http://127.0.0.1:%d' % self.port

    @property
    def database_url(self):
        return 'mysql+pymysql://%s:%s@127.0.0.1/%s' % (
            DB_USER, DB_PASSWORD, self.database)

    def _fakemode(self, action, **kwargs):
        env = dict(os.environ, PYTHONPATH=HERE, PYTHONWARNINGS='ignore')
        return [trove_python(self.venv), os.path.join(HERE, 'fakemode.py'),
                '--config-file', self.config, action], env

    def setup(self):
        self.database = create_database()
        paste = os.path.join(self.workdir, 'api-paste.ini')
        with open(paste, 'w') as stream:
            stream.write(API_PASTE)
        with open(self.config, 'w') as stream:
            stream.write(TROVE_CONF.format(
                port=self.port, paste=paste, log=self.log_file,
                user=DB_USER, password=DB_PASSWORD, database=self.database,
                backup_seconds=self.backup_seconds,
                exchange=self.exchange, topic=self.topic,
                notification_url=self.broker_url,
                notification_driver=(
                    'messagingv2' if self.notifying else 'noop')))
        command, env = self._fakemode('setup')
        subprocess.run(command, env=env, check=True, cwd=self.workdir)

    def start(self, timeout=120):
        started = time.monotonic()
        command, env = self._fakemode('serve')
        output = open(os.path.join(self.venv, 'trove-stdout.log'), 'ab')
        self.process = subprocess.Popen(
            command, env=env, cwd=self.workdir, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True)
        output.close()
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError('Trove exited with status %s; see %s'
                                   % (self.process.returncode,
                                      self.log_file))
            if answers(self.url + '/'):
                log('Trove answers on %s after %.0f s' % (
                    self.url, time.monotonic() - started))
                return
            time.sleep(0.5)
        raise RuntimeError('Trove did not answer within %d s; see %s'
                           % (timeout, self.log_file))

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.database:
            drop_database(self.database)
        if self.notifying:
            delete_notification_queue(self.broker_url, self.exchange,
                                      self.topic)


def _stop_on_signal(signum, frame):
    # SIGTERM (a CI timeout, a kill) would end us without the cleanup:
    # Trove would keep running and its database would stay.
    raise SystemExit(128 + signum)


def main(argv=None):
    signal.signal(signal.SIGTERM, _stop_on_signal)
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--venv', default=os.path.join('.tox', 'trove-venv'),
                        help='virtualenv for Trove (default: %(default)s)')
    parser.add_argument('--backup-seconds', type=float, default=2.0,
                        help='how long a fake backup takes')
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ['--'] else \
        args.command
    if not command:
        parser.error('no command to run')
    venv = os.path.abspath(args.venv)
    started = time.monotonic()
    try:
        install(venv)
    except (OSError, subprocess.CalledProcessError) as exc:
        log('could not install trove %s: %s' % (TROVE_VERSION, exc))
        return 2
    workdir = tempfile.mkdtemp(prefix='trove-fakemode-')
    server = TroveServer(venv, workdir, args.backup_seconds)
    try:
        try:
            server.setup()
            server.start()
        except (OSError, RuntimeError, pymysql.MySQLError,
                subprocess.CalledProcessError) as exc:
            log('could not start Trove: %s' % exc)
            return 2
        log('Trove ready %.0f s after start (install included)'
            % (time.monotonic() - started))
        env = dict(os.environ)
        env[URL_ENV] = server.url
        env[DB_ENV] = server.database_url
        env[LOG_ENV] = server.log_file
        if server.notifying:
            env[NOTIFICATIONS_ENV] = '%s %s' % (server.exchange,
                                                server.topic)
        tests_started = time.monotonic()
        status = subprocess.call(command, env=env)
        log('%s exited with %d after %.0f s' % (
            command[0], status, time.monotonic() - tests_started))
        return status
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
