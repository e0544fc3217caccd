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
"""A chaos run on clusters: three Galera nodes and three RabbitMQ nodes.

``--cluster multi-writer``
    Service process *i* (workers first, then engines) connects to Galera
    node ``i mod 3 + 1``: engines and workers write on different nodes at
    once.  The ``database`` fault SIGKILLs node 3 and rejoins it.
``--cluster single-writer``
    Every service connects to one writer address
    (:mod:`tools.clusters.writer`, HAProxy's active/backup setup).  The
    ``database`` fault SIGKILLs the node that is the writer (the address
    moves when its health check fails) and rejoins it; the ``writer``
    fault moves the writer while every node is up (a switchover).

Either way the services reach RabbitMQ through a ``transport_url`` that
lists the three nodes, with quorum queues; the ``broker`` fault SIGKILLs
the first node and starts it again.
"""

import os
import secrets
import time

from tools.benchmarks import reporting
from tools.clusters import galera
from tools.clusters import writer as writer_proxy

from dbaas_scheduler.testing import ports

MODES = ('multi-writer', 'single-writer')

# [oslo_messaging_rabbit] of every service on the RabbitMQ cluster, as
# doc/source/admin/clusters.rst recommends.
QUORUM_OPTIONS = {'rabbit_quorum_queue': True,
                  'rabbit_transient_quorum_queue': True}


class NodeFault:
    """A node of a cluster killed, down a while, then back: a fault."""

    def __init__(self, name, choose, kill, back):
        self.name = name
        self._choose = choose
        self._kill = kill
        self._back = back
        self.restarts = 0

    def restart(self, down_seconds):
        started = time.time()
        number = self._choose()
        reporting.progress('%s: SIGKILL node %d', self.name, number)
        self._kill(number)
        time.sleep(down_seconds)
        self._back(number)
        self.restarts += 1
        return time.time() - started


class Clusters:
    """The Galera and RabbitMQ clusters of a run, and the writer address."""

    def __init__(self, workdir, mode, transport_url=None):
        self.mode = mode
        base = ports.free_base_port(40, 30000)
        self.galera = galera.Cluster(os.path.join(workdir, 'galera'), base)
        self.rabbitmq = None
        self.given_transport_url = transport_url
        if transport_url is None:
            from tools.clusters import rabbitmq
            # Node names are the machine's: a prefix of the run's own.
            self.rabbitmq = rabbitmq.Cluster(
                os.path.join(workdir, 'rabbitmq'),
                ports.free_base_port(30, base + 100),
                prefix='chaos-%s-' % secrets.token_hex(3))
        self.writer = None

    def start(self):
        reporting.progress('starting a Galera cluster of 3 nodes on ports '
                           '%d-%d', self.galera.nodes[0].port,
                           self.galera.nodes[-1].port)
        self.galera.start()
        if self.rabbitmq is not None:
            reporting.progress('starting a RabbitMQ cluster of 3 nodes')
            self.rabbitmq.start()
        if self.mode == 'single-writer':
            self.writer = writer_proxy.Writer(
                self.galera.directory,
                [('127.0.0.1', node.port) for node in self.galera.nodes])
            self.writer.start()
            reporting.progress('writer address 127.0.0.1:%d (node 1 first)',
                               self.writer.port)

    @property
    def transport_url(self):
        if self.rabbitmq is None:
            return self.given_transport_url
        return self.rabbitmq.transport_url

    @property
    def admin_url(self):
        """Where the tool itself reads and writes (node 1, or the writer)."""
        port = (self.writer.port if self.writer is not None
                else self.galera.nodes[0].port)
        return 'mysql+pymysql://root@127.0.0.1:%d/' % port

    def database_port(self, index):
        """The port service process ``index`` connects to."""
        if self.writer is not None:
            return self.writer.port
        return self.galera.nodes[index % len(self.galera.nodes)].port

    def writer_node(self):
        """The 1-based Galera node the writer address points to now."""
        moves = self.writer.moves()
        return moves[-1][1] + 1 if moves else 1

    def database_fault(self):
        if self.writer is not None:
            choose = self.writer_node
        else:
            def choose():
                return len(self.galera.nodes)
        return NodeFault('Galera node', choose,
                         lambda number: self.galera.node(number).kill(),
                         self.galera.rejoin)

    def broker_fault(self):
        if self.rabbitmq is None:
            return None
        return NodeFault('RabbitMQ node', lambda: 1,
                         lambda number: self.rabbitmq.node(number).kill(),
                         self.rabbitmq.restart)

    def describe(self):
        lines = [self.galera.describe()]
        if self.rabbitmq is not None:
            lines.append(self.rabbitmq.describe())
        if self.writer is not None:
            lines.extend('writer %s -> node %d (%s)' % (
                time.strftime('%H:%M:%S', time.localtime(at)), index + 1,
                reason) for at, index, _, reason in self.writer.moves())
        return '\n'.join(lines)

    def close(self):
        if self.writer is not None:
            self.writer.stop()
        if self.rabbitmq is not None:
            self.rabbitmq.destroy()
        self.galera.destroy()
