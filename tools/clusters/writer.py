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
"""One writer address in front of a Galera cluster, as HAProxy gives it.

kolla-ansible and openstack-ansible put HAProxy in front of Galera with
one active server and the others as ``backup``: every connection goes to
the first node whose health check passes, and when that node fails the
check, its sessions are shut down (``on-marked-down shutdown-sessions``)
and new connections go to the next node.  This process does the same on
loopback, so that a chaos run can move the writer:

* a node is healthy when it accepts a connection and reports
  ``wsrep_local_state = 4`` (Synced) and ``wsrep_ready = ON``, checked
  every ``--check-interval`` seconds (``fall`` 2, ``rise`` 2, like
  HAProxy's defaults);
* the writer is the first healthy node of ``--backends`` after the
  current one fails; it does not move back when an earlier node returns
  (HAProxy's ``stick`` behaviour in those deployments);
* ``SIGUSR1`` moves the writer to the next healthy node although the
  current one is healthy (an operator's switchover, or a health check
  that flapped): the worst case, since transactions still running on the
  old writer commit there while new ones start on the new one;
* on every move, the sessions to the old writer are closed.

Each move is written as a line to ``--state-file`` (``<time> <index>
<host:port> <reason>``), which the chaos tool reads.
"""

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import time

import pymysql

from dbaas_scheduler.testing import ports

FALL = 2
RISE = 2


class WriterProxy:

    def __init__(self, listen_port, backends, state_file,
                 check_interval=1.0):
        self.listen_port = listen_port
        self.backends = backends
        self.state_file = state_file
        self.check_interval = check_interval
        self.current = 0
        self.healthy = [True] * len(backends)
        self.failures = [0] * len(backends)
        self.successes = [RISE] * len(backends)
        self.sessions = set()
        self.moves = 0

    def record(self, reason):
        host, port = self.backends[self.current]
        with open(self.state_file, 'a') as stream:
            stream.write('%.3f %d %s:%d %s\n' % (time.time(), self.current,
                                                 host, port, reason))

    def move(self, reason):
        """The writer is now the next healthy node; old sessions close."""
        count = len(self.backends)
        for step in range(1, count + 1):
            candidate = (self.current + step) % count
            if self.healthy[candidate]:
                break
        else:
            self.record('no healthy node: %s' % reason)
            return
        old, self.current = self.current, candidate
        self.moves += 1
        for session in list(self.sessions):
            if session[0] == old:
                for writer in session[1:]:
                    writer.close()
        self.record(reason)

    async def handle(self, client_reader, client_writer):
        index = self.current
        host, port = self.backends[index]
        try:
            server_reader, server_writer = await asyncio.open_connection(
                host, port)
        except OSError:
            client_writer.close()
            return
        session = (index, client_writer, server_writer)
        self.sessions.add(session)
        try:
            await asyncio.gather(self.pipe(client_reader, server_writer),
                                 self.pipe(server_reader, client_writer))
        except asyncio.CancelledError:
            pass  # the proxy stops
        finally:
            self.sessions.discard(session)
            client_writer.close()
            server_writer.close()

    @staticmethod
    async def pipe(reader, writer):
        try:
            while True:
                data = await reader.read(65536)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    @staticmethod
    def check(host, port):
        try:
            connection = pymysql.connect(host=host, port=port, user='root',
                                         connect_timeout=2, read_timeout=2)
        except pymysql.Error:
            return False
        try:
            with connection.cursor() as cursor:
                cursor.execute("SHOW GLOBAL STATUS WHERE Variable_name IN "
                               "('wsrep_local_state', 'wsrep_ready')")
                status = dict(cursor.fetchall())
            return (status.get('wsrep_local_state') == '4'
                    and status.get('wsrep_ready') == 'ON')
        except pymysql.Error:
            return False
        finally:
            connection.close()

    async def health(self):
        loop = asyncio.get_running_loop()
        while True:
            for index, (host, port) in enumerate(self.backends):
                ok = await loop.run_in_executor(None, self.check, host, port)
                if ok:
                    self.failures[index] = 0
                    self.successes[index] += 1
                    if self.successes[index] >= RISE:
                        self.healthy[index] = True
                else:
                    self.successes[index] = 0
                    self.failures[index] += 1
                    if self.failures[index] >= FALL:
                        self.healthy[index] = False
            if not self.healthy[self.current]:
                self.move('node %d failed its health check'
                          % (self.current + 1))
            await asyncio.sleep(self.check_interval)

    async def serve(self):
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGUSR1, self.move, 'switchover')
        stop = asyncio.Event()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        server = await asyncio.start_server(self.handle, '127.0.0.1',
                                            self.listen_port, backlog=1024)
        self.record('start')
        checker = asyncio.ensure_future(self.health())
        await stop.wait()
        checker.cancel()
        server.close()
        for session in list(self.sessions):
            for writer in session[1:]:
                writer.close()


class Writer:
    """The writer proxy as a process of its own, for tools and tests."""

    def __init__(self, directory, backends, port=None, check_interval=1.0):
        self.backends = list(backends)
        self.port = port or ports.free_port()
        self.state_file = os.path.join(directory, 'writer.state')
        self.log_file = os.path.join(directory, 'writer.log')
        self.check_interval = check_interval
        self.popen = None

    def start(self, timeout=30):
        with open(self.log_file, 'ab') as log:
            self.popen = subprocess.Popen(
                [sys.executable, '-m', 'tools.clusters.writer',
                 '--port', str(self.port), '--backends',
                 ','.join('%s:%d' % backend for backend in self.backends),
                 '--state-file', self.state_file, '--check-interval',
                 str(self.check_interval)],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                socket.create_connection(('127.0.0.1', self.port), 1).close()
                return
            except OSError:
                if self.popen.poll() is not None:
                    break
                time.sleep(0.2)
        raise RuntimeError('the writer proxy did not start; see %s'
                           % self.log_file)

    def switch(self):
        """Move the writer to the next healthy node (SIGUSR1)."""
        self.popen.send_signal(signal.SIGUSR1)

    def moves(self):
        """``[(time, node index, 'host:port', reason)]``, in order."""
        try:
            with open(self.state_file) as stream:
                lines = stream.read().splitlines()
        except FileNotFoundError:
            return []
        moves = []
        for line in lines:
            at, index, address, reason = line.split(' ', 3)
            moves.append((float(at), int(index), address, reason))
        return moves

    def stop(self):
        if self.popen is not None and self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()


def parse_backend(text):
    host, _, port = text.rpartition(':')
    return host or '127.0.0.1', int(port)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python -m tools.clusters.writer',
        description='One writer address in front of a Galera cluster '
                    '(HAProxy with one active server and backups).')
    parser.add_argument('--port', type=int, required=True,
                        help='the writer address: 127.0.0.1:PORT')
    parser.add_argument('--backends', required=True,
                        help='HOST:PORT,... of the nodes, in order')
    parser.add_argument('--state-file', required=True)
    parser.add_argument('--check-interval', type=float, default=1.0)
    args = parser.parse_args(argv)
    proxy = WriterProxy(args.port, [parse_backend(text) for text in
                                    args.backends.split(',') if text],
                        args.state_file, args.check_interval)
    asyncio.run(proxy.serve())
    return 0


if __name__ == '__main__':
    sys.exit(main())
