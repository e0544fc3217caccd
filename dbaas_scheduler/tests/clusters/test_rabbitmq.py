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
"""The worker's casts on a three-node RabbitMQ cluster with quorum queues.

oslo.messaging is configured as kolla-ansible and openstack-ansible do
since 2024.1 (``[oslo_messaging_rabbit] rabbit_quorum_queue = true``, a
transport URL listing the three nodes), and the reply and fanout queues
are quorum queues too (``rabbit_transient_quorum_queue``).  A worker's RPC
server (``Service.serve_rpc``, bounded to a pool) takes casts sent through
``rpcapi.WorkerAPI`` at a steady rate while the node its connection is on
is SIGKILLed, then the node leading its queue: every cast the broker
confirmed is delivered, the pause is measured, and each node comes back
as a cluster member and a member of the queue.  See
doc/source/contributor/clusters.rst.
"""

import json
import os
import threading
import time

import fixtures
from oslo_messaging import conffixture
from testtools import content
from tools.clusters import rabbitmq

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler import service
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests import clusters
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures

POOL_SIZE = 4
CAST_INTERVAL = 0.05


class _Worker(service.Service):
    binary = 'dbaas-scheduler-worker'

    @property
    def topic(self):
        return self.conf.worker.topic


class _Sender(threading.Thread):
    """Casts one execution id every CAST_INTERVAL s until stopped."""

    def __init__(self, conf, name):
        super().__init__(daemon=True)
        self.api = rpcapi.WorkerAPI(conf)
        self.context = dbaas_context.get_admin_context()
        self.prefix = name
        self.sent, self.failed = {}, []
        self.stopping = threading.Event()

    def run(self):
        number = 0
        while not self.stopping.is_set():
            number += 1
            execution_id = '%s-%05d' % (self.prefix, number)
            started = time.time()
            try:
                self.api.backup_database_instance(self.context, execution_id)
            except Exception as exc:
                self.failed.append((execution_id, started, repr(exc)))
            else:
                self.sent[execution_id] = started
            self.stopping.wait(CAST_INTERVAL)

    def stop(self):
        self.stopping.set()
        self.join(120)


class TestRabbitMQCluster(base.TestCase):

    def setUp(self):
        super().setUp()
        clusters.require_rabbitmq()
        directory = self.useFixture(fixtures.TempDir()).path
        self.cluster = rabbitmq.Cluster(
            directory + '/rabbitmq',
            base_port=ports.free_base_port(29, 28000, 30000),
            prefix='dbaas-rabbit-test%d-' % os.getpid())
        self.addCleanup(self.cluster.destroy)
        self.addOnException(lambda exc_info: self.addDetail(
            'cluster', content.text_content(self.cluster.describe())))
        started = time.monotonic()
        self.cluster.start()
        self.figure('cluster start', time.monotonic() - started)
        self.useFixture(conffixture.ConfFixture(
            self.conf, transport_url=self.cluster.transport_url))
        self.flags(rpc_transport='oslo', host='worker-a')
        self.flags(group='oslo_messaging_rabbit', rabbit_quorum_queue=True,
                   rabbit_transient_quorum_queue=True)
        rpc.init(self.conf)
        self.addCleanup(rpc.cleanup)

    def figure(self, name, seconds):
        self.addDetail(name, content.text_content('%.1f s' % seconds))

    def _queues(self, node):
        """``{name: row}`` of the queues, asked of cluster node ``node``."""
        rows = json.loads(self.cluster.node(node).ctl(
            'list_queues', '--formatter', 'json', 'name', 'type', 'leader',
            'members', 'online'))
        return {row['name']: row for row in rows}

    def _consumer_node(self, queue, node):
        """The cluster node that holds the connection consuming ``queue``."""
        # The table (not JSON) shows a channel's process id with its node:
        # <dbaas-rabbit-test1234-2@localhost.1795737197.776.0>.
        lines = self.cluster.node(node).ctl(
            'list_consumers', 'queue_name', 'channel_pid').splitlines()
        [pid] = [line.split('\t')[1] for line in lines[1:]
                 if line.split('\t')[0] == queue]
        return self.cluster.number(pid.strip('<>').rsplit('.', 3)[0])

    def _other(self, *numbers):
        return next(node.number for node in self.cluster.nodes
                    if node.number not in numbers)

    def _delivery(self, endpoint, sender, killed_at):
        """Every cast the broker confirmed arrived; how late, after a kill.

        The seconds from the kill to the first cast sent after it arriving,
        and the longest any cast sent after the kill took to arrive.
        """
        received = {}
        for execution_id, when in endpoint.received:
            received.setdefault(execution_id, when)
        self.assertEqual(set(), set(sender.sent) - set(received))
        after = sorted((sent, execution_id) for execution_id, sent
                       in sender.sent.items() if sent > killed_at)
        self.assertTrue(after, 'no cast confirmed after the kill')
        first = received[after[0][1]] - killed_at
        longest = max(received[execution_id] - sent
                      for sent, execution_id in after)
        return first, longest

    def _kill_and_restart(self, endpoint, number, what):
        topic = self.conf.worker.topic
        sender = _Sender(self.conf, 'node%d' % number)
        sender.start()
        self.addCleanup(sender.stop)
        time.sleep(2)
        killed_at = time.time()
        self.cluster.node(number).kill()
        time.sleep(10)
        # The queue has a leader on a node that runs: elected among the two
        # others when the killed node led it.
        leader = self._queues(self._other(number))[topic]['leader']
        self.assertNotEqual(number, self.cluster.number(leader))
        started = time.monotonic()
        self.cluster.restart(number)
        self.figure('%s: node %d restart until a cluster member' % (
            what, number), time.monotonic() - started)
        time.sleep(2)
        sender.stop()
        self.assertTrue(endpoint.wait_for(sender.sent, timeout=60))
        first, longest = self._delivery(endpoint, sender, killed_at)
        self.figure('%s: node %d SIGKILL to the first later cast '
                    'delivered' % (what, number), first)
        self.figure('%s: node %d SIGKILL, longest a cast took' % (
            what, number), longest)
        duplicates = len([execution_id for execution_id, _
                          in endpoint.received
                          if execution_id.startswith(sender.prefix)])
        self.addDetail('%s: node %d casts' % (what, number),
                       content.text_content(
                           '%d confirmed, %d delivered twice, %d raised: %s'
                           % (len(sender.sent),
                              duplicates - len(sender.sent),
                              len(sender.failed), sender.failed[:5])))
        # A cast that raised is the engine's to send again (its sweep
        # does); one confirmed by the broker must not be lost (above).
        self.assertLessEqual(len(sender.failed), 2)

    def test_quorum_queues_survive_a_node_kill(self):
        topic = self.conf.worker.topic
        worker = _Worker(self.conf)
        endpoint = messaging_fixtures.RecordingEndpoint()
        worker.serve_rpc([endpoint], pool_size=POOL_SIZE)
        self.addCleanup(worker.stop_servers)
        api = rpcapi.WorkerAPI(self.conf)
        context = dbaas_context.get_admin_context()
        api.backup_database_instance(context, 'first')
        self.assertTrue(endpoint.wait_for(['first'], timeout=30))

        queues = self._queues(1)
        self.assertEqual('quorum', queues[topic]['type'])
        self.assertEqual('quorum', queues['%s.worker-a' % topic]['type'])
        fanout = [name for name in queues
                  if name.startswith('%s_fanout_' % topic)]
        self.assertEqual(['quorum'], [queues[name]['type']
                                      for name in fanout])
        names = sorted(node.name for node in self.cluster.nodes)
        self.assertEqual(names, sorted(queues[topic]['members']))
        # The server's channel (its three queues) asks for no more than
        # its pool's worth of unacknowledged messages: a quorum queue
        # honours the per-consumer prefetch oslo.messaging sets.
        channels = [line.split('\t') for line in self.cluster.node(1).ctl(
            'list_channels', 'consumer_count', 'prefetch_count').splitlines()]
        self.assertIn(['3', str(POOL_SIZE)], channels)

        # The node the worker's connection is on (the client fails over to
        # another node of the URL)...
        connected = self._consumer_node(topic, self._other())
        self._kill_and_restart(endpoint, connected, 'consumer')
        # ... then the node leading the topic queue (a new leader is
        # elected among the two others).
        alive = self._other()
        leader = self._queues(alive)[topic]['leader']
        leader = self.cluster.number(leader)
        self.addDetail('leader', content.text_content(
            'node %d leads the queue; the consumer is on node %d' % (
                leader, self._consumer_node(topic, alive))))
        self._kill_and_restart(endpoint, leader, 'leader')

        queues = self._queues(1)
        self.assertEqual(names, sorted(queues[topic]['online']))
        self.addDetail('cluster', content.text_content(
            self.cluster.describe()))
