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
"""A RabbitMQ cluster on loopback, all of it under one directory.

Node ``n`` (1-based) of a cluster with base port ``P`` is the Erlang node
``dbaas-rabbit<n>@localhost``; it listens for AMQP on ``P + n`` and for
Erlang distribution on ``P + 10 + n``, and the ``rabbitmqctl`` runs made
here take their distribution port from ``P + 20`` to ``P + 29``.  The
nodes share an Erlang cookie of their own (``<directory>/.erlang.cookie``,
the ``HOME`` of every process started here); each keeps its Mnesia, quorum
queue and log files in ``<directory>/node<n>/``.  Nothing of the
machine's own RabbitMQ is read or written (its ``epmd`` on port 4369,
which every Erlang node of the machine shares, is only registered with).
The first node starts alone; the others join it with ``stop_app``,
``reset``, ``join_cluster`` and ``start_app``.  User ``guest``, password
``guest``, from 127.0.0.1.
"""

import collections
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time

RABBITMQ_BIN = '/usr/lib/rabbitmq/bin'
PREFIX = 'dbaas-rabbit'
# A minority of nodes cut off from the others stops serving rather than
# carry on alone (what kolla-ansible and openstack-ansible configure).
CONFIG = """\
cluster_partition_handling = pause_minority
log.file.level = info
log.console = false
"""


class ClusterError(Exception):
    pass


def _program(name):
    path = os.path.join(RABBITMQ_BIN, name)
    if os.path.exists(path):
        return path
    found = shutil.which(name)
    if found is None:
        raise ClusterError('RabbitMQ is not installed (no %s in %s or on '
                           'PATH)' % (name, RABBITMQ_BIN))
    return found


def _alive(pid):
    try:
        with open('/proc/%d/stat' % pid) as stream:
            state = stream.read().rsplit(')', 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    # A killed node whose parent died too stays a zombie until init
    # reaps it.
    return state not in ('Z', 'X')


class Node:

    def __init__(self, cluster, number):
        self.cluster = cluster
        self.number = number
        self.name = '%s%d@localhost' % (cluster.prefix, number)
        self.directory = os.path.join(cluster.directory, 'node%d' % number)
        self.log = os.path.join(self.directory, 'server.log')
        self.pid_file = os.path.join(self.directory, 'rabbitmq.pid')
        self.port = cluster.base_port + number
        self.dist_port = cluster.base_port + 10 + number
        self.popen = None

    @property
    def env(self):
        base = self.cluster.base_port
        return dict(
            os.environ, HOME=self.cluster.directory,
            RABBITMQ_NODENAME=self.name,
            RABBITMQ_NODE_IP_ADDRESS='127.0.0.1',
            RABBITMQ_NODE_PORT=str(self.port),
            RABBITMQ_DIST_PORT=str(self.dist_port),
            RABBITMQ_CTL_DIST_PORT_MIN=str(base + 20),
            RABBITMQ_CTL_DIST_PORT_MAX=str(base + 29),
            RABBITMQ_MNESIA_BASE=os.path.join(self.directory, 'mnesia'),
            RABBITMQ_LOG_BASE=os.path.join(self.directory, 'log'),
            RABBITMQ_PID_FILE=self.pid_file,
            ERL_CRASH_DUMP=os.path.join(self.directory, 'erl_crash.dump'),
            RABBITMQ_CONFIG_FILE=os.path.join(self.cluster.directory,
                                              'rabbitmq'),
            RABBITMQ_ADVANCED_CONFIG_FILE=os.path.join(
                self.cluster.directory, 'advanced.config'),
            RABBITMQ_CONF_ENV_FILE=os.path.join(self.cluster.directory,
                                                'rabbitmq-env.conf'),
            RABBITMQ_ENABLED_PLUGINS_FILE=os.path.join(
                self.cluster.directory, 'enabled_plugins'))

    @property
    def url(self):
        return 'rabbit://guest:guest@127.0.0.1:%d/' % self.port

    def start(self):
        os.makedirs(self.directory, exist_ok=True)
        with open(self.log, 'ab') as log:
            # A session of its own: kill() signals its process group.
            self.popen = subprocess.Popen(
                [_program('rabbitmq-server')], env=self.env, stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.directory, start_new_session=True)

    def pid(self):
        """The node's beam process id; None when it is not running."""
        try:
            with open(self.pid_file) as stream:
                pid = int(stream.read().strip())
        except (OSError, ValueError):
            return None
        return pid if _alive(pid) else None

    def kill(self, sig=signal.SIGKILL):
        """Signal the node's process group (beam and its port programs)."""
        pid = self.pid()
        if pid is None:
            return None
        group = os.getpgid(pid)
        if group != os.getpgrp():
            os.killpg(group, sig)
        else:
            os.kill(pid, sig)
        if sig == signal.SIGKILL:
            while _alive(pid):
                time.sleep(0.05)
        return pid

    def answers(self):
        """True once the node accepts AMQP connections."""
        try:
            with socket.create_connection(('127.0.0.1', self.port), 1):
                return True
        except OSError:
            return False

    def ctl(self, *args, timeout=120):
        """Run ``rabbitmqctl -n <this node> args``; its standard output."""
        try:
            done = subprocess.run(
                [_program('rabbitmqctl'), '-q', '-n', self.name] +
                list(args), env=self.env, capture_output=True, text=True,
                timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ClusterError('rabbitmqctl %s on %s: no answer within %d s'
                               % (args[0], self.name, timeout))
        if done.returncode:
            raise ClusterError('rabbitmqctl %s on %s failed: %s' % (
                args[0], self.name, (done.stderr or done.stdout)[-2000:]))
        return done.stdout

    def members(self):
        """The nodes of this node's cluster, and those of them running."""
        status = json.loads(self.ctl('cluster_status', '--formatter',
                                     'json', timeout=30))
        return set(status['disk_nodes']), set(status['running_nodes'])

    def quorum_queues(self):
        """``{queue name: leader node}`` of the quorum queues of ``/``."""
        rows = json.loads(self.ctl('list_queues', '--formatter', 'json',
                                   'name', 'type', 'leader', timeout=30))
        return {row['name']: row['leader'] for row in rows
                if row['type'] == 'quorum'}


class Cluster:
    """Three (or ``size``) RabbitMQ nodes under ``directory``."""

    def __init__(self, directory, base_port=35670, size=3, prefix=PREFIX,
                 extra_config=''):
        self.directory = os.path.abspath(directory)
        self.base_port = base_port
        # More rabbitmq.conf lines (e.g. a TLS listener).
        self.extra_config = extra_config
        # Node names are the machine's (epmd's): two clusters running at
        # once need two prefixes.
        self.prefix = prefix
        self.nodes = [Node(self, number) for number in range(1, size + 1)]

    def node(self, number):
        return self.nodes[number - 1]

    def number(self, name):
        """The number of node ``name`` (``dbaas-rabbit2@localhost``: 2)."""
        return int(name.split('@')[0][len(self.prefix):])

    @property
    def transport_url(self):
        """An oslo.messaging transport URL listing every node."""
        return 'rabbit://%s/' % ','.join(
            'guest:guest@127.0.0.1:%d' % node.port for node in self.nodes)

    def _install(self):
        os.makedirs(self.directory, exist_ok=True)
        cookie = os.path.join(self.directory, '.erlang.cookie')
        if not os.path.exists(cookie):
            with open(cookie, 'w') as stream:
                stream.write(secrets.token_hex(16).upper())
            os.chmod(cookie, 0o400)
        files = {'enabled_plugins': '[].\n',
                 'rabbitmq.conf': CONFIG + self.extra_config}
        for name, text in files.items():
            with open(os.path.join(self.directory, name), 'w') as stream:
                stream.write(text)

    def start(self, timeout=180):
        """Start every node that is down; form the cluster the first time.

        Nodes start together: a node that was a cluster member waits at
        boot for the member that stopped last, whichever that is.
        """
        self._install()
        for node in self.nodes:
            if node.pid() is None:
                node.start()
        for node in self.nodes:
            self._wait_running(node, timeout)
        if len(self.nodes) == 1:
            # A node alone: no cluster to form.
            return
        first = self.nodes[0]
        members, _ = first.members()
        for node in self.nodes[1:]:
            if node.name not in members:
                node.ctl('stop_app')
                node.ctl('reset')
                node.ctl('join_cluster', first.name)
                node.ctl('start_app')
        for node in self.nodes:
            self._wait_member(node, timeout)

    def _wait_running(self, node, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if node.answers():
                return
            if node.popen is not None and node.popen.poll() is not None:
                raise ClusterError('node %d exited with status %d; see %s'
                                   % (node.number, node.popen.returncode,
                                      node.log))
            time.sleep(0.5)
        raise ClusterError('node %d did not accept AMQP connections within '
                           '%d s; see %s' % (node.number, timeout, node.log))

    def _wait_member(self, node, timeout):
        """Wait until a running node sees ``node`` running in the cluster."""
        names = {other.name for other in self.nodes}
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for other in self.nodes:
                if other is node or not other.answers():
                    continue
                try:
                    members, running = other.members()
                except (ClusterError, ValueError):
                    continue
                if node.name in running and members == names:
                    return
            time.sleep(0.5)
        raise ClusterError('node %d did not become a running cluster member '
                           'within %d s; see %s' % (node.number, timeout,
                                                    node.log))

    def restart(self, number, timeout=180):
        """Start node ``number`` again; wait until it is a member again."""
        node = self.node(number)
        if node.pid() is None:
            node.start()
        self._wait_running(node, timeout)
        self._wait_member(node, timeout)

    def stop(self, timeout=60):
        """Stop every node (SIGTERM, then SIGKILL after ``timeout``).

        Node 1 stops last, so it is the one the others wait for when the
        cluster starts again.
        """
        for node in reversed(self.nodes):
            pid = node.kill(signal.SIGTERM)
            deadline = time.monotonic() + timeout
            # The node removes its pid file as it begins to stop.
            while pid and time.monotonic() < deadline:
                if not _alive(pid):
                    break
                time.sleep(0.2)
            else:
                if pid and _alive(pid):
                    os.killpg(os.getpgid(pid), signal.SIGKILL)

    def destroy(self):
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)

    def describe(self):
        lines, leaders = [], None
        for node in self.nodes:
            pid = node.pid()
            if pid is None or not node.answers():
                lines.append('node%d  %s  port %d  %s' % (
                    node.number, node.name, node.port,
                    'down' if pid is None else 'pid %d  starting' % pid))
                continue
            try:
                _, running = node.members()
                seen = ' '.join(sorted(str(self.number(name))
                                       for name in running))
                if leaders is None:
                    leaders = node.quorum_queues()
            except (ClusterError, ValueError) as exc:
                seen = '? (%s)' % str(exc).splitlines()[0]
            lines.append('node%d  %s  port %d  pid %d  running  members '
                         'running: %s' % (node.number, node.name, node.port,
                                          pid, seen))
        if leaders is not None:
            count = collections.Counter(leaders.values())
            lines.append('quorum queues: %d  leaders: %s' % (
                len(leaders), ', '.join('%s %d' % (name.split('@')[0], n)
                                        for name, n in sorted(count.items()))
                or '-'))
        lines.append('transport_url = %s' % self.transport_url)
        return '\n'.join(lines)
