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
"""Private RabbitMQ, MariaDB and PostgreSQL servers the chaos run restarts.

Each runs from a data directory under the run's work directory, on ports
of its own on 127.0.0.1, so that stopping and starting it again -- a real
broker or database restart -- disturbs nothing else on the machine.  Run
as root, the database servers run as their system users (``mysql``,
``postgres``), which own their data directories; nothing outside the work
directory is written (the Erlang cookie of the RabbitMQ node is in its own
``HOME``).
"""

import os
import pwd
import secrets
import shutil
import signal
import subprocess
import time

import kombu
import sqlalchemy as sa
from tools.benchmarks import reporting

from dbaas_scheduler.testing import broker
from dbaas_scheduler.testing import ports

RABBITMQ_BIN = '/usr/lib/rabbitmq/bin'


def _program(name, *candidates):
    for candidate in candidates:
        if os.path.exists(candidate):
            return candidate
    found = shutil.which(name)
    if found is None:
        raise RuntimeError('%s not found: install it, or give the URL of '
                           'a server to use instead' % name)
    return found


def _wait(predicate, timeout, what):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.5)
    raise RuntimeError('%s did not come up within %d s' % (what, timeout))


class _Server:
    """A server process in a session of its own, stopped and started."""

    name = None
    # What asks the server for a clean shutdown.
    stop_signal = signal.SIGTERM

    def __init__(self, workdir):
        self.directory = os.path.join(workdir, self.name)
        self.log_path = os.path.join(self.directory, 'server.log')
        self.popen = None
        self.restarts = 0

    def _as_user(self, user):
        """The command prefix that runs as ``user`` when we are root."""
        if os.geteuid() != 0:
            return []
        return ['runuser', '-u', user, '--']

    def _own(self, path, user):
        if os.geteuid() == 0:
            entry = pwd.getpwnam(user)
            for root, dirs, files in os.walk(path):
                for name in [root] + [os.path.join(root, n)
                                      for n in dirs + files]:
                    os.chown(name, entry.pw_uid, entry.pw_gid)

    def _spawn(self, command, env=None):
        log = open(self.log_path, 'ab')
        # In its own directory: a crashing node writes its dump (MnesiaCore.*,
        # erl_crash.dump) into the working directory.
        self.popen = subprocess.Popen(command, stdout=log,
                                      stderr=subprocess.STDOUT, env=env,
                                      cwd=self.directory,
                                      start_new_session=True)
        log.close()

    def _signal(self, sig):
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass

    def stop(self, timeout=60):
        """A clean shutdown (``stop_signal``), SIGKILL if it hangs."""
        if self.popen is None or self.popen.poll() is not None:
            return
        self._signal(self.stop_signal)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            self.popen.wait()

    def restart(self, down_seconds):
        """Stop, stay down ``down_seconds``, start again; seconds it took."""
        started = time.time()
        self.stop()
        time.sleep(down_seconds)
        self.start()
        self.restarts += 1
        return time.time() - started

    def close(self):
        self.stop()


class RabbitMQNode(_Server):
    """A RabbitMQ node of its own: name, ports, Mnesia and log dirs."""

    name = 'rabbitmq'

    def __init__(self, workdir):
        super().__init__(workdir)
        self.port = ports.free_port()
        self.node = 'chaos-%s@localhost' % secrets.token_hex(4)
        os.makedirs(self.directory, exist_ok=True)
        cookie = os.path.join(self.directory, '.erlang.cookie')
        with open(cookie, 'w') as stream:
            stream.write(secrets.token_hex(16).upper())
        os.chmod(cookie, 0o400)
        with open(os.path.join(self.directory, 'enabled_plugins'),
                  'w') as stream:
            stream.write('[].\n')
        self.env = dict(
            os.environ, HOME=self.directory, RABBITMQ_NODENAME=self.node,
            RABBITMQ_NODE_IP_ADDRESS='127.0.0.1',
            RABBITMQ_NODE_PORT=str(self.port),
            RABBITMQ_DIST_PORT=str(ports.free_port()),
            RABBITMQ_MNESIA_BASE=os.path.join(self.directory, 'mnesia'),
            RABBITMQ_LOG_BASE=os.path.join(self.directory, 'log'),
            RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(self.directory,
                                                       'enabled_plugins'),
            RABBITMQ_CONFIG_FILE=os.path.join(self.directory, 'rabbitmq'),
            RABBITMQ_ADVANCED_CONFIG_FILE=os.path.join(self.directory,
                                                       'advanced.config'),
            RABBITMQ_CONF_ENV_FILE=os.path.join(self.directory, 'env'),
            RABBITMQ_PID_FILE=os.path.join(self.directory, 'pid'))

    @property
    def transport_url(self):
        return 'rabbit://guest:guest@127.0.0.1:%d/' % self.port

    def start(self):
        self._spawn([_program('rabbitmq-server', os.path.join(
            RABBITMQ_BIN, 'rabbitmq-server'))], env=self.env)
        _wait(self._answers, 120, 'RabbitMQ node %s' % self.node)

    def _answers(self):
        try:
            with kombu.Connection(broker.kombu_url(self.transport_url),
                                  connect_timeout=2) as conn:
                conn.connect()
            return True
        except Exception:
            return False

    def stop(self, timeout=60):
        if self.popen is None or self.popen.poll() is not None:
            return
        subprocess.run([_program('rabbitmqctl', os.path.join(
            RABBITMQ_BIN, 'rabbitmqctl')), '-n', self.node, 'stop'],
            env=self.env, capture_output=True, timeout=timeout)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            super().stop(timeout)


class _DatabaseServer(_Server):
    """A database server on a data directory of its own, run as ``user``."""

    user = None

    def __init__(self, workdir):
        super().__init__(workdir)
        self.port = ports.free_port()
        self.data = os.path.join(self.directory, 'data')
        os.makedirs(self.directory, exist_ok=True)
        self._own(self.directory, self.user)
        subprocess.run(self._as_user(self.user) + self.init_command(),
                       check=True, capture_output=True)

    def init_command(self):
        """The command that creates the data directory."""
        raise NotImplementedError

    def server_command(self):
        """The command that runs the server in the foreground."""
        raise NotImplementedError

    def start(self):
        self._spawn(self._as_user(self.user) + self.server_command())
        _wait(lambda: _answers(self.admin_url), 120, type(self).__name__)


class MariaDB(_DatabaseServer):
    """A mariadbd on a data directory of its own (root, no password)."""

    name = 'mariadb'
    user = 'mysql'

    def init_command(self):
        return [_program('mariadb-install-db', '/usr/bin/mariadb-install-db'),
                '--no-defaults', '--datadir=%s' % self.data,
                '--auth-root-authentication-method=normal', '--skip-test-db']

    def server_command(self):
        return [_program('mariadbd', '/usr/sbin/mariadbd'), '--no-defaults',
                '--datadir=%s' % self.data, '--port=%d' % self.port,
                '--bind-address=127.0.0.1',
                '--socket=%s' % os.path.join(self.directory, 'sock'),
                '--pid-file=%s' % os.path.join(self.directory, 'pid'),
                '--innodb-buffer-pool-size=256M', '--max-connections=1000',
                '--innodb-flush-log-at-trx-commit=2', '--skip-name-resolve']

    @property
    def admin_url(self):
        return 'mysql+pymysql://root:@127.0.0.1:%d/' % self.port


class PostgreSQL(_DatabaseServer):
    """A postgres on a data directory of its own (trust authentication)."""

    name = 'postgresql'
    user = 'postgres'
    # PostgreSQL's fast shutdown (SIGTERM waits for the clients to leave).
    stop_signal = signal.SIGINT

    def init_command(self):
        return [_program('initdb', '/usr/local/bin/initdb'), '-D', self.data,
                '-U', 'postgres', '--auth=trust', '-E', 'UTF8']

    def server_command(self):
        return [_program('postgres', '/usr/local/bin/postgres'),
                '-D', self.data, '-p', str(self.port), '-k', self.directory,
                '-c', 'listen_addresses=127.0.0.1',
                '-c', 'max_connections=500', '-c', 'fsync=off',
                '-c', 'synchronous_commit=off', '-c', 'shared_buffers=256MB']

    @property
    def admin_url(self):
        return 'postgresql+psycopg2://postgres@127.0.0.1:%d/postgres' % (
            self.port)


def _answers(url):
    engine = sa.create_engine(url, connect_args={'connect_timeout': 2})
    try:
        with engine.connect() as connection:
            connection.execute(sa.text('SELECT 1'))
        return True
    except Exception:
        return False
    finally:
        engine.dispose()


def database_server(kind, workdir):
    """A private server for ``--database`` (``mysql`` or ``postgresql``)."""
    server = MariaDB(workdir) if kind == 'mysql' else PostgreSQL(workdir)
    reporting.progress('starting a private %s on port %d', server.name,
                       server.port)
    server.start()
    return server
