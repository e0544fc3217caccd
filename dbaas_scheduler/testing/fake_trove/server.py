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
"""The fake Trove's HTTP server: one thread per connection."""

import http.server
import json
import select
import socket
import sys
import threading
import uuid

from dbaas_scheduler.testing.fake_trove import model


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

    def __init__(self, address, handler, trove):
        super().__init__(address, handler)
        self.trove = trove
        self.connections = set()
        self.connections_lock = threading.Lock()

    def handle_error(self, request, client_address):
        # A client that timed out and left is part of the tests.
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)

    def stop(self):
        self.shutdown()
        self.server_close()
        # Keep-alive connections would keep their threads waiting.
        with self.connections_lock:
            connections = list(self.connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'FakeTrove/1.0'

    def setup(self):
        super().setup()
        # Headers and body go out in two writes: with Nagle on, the body
        # waits for the client's delayed ACK (40 ms on Linux).
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def finish(self):
        with self.server.connections_lock:
            self.server.connections.discard(self.connection)
        super().finish()

    def log_message(self, format, *args):
        pass  # one line per request on stderr is noise in test output

    def _serve(self):
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length) if length else b''
        try:
            status, body = self.server.trove.handle(
                self.command, self.path, self.headers.get('X-Auth-Token'),
                raw, self.headers.get('X-OpenStack-Request-ID'),
                gone=self._client_gone)
        except model.Drop:
            self.close_connection = True
            return
        payload = json.dumps(body).encode() if body is not None else b''
        self.send_response(status)
        # Like Trove's request_id middleware: every answer names itself.
        self.send_header('X-Openstack-Request-Id',
                         'req-%s' % uuid.uuid4())
        over_limit = (body or {}).get('overLimit') if isinstance(
            body, dict) else None
        if over_limit and 'retryAfter' in over_limit:
            self.send_header('Retry-After', over_limit['retryAfter'])
        if body is not None:
            self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _client_gone(self):
        """Whether the client closed the connection (it timed out)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and not self.connection.recv(
                1, socket.MSG_PEEK)
        except OSError:
            return True

    do_GET = do_POST = do_DELETE = do_PUT = do_PATCH = _serve
