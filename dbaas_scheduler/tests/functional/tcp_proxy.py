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
"""A TCP proxy that can cut a client off its server, for outage tests.

The machine's PostgreSQL, MariaDB and RabbitMQ are shared by every test
running in parallel, so an outage is made between one client and its
server instead: while cut, the proxy drops every connection and refuses
new ones (they are accepted and closed at once, as a server that went
away would look to a client).
"""

import socket
import threading

import fixtures


class TCPProxy(fixtures.Fixture):
    """Listen on 127.0.0.1:``port`` and forward to ``host``:``target``."""

    def __init__(self, host, target_port):
        super().__init__()
        self.host = host
        self.target_port = target_port
        self._connections = set()
        self._lock = threading.Lock()
        self._cut = False
        self._closing = False

    def _setUp(self):
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(('127.0.0.1', 0))
        self._listener.listen(128)
        self.port = self._listener.getsockname()[1]
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self.addCleanup(self._close)

    def cut(self):
        """Drop every connection and refuse new ones until restore()."""
        with self._lock:
            self._cut = True
            connections = list(self._connections)
            self._connections.clear()
        for sock in connections:
            _close(sock)

    def restore(self):
        with self._lock:
            self._cut = False

    def _close(self):
        self._closing = True
        self.cut()
        _close(self._listener)

    def _accept(self):
        while not self._closing:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                refused = self._cut
            if refused:
                _close(client)
                continue
            try:
                server = socket.create_connection((self.host,
                                                   self.target_port))
            except OSError:
                _close(client)
                continue
            with self._lock:
                self._connections.update((client, server))
            for source, sink in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(source, sink),
                                 daemon=True).start()

    def _pump(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, sink):
                with self._lock:
                    self._connections.discard(sock)
                _close(sock)


def _close(sock):
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    try:
        sock.close()
    except OSError:
        pass
