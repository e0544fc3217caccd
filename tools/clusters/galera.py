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
"""A MariaDB Galera cluster on loopback, all of it under one directory.

Node ``n`` (1-based) of a cluster with base port ``P`` listens for SQL on
``P + n``, for group communication on ``P + 10 + n``, for incremental
state transfer on ``P + 20 + n`` and for full state transfer (rsync) on
``P + 30 + n``.  The first node bootstraps the cluster
(``--wsrep-new-cluster``); the others join it and receive its state.
Each node's files live in ``<directory>/node<n>/`` (``my.cnf``, ``data/``,
``mariadbd.log``, ``mariadbd.pid``).  Every node has the user ``root``
with an empty password, on TCP from 127.0.0.1 only.
"""

import os
import pwd
import shutil
import signal
import subprocess
import time

PROVIDERS = ('/usr/lib/galera/libgalera_smm.so', '/usr/lib/libgalera_smm.so')
CLUSTER_NAME = 'dbaas-scheduler-test'


class ClusterError(Exception):
    pass


def _user():
    """The user mariadbd runs as: mysql when started by root."""
    if os.geteuid() == 0:
        return 'mysql'
    return pwd.getpwuid(os.geteuid()).pw_name


def _provider():
    for path in PROVIDERS:
        if os.path.exists(path):
            return path
    raise ClusterError('galera-4 is not installed (no libgalera_smm.so in '
                       '%s)' % ', '.join(PROVIDERS))


class Node:

    def __init__(self, cluster, number):
        self.cluster = cluster
        self.number = number
        self.directory = os.path.join(cluster.directory, 'node%d' % number)
        self.data = os.path.join(self.directory, 'data')
        self.config = os.path.join(self.directory, 'my.cnf')
        self.log = os.path.join(self.directory, 'mariadbd.log')
        self.pid_file = os.path.join(self.directory, 'mariadbd.pid')
        self.socket = os.path.join(self.directory, 'mariadbd.sock')
        base = cluster.base_port
        self.port = base + number
        self.group_port = base + 10 + number
        self.ist_port = base + 20 + number
        self.sst_port = base + 30 + number
        self.popen = None

    @property
    def url(self):
        """An SQLAlchemy URL of this node (database ``name``)."""
        return 'mysql+pymysql://root@127.0.0.1:%d' % self.port

    def write_config(self):
        peers = ','.join('127.0.0.1:%d' % node.group_port
                         for node in self.cluster.nodes)
        options = ('base_host=127.0.0.1; base_port=%d; '
                   'ist.recv_addr=127.0.0.1:%d; gcache.size=64M; '
                   'pc.recovery=false' % (self.group_port, self.ist_port))
        lines = [
            '[mysqld]',
            'user=%s' % _user(),
            'datadir=%s' % self.data,
            'socket=%s' % self.socket,
            'pid-file=%s' % self.pid_file,
            'log-error=%s' % self.log,
            'port=%d' % self.port,
            'bind-address=127.0.0.1',
            'skip-name-resolve',
            'character-set-server=utf8mb4',
            'collation-server=utf8mb4_general_ci',
            'binlog_format=ROW',
            'default_storage_engine=InnoDB',
            'innodb_autoinc_lock_mode=2',
            'innodb_buffer_pool_size=64M',
            'innodb_log_file_size=32M',
            'innodb_flush_log_at_trx_commit=2',
            'max_connections=500',
            'wsrep_on=ON',
            'wsrep_provider=%s' % _provider(),
            'wsrep_cluster_name=%s' % self.cluster.name,
            'wsrep_cluster_address=gcomm://%s' % peers,
            'wsrep_node_name=node%d' % self.number,
            'wsrep_node_address=127.0.0.1:%d' % self.group_port,
            'wsrep_provider_options="%s"' % options,
            'wsrep_sst_method=rsync',
            'wsrep_sst_receive_address=127.0.0.1:%d' % self.sst_port,
            'wsrep_slave_threads=2',
            '',
        ]
        with open(self.config, 'w') as out:
            out.write('\n'.join(lines))

    def install(self):
        os.makedirs(self.data, exist_ok=True)
        self.write_config()
        if os.geteuid() == 0:
            # mariadbd and its state transfer scripts run as mysql (rsync's
            # daemon, run as root, would drop to nobody and fail).
            for path in (self.directory, self.data):
                shutil.chown(path, _user(), _user())
        if self.number == 1:
            # The joiners receive the first node's data by state transfer.
            self._run(['mariadb-install-db', '--defaults-file=%s'
                       % self.config, '--auth-root-authentication-method='
                       'normal', '--skip-test-db'])

    def _run(self, command):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise ClusterError('%s failed: %s' % (command[0],
                                                  done.stderr[-2000:]))

    def start(self, bootstrap=False):
        command = ['mariadbd', '--defaults-file=%s' % self.config]
        if bootstrap:
            command.append('--wsrep-new-cluster')
        with open(os.devnull, 'wb') as null:
            self.popen = subprocess.Popen(command, stdout=null, stderr=null,
                                          start_new_session=True)

    def mark_safe_to_bootstrap(self):
        state = os.path.join(self.data, 'grastate.dat')
        if os.path.exists(state):
            with open(state) as stream:
                text = stream.read()
            with open(state, 'w') as stream:
                stream.write(text.replace('safe_to_bootstrap: 0',
                                          'safe_to_bootstrap: 1'))

    def pid(self):
        """The running node's pid, or None (a zombie is not running)."""
        if self.popen is not None and self.popen.poll() is not None:
            return None
        try:
            with open(self.pid_file) as stream:
                pid = int(stream.read().strip())
            with open('/proc/%d/stat' % pid) as stream:
                if stream.read().rpartition(')')[2].split()[0] == 'Z':
                    return None
            return pid
        except (OSError, ValueError, IndexError):
            return None

    def kill(self, sig=signal.SIGKILL):
        pid = self.pid()
        if pid:
            os.kill(pid, sig)
            if sig == signal.SIGKILL and self.popen is not None:
                self.popen.wait()
        return pid

    def query(self, sql):
        """Run ``sql`` on this node; its rows as tab-separated lines."""
        done = subprocess.run(
            ['mariadb', '-h', '127.0.0.1', '-P', str(self.port), '-u',
             'root', '-N', '-B', '-e', sql],
            capture_output=True, text=True, timeout=30)
        if done.returncode:
            raise ClusterError(done.stderr.strip())
        return done.stdout.splitlines()

    def status(self, name):
        rows = self.query("SHOW GLOBAL STATUS LIKE '%s'" % name)
        return rows[0].split('\t')[1] if rows else None

    def ready(self):
        try:
            return (self.status('wsrep_ready') == 'ON'
                    and self.status('wsrep_local_state_comment') == 'Synced')
        except (ClusterError, subprocess.TimeoutExpired):
            return False


class Cluster:
    """Three (or ``size``) Galera nodes under ``directory``."""

    def __init__(self, directory, base_port=33300, size=3,
                 name=CLUSTER_NAME):
        self.directory = os.path.abspath(directory)
        self.base_port = base_port
        self.name = name
        self.nodes = [Node(self, number) for number in range(1, size + 1)]

    def node(self, number):
        return self.nodes[number - 1]

    def start(self, timeout=180):
        """Install (the first time) and start every node; wait for sync."""
        os.makedirs(self.directory, exist_ok=True)
        fresh = not os.path.isdir(self.nodes[0].data)
        for node in self.nodes:
            if fresh:
                node.install()
            else:
                node.write_config()
        first, others = self.nodes[0], self.nodes[1:]
        if not fresh and all(node.pid() is None for node in self.nodes):
            # A cluster stopped whole starts again from node 1, stopped
            # last by stop(); Galera refuses to bootstrap from a node not
            # marked safe (one that left before the others).
            first.mark_safe_to_bootstrap()
        if first.pid() is None:
            first.start(bootstrap=True)
        self._wait(first, timeout)
        for node in others:
            if node.pid() is None:
                node.start()
            self._wait(node, timeout)
        size = first.status('wsrep_cluster_size')
        if size != str(len(self.nodes)):
            raise ClusterError('cluster size %s, expected %d'
                               % (size, len(self.nodes)))

    def _wait(self, node, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if node.ready():
                return
            time.sleep(0.5)
        raise ClusterError('node %d did not become Synced within %d s; see '
                           '%s' % (node.number, timeout, node.log))

    def rejoin(self, number, timeout=180):
        """Start node ``number`` again (after a kill); wait until Synced."""
        node = self.node(number)
        if node.pid() is None:
            node.start()
        self._wait(node, timeout)

    def stop(self, timeout=60):
        """Stop every node (SIGTERM, then SIGKILL after ``timeout``)."""
        # One after the other, node 1 last: it is then the node a start
        # can bootstrap from.
        for node in reversed(self.nodes):
            if not node.kill(signal.SIGTERM):
                continue
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if node.pid() is None:
                    break
                time.sleep(0.2)
            else:
                node.kill()

    def destroy(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def describe(self):
        lines = []
        for node in self.nodes:
            if node.pid() is None:
                lines.append('node%d  port %d  down' % (node.number,
                                                        node.port))
                continue
            try:
                state = node.status('wsrep_local_state_comment')
                size = node.status('wsrep_cluster_size')
            except (ClusterError, subprocess.TimeoutExpired) as exc:
                state, size = 'unreachable (%s)' % exc, '?'
            lines.append('node%d  port %d  pid %d  %s  cluster size %s  %s'
                         % (node.number, node.port, node.pid(), state, size,
                            node.url))
        return '\n'.join(lines)
