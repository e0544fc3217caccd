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
"""The engine benchmark's stand-in worker: records what the engines cast.

It runs in a process of its own (no GIL shared with the benchmark).  By
default it is a plain kombu consumer on the worker topic's queue, which
costs a fraction of the CPU time of an oslo.messaging RPC server
(``--consumer oslo``); both record each execution id with the time it
first arrived.
"""

import collections
import json
import multiprocessing
import socket
import threading
import time

import kombu
from oslo_config import cfg
import psutil

from dbaas_scheduler import config
from dbaas_scheduler import rpc
from dbaas_scheduler.testing import broker

# oslo.messaging's default control exchange, where casts are published.
CONTROL_EXCHANGE = 'openstack'


class _Received:
    """What the stand-in worker was sent: id -> [deliveries, first time]."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.ids = {}
        self.new = []
        self.deliveries = 0
        self.messages = collections.Counter()
        self.last = None

    def record(self, method, execution_ids):
        now = time.time()
        with self.lock:
            self.messages[method] += 1
            self.last = now
            for execution_id in execution_ids:
                self.deliveries += 1
                seen = self.ids.get(execution_id)
                if seen is None:
                    self.ids[execution_id] = [1, now]
                    self.new.append(execution_id)
                else:
                    seen[0] += 1

    def answer(self, command):
        with self.lock:
            if command == 'status':
                return {'unique': len(self.ids),
                        'deliveries': self.deliveries,
                        'messages': dict(self.messages), 'last': self.last}
            if command == 'take':
                new, self.new = self.new, []
                return new
            if command == 'ids':
                return self.ids
            if command == 'reset':
                self.reset()
                return True
        raise ValueError(command)


def _serve_commands(pipe, received, wait):
    while True:
        wait()
        while pipe.poll():
            command = pipe.recv()
            if command == 'stop':
                return
            pipe.send(received.answer(command))


def _consume_kombu(pipe, transport_url, topic):
    received = _Received()
    with kombu.Connection(broker.kombu_url(transport_url),
                          heartbeat=0) as connection:
        # The queue and exchange exactly as oslo.messaging's topic
        # consumer declares them (non-durable, not auto-deleted).
        exchange = kombu.Exchange(CONTROL_EXCHANGE, type='topic',
                                  durable=False, auto_delete=False)
        queue = kombu.Queue(topic, exchange, routing_key=topic,
                            durable=False, auto_delete=False)

        def on_message(body, message):
            call = json.loads(body['oslo.message'])
            args = call['args']
            received.record(call['method'],
                            args.get('execution_ids')
                            or [args['execution_id']])

        with connection.Consumer(queue, callbacks=[on_message], no_ack=True,
                                 prefetch_count=1000):
            pipe.send('ready')

            def wait():
                try:
                    connection.drain_events(timeout=0.05)
                except socket.timeout:
                    pass
            _serve_commands(pipe, received, wait)


def _consume_oslo(pipe, config_file, topic):
    # Imported here: only the oslo consumer needs oslo.messaging directly
    # (the package's import selected the threading backend first).
    import oslo_messaging as messaging

    received = _Received()

    class RecordingEndpoint:
        target = messaging.Target(version='1.1')

        def backup_database_instance(self, context, execution_id):
            received.record('backup_database_instance', [execution_id])

        def backup_database_instances(self, context, execution_ids):
            received.record('backup_database_instances', execution_ids)

    config.parse_args(cfg.CONF, ['--config-file', config_file])
    rpc.init(cfg.CONF)
    server = rpc.get_server(
        messaging.Target(topic=topic, server=cfg.CONF.host),
        [RecordingEndpoint()])
    server.start()
    pipe.send('ready')
    try:
        _serve_commands(pipe, received, lambda: pipe.poll(0.05))
    finally:
        server.stop()
        server.wait()
        rpc.cleanup()


def _consumer_main(kind, pipe, transport_url, config_file, topic):
    if kind == 'kombu':
        _consume_kombu(pipe, transport_url, topic)
    else:
        _consume_oslo(pipe, config_file, topic)


class Consumer:
    """The stand-in worker, in a process of its own (no GIL sharing)."""

    def __init__(self, kind, transport_url, config_file, topic):
        self.kind = kind
        context = multiprocessing.get_context('spawn')
        self.pipe, child = context.Pipe()
        self.process = context.Process(
            target=_consumer_main, daemon=True,
            args=(kind, child, transport_url, config_file, topic))
        self.process.start()
        if not self.pipe.poll(60) or self.pipe.recv() != 'ready':
            raise RuntimeError('the consumer did not start')

    def ask(self, command):
        self.pipe.send(command)
        return self.pipe.recv()

    def cpu_seconds(self):
        times = psutil.Process(self.process.pid).cpu_times()
        return times.user + times.system

    def wait_for(self, expected, timeout=120, quiet=10):
        """Wait until ``expected`` distinct ids have arrived.

        Gives up when nothing has arrived for ``quiet`` seconds, or after
        ``timeout``; returns the last status.
        """
        deadline = time.time() + timeout
        while time.time() < deadline:
            status = self.ask('status')
            if status['unique'] >= expected:
                return status
            if status['last'] and time.time() - status['last'] > quiet:
                return status
            time.sleep(0.2)
        return self.ask('status')

    def stop(self):
        try:
            self.pipe.send('stop')
        except (OSError, ValueError):
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()
