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
"""A Trove-compatible HTTP server for tests: backups and instances in memory.

It speaks the part of the Trove v1.0 API the trove backend uses, with
Trove's request and answer shapes (openstack/trove api-ref/source/
backups.inc and instances.inc) and its error bodies
(``{"itemNotFound": {"code": 404, "message": "..."}}``)::

    GET    /v1.0/{project_id}/instances/{id}
    GET    /v1.0/{project_id}/backups?instance_id=&limit=&marker=
    POST   /v1.0/{project_id}/backups
    GET    /v1.0/{project_id}/backups/{id}
    DELETE /v1.0/{project_id}/backups/{id}

Instances are registered by the test.  A backup's status follows from the
clock when it is read: NEW for ``new_seconds``, BUILDING for
``build_seconds``, then its final status; no thread runs in the
background.  Like Trove, an instance with a backup in progress shows the
status BACKUP and refuses another one with 422.  Tests inject failures
(:meth:`FakeTrove.inject_failure`) and slow answers
(:meth:`FakeTrove.inject_delay`: the request is slow to be served, or
served at once and slow to be answered), and read
:attr:`FakeTrove.requests`, :meth:`FakeTrove.create_count` and
:meth:`FakeTrove.history` (every backup ever stored, deleted or not).
"""

import collections
import dataclasses
import datetime
import http.server
import json
import random
import re
import select
import socket
import sys
import threading
import time
import urllib.parse
import uuid

import fixtures

# As an injected status: close the connection without answering.
DROP = 'drop'

# Operations, to aim an injection at one kind of request.
INSTANCE_SHOW = 'instance'
BACKUP_LIST = 'list'
BACKUP_CREATE = 'create'
BACKUP_SHOW = 'show'
BACKUP_DELETE = 'delete'

# Trove's fault names (trove/common/wsgi.py Fault) and default messages.
FAULT_NAMES = {
    400: 'badRequest', 401: 'unauthorized', 403: 'forbidden',
    404: 'itemNotFound', 405: 'badMethod', 409: 'conflict',
    413: 'overLimit', 422: 'unprocessableEntity', 500: 'instanceFault',
    501: 'notImplemented', 503: 'serviceUnavailable',
}
DEFAULT_MESSAGES = {
    403: 'Policy doesn\'t allow backup:create to be performed.',
    404: 'The resource could not be found.',
    422: 'Unable to process the contained request.',
    500: 'The server has either erred or is incapable of performing the '
         'requested operation.',
    503: 'The server is currently unavailable. Please try again at a later '
         'time.',
}

READY_STATUSES = ('ACTIVE', 'HEALTHY', 'RESTART_REQUIRED')
IN_PROGRESS = ('NEW', 'BUILDING', 'SAVING')
DATASTORE = {'type': 'mysql', 'version': '8.0',
             'version_id': 'b00000b0-00b0-0b00-00b0-000b000000bb'}
TIME_FORMAT = '%Y-%m-%dT%H:%M:%S'

_UUID = re.compile(r'^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$')
_PATH = re.compile(r'^/v1\.0/(?P<project>[^/]+)/(?P<collection>instances|'
                   r'backups)(?:/(?P<id>[^/]+))?/?$')


class TroveFault(Exception):
    """An error answer in Trove's shape; raise it from a token checker."""

    def __init__(self, code, message=None, retry_after=None):
        super().__init__(code, message)
        self.code = code
        self.message = message or DEFAULT_MESSAGES.get(code, 'Error.')
        # Trove's rate limiting: 413 with Retry-After (and retryAfter).
        self.retry_after = retry_after

    def body(self):
        name = FAULT_NAMES.get(self.code, 'computeFault')
        fault = {'code': self.code, 'message': self.message}
        if self.retry_after is not None:
            fault['retryAfter'] = str(self.retry_after)
        return {name: fault}


class _Drop(Exception):
    """Close the connection without an answer."""


@dataclasses.dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict
    body: object
    project_id: str | None
    # The X-OpenStack-Request-ID the client sent (its global request id).
    global_request_id: str | None = None


@dataclasses.dataclass
class _Injection:
    status: object            # an HTTP status, DROP, or None (delay only)
    remaining: int | None     # None: every matching request
    instance_id: str | None   # None: every instance
    operation: str | None     # None: every operation
    delay: float = 0.0
    message: str | None = None
    after: bool = False               # delay the answer, not the serving
    probability: float | None = None  # None: every matching request
    retry_after: float | None = None


@dataclasses.dataclass
class BackupBehaviour:
    """How the backups of an instance (or all of them) progress."""

    new_seconds: float = 0.0
    build_seconds: float = 0.0
    final_status: str = 'COMPLETED'
    size_gb: float = 0.12


@dataclasses.dataclass
class BackupRecord:
    """A backup as it was stored, and when it was deleted (POSIX times)."""

    id: str
    project_id: str
    instance_id: str
    description: str | None
    created: float
    deleted: float | None = None


@dataclasses.dataclass
class _Instance:
    id: str
    status: str
    project_id: str | None = None     # None: visible in every project
    fault: str | None = None
    behaviour: BackupBehaviour | None = None


@dataclasses.dataclass
class _Backup:
    id: str
    project_id: str
    instance_id: str
    name: str
    description: str | None
    parent_id: str | None
    container: str
    created: float
    behaviour: BackupBehaviour

    def state(self, now):
        """``(status, updated)`` at POSIX time ``now``."""
        behaviour = self.behaviour
        building = self.created + behaviour.new_seconds
        done = building + behaviour.build_seconds
        if now < building:
            return 'NEW', self.created
        if now < done:
            return 'BUILDING', building
        return behaviour.final_status, done


def _timestamp(posix):
    return datetime.datetime.fromtimestamp(
        posix, datetime.timezone.utc).strftime(TIME_FORMAT)


class FakeTrove(fixtures.Fixture):
    """A Trove API on 127.0.0.1 for the duration of a test.

    :param behaviour: the :class:`BackupBehaviour` of instances that have
        none of their own.
    :param page_size: Trove's ``backups_page_size`` (default 20).
    :param check_token: called as ``check_token(token, project_id)`` with
        the ``X-Auth-Token`` header (None if absent) before each request;
        raise :class:`TroveFault` (401 or 403) to refuse it.  Default:
        accept any token or none.
    :param clock: POSIX time source, to move backups along without waiting.
    :param record_requests: keep :attr:`requests` (benchmarks turn it off).
    """

    def __init__(self, behaviour=None, page_size=20, check_token=None,
                 clock=time.time, record_requests=True):
        super().__init__()
        self.behaviour = behaviour or BackupBehaviour()
        self.page_size = page_size
        self.check_token = check_token
        self.clock = clock
        self.record_requests = record_requests
        self._lock = threading.Lock()
        self._instances = {}
        self._backups = {}        # project -> {id: _Backup}
        self._by_instance = collections.defaultdict(list)
        self._injections = []
        self._creates = collections.Counter()
        self._history = {}
        self.requests = []

    def _setUp(self):
        self.server = _Server(('127.0.0.1', 0), _Handler, self)
        self.port = self.server.server_address[1]
        thread = threading.Thread(target=self.server.serve_forever,
                                  kwargs={'poll_interval': 0.05},
                                  name='fake-trove', daemon=True)
        thread.start()
        self.addCleanup(self.server.stop)

    @property
    def url(self):
        """An ``[trove] endpoint_override`` value for this server."""
        return 'http://127.0.0.1:%d/v1.0/%%(project_id)s' % self.port

    # What a test sets up --------------------------------------------------

    def add_instance(self, instance_id=None, status='ACTIVE',
                     project_id=None, fault=None, **behaviour):
        """Register an instance; returns its id (a new UUID by default).

        ``project_id`` None makes it visible in every project.  Keyword
        arguments of :class:`BackupBehaviour` apply to its backups.
        """
        instance_id = instance_id or str(uuid.uuid4())
        with self._lock:
            self._instances[instance_id] = _Instance(
                instance_id, status, project_id, fault,
                BackupBehaviour(**behaviour) if behaviour else None)
        return instance_id

    def set_instance_status(self, instance_id, status, fault=None):
        with self._lock:
            instance = self._instances[instance_id]
            instance.status, instance.fault = status, fault

    def remove_instance(self, instance_id):
        with self._lock:
            del self._instances[instance_id]

    def set_behaviour(self, instance_id=None, **behaviour):
        """Change how new backups (of one instance, or all) progress."""
        with self._lock:
            if instance_id is None:
                self.behaviour = dataclasses.replace(self.behaviour,
                                                     **behaviour)
            else:
                instance = self._instances[instance_id]
                instance.behaviour = dataclasses.replace(
                    instance.behaviour or self.behaviour, **behaviour)

    def inject_failure(self, status, count=1, instance_id=None,
                       operation=None, message=None, delay=0.0,
                       retry_after=None):
        """Answer the next ``count`` matching requests with ``status``.

        ``status`` is an HTTP status (answered with Trove's error body and
        ``message``, and ``Retry-After: retry_after`` if given) or
        :data:`DROP`; ``count`` None means every request from now on.
        """
        with self._lock:
            self._injections.append(_Injection(
                status, count, instance_id, operation, delay, message,
                retry_after=retry_after))

    def inject_delay(self, seconds, count=None, instance_id=None,
                     operation=None, after=False, probability=None):
        """Answer matching requests (normally) after ``seconds``.

        The request is served after the delay -- a create that lands at
        the backend late -- or, with ``after``, served at once and answered
        late: the backup exists while the client still waits.  With
        ``probability``, only that share of the matching requests, drawn
        at random, is delayed (``count`` counts the delayed ones).
        """
        with self._lock:
            self._injections.append(_Injection(
                None, count, instance_id, operation, seconds, None,
                after, probability))

    def clear_injections(self):
        with self._lock:
            self._injections.clear()

    def add_backup(self, project_id, instance_id, name='backup',
                   description=None, created=None, parent_id=None,
                   **behaviour):
        """Store a backup as if it had been created; returns its id."""
        with self._lock:
            return self._store_backup(
                project_id, instance_id, name, description, parent_id,
                'database_backups',
                self.clock() if created is None else created,
                BackupBehaviour(**behaviour) if behaviour else
                self._behaviour_of(project_id, instance_id))

    # What a test reads ----------------------------------------------------

    def create_count(self, instance_id):
        """Backups Trove accepted (202) for ``instance_id``."""
        with self._lock:
            return self._creates[instance_id]

    def history(self):
        """A :class:`BackupRecord` of every backup ever stored."""
        with self._lock:
            return [dataclasses.replace(record)
                    for record in self._history.values()]

    def backups(self, project_id):
        """The backups of a project as Trove shows them."""
        with self._lock:
            now = self.clock()
            return [self._view(b, now)
                    for b in self._backups.get(project_id, {}).values()]

    # Serving --------------------------------------------------------------

    def handle(self, method, target, token, raw_body,
               global_request_id=None, gone=None):
        """Answer one request: ``(status, body or None)``.

        ``gone()``, if given, tells whether the client has hung up: a late
        answer nobody waits for any more is not waited for either.
        """
        parsed = urllib.parse.urlsplit(target)
        query = dict(urllib.parse.parse_qsl(parsed.query))
        match = _PATH.match(parsed.path)
        project = match and match.group('project')
        try:
            body = json.loads(raw_body) if raw_body else None
        except ValueError:
            body = raw_body
        if self.record_requests:
            self.requests.append(RecordedRequest(
                method, parsed.path, query, body, project,
                global_request_id))
        try:
            if self.check_token is not None:
                self.check_token(token, project)
            if match is None:
                raise TroveFault(404)
            collection, ident = match.group('collection', 'id')
            operation, serve = self._route(method, collection, ident)
            late = self._apply_injections(operation, self._instance_of(
                operation, project, ident, query, body))
            answer = serve(project, ident, query, body)
            deadline = time.time() + late
            while time.time() < deadline:
                if gone is not None and gone():
                    raise _Drop()
                time.sleep(min(0.5, max(0.0, deadline - time.time())))
            return answer
        except TroveFault as fault:
            return fault.code, fault.body()

    def _route(self, method, collection, ident):
        routes = {
            ('GET', 'instances', True): (INSTANCE_SHOW, self._show_instance),
            ('GET', 'backups', False): (BACKUP_LIST, self._list_backups),
            ('POST', 'backups', False): (BACKUP_CREATE, self._create_backup),
            ('GET', 'backups', True): (BACKUP_SHOW, self._show_backup),
            ('DELETE', 'backups', True): (BACKUP_DELETE,
                                          self._delete_backup),
        }
        route = routes.get((method, collection, ident is not None))
        if route is None:
            raise TroveFault(405, 'The server does not serve %s here.'
                             % method)
        return route

    def _instance_of(self, operation, project, ident, query, body):
        if operation == INSTANCE_SHOW:
            return ident
        if operation == BACKUP_LIST:
            return query.get('instance_id')
        if operation == BACKUP_CREATE:
            backup = body.get('backup') if isinstance(body, dict) else None
            return backup.get('instance') if isinstance(backup, dict) else None
        with self._lock:
            backup = self._backups.get(project, {}).get(ident)
        return backup and backup.instance_id

    def _apply_injections(self, operation, instance_id):
        """Apply the first matching injection; seconds to delay the answer."""
        with self._lock:
            injection = None
            for candidate in self._injections:
                if (candidate.operation in (None, operation)
                        and candidate.instance_id in (None, instance_id)
                        and (candidate.probability is None
                             or random.random() < candidate.probability)):
                    injection = candidate
                    break
            if injection is None:
                return 0
            if injection.remaining is not None:
                injection.remaining -= 1
                if injection.remaining <= 0:
                    self._injections.remove(injection)
        if injection.after:
            return injection.delay
        if injection.delay:
            time.sleep(injection.delay)
        if injection.status == DROP:
            raise _Drop()
        if injection.status is not None:
            raise TroveFault(injection.status, injection.message,
                             injection.retry_after)
        return 0

    def _find_instance(self, project, instance_id):
        instance = self._instances.get(instance_id)
        if instance and instance.project_id in (None, project):
            return instance
        return None

    def _behaviour_of(self, project, instance_id):
        instance = self._find_instance(project, instance_id)
        return (instance and instance.behaviour) or self.behaviour

    def _status_of(self, project, instance, now):
        # Trove shows BACKUP while a backup of the instance is running.
        if instance.status in READY_STATUSES and any(
                b.state(now)[0] in IN_PROGRESS
                for b in self._by_instance.get((project, instance.id), ())):
            return 'BACKUP'
        return instance.status

    def _show_instance(self, project, ident, query, body):
        with self._lock:
            instance = self._find_instance(project, ident)
            if instance is None:
                raise TroveFault(404, 'Resource %s cannot be found.' % ident)
            view = {'id': ident, 'name': 'instance-%s' % ident[:8],
                    'status': self._status_of(project, instance,
                                              self.clock()),
                    'operating_status': 'HEALTHY',
                    'datastore': {'type': 'mysql', 'version': '8.0'},
                    'flavor': {'id': '6'}, 'region': 'RegionOne',
                    'volume': {'size': 1}}
            if instance.fault:
                view['fault'] = {'message': instance.fault,
                                 'details': instance.fault}
        return 200, {'instance': view}

    def _create_backup(self, project, ident, query, body):
        backup = _validate_create(body)
        instance_id = backup['instance']
        with self._lock:
            now = self.clock()
            instance = self._find_instance(project, instance_id)
            if instance is None:
                raise TroveFault(404, 'Resource %s cannot be found.'
                                 % instance_id)
            status = self._status_of(project, instance, now)
            if status not in READY_STATUSES:
                raise TroveFault(422, (
                    'Instance %s is not currently available for an action to '
                    'be performed (instance status was %s).'
                    % (instance_id, status)))
            parent_id = backup.get('parent_id')
            if parent_id and parent_id not in self._backups.get(project, {}):
                raise TroveFault(404, 'Resource %s cannot be found.'
                                 % parent_id)
            if backup.get('incremental') and not parent_id:
                parent_id = self._last_completed(project, instance_id, now)
            stored = self._store_backup(
                project, instance_id, backup['name'],
                backup.get('description'), parent_id,
                backup.get('swift_container') or 'database_backups', now,
                instance.behaviour or self.behaviour)
            self._creates[instance_id] += 1
            return 202, {'backup': self._view(
                self._backups[project][stored], now)}

    def _store_backup(self, project, instance_id, name, description,
                      parent_id, container, created, behaviour):
        backup = _Backup(str(uuid.uuid4()), project, instance_id, name,
                         description, parent_id, container, created,
                         behaviour)
        self._backups.setdefault(project, {})[backup.id] = backup
        self._by_instance[(project, instance_id)].append(backup)
        self._history[backup.id] = BackupRecord(
            backup.id, project, instance_id, description, created)
        return backup.id

    def _last_completed(self, project, instance_id, now):
        done = [(b.state(now)[1], b.id)
                for b in self._by_instance[(project, instance_id)]
                if b.state(now)[0] == 'COMPLETED']
        return max(done)[1] if done else None

    def _show_backup(self, project, ident, query, body):
        with self._lock:
            backup = self._backups.get(project, {}).get(ident)
            if backup is None:
                raise TroveFault(404, 'Resource %s cannot be found.' % ident)
            return 200, {'backup': self._view(backup, self.clock())}

    def _list_backups(self, project, ident, query, body):
        try:
            limit = int(query.get('limit') or self.page_size)
            offset = int(query.get('marker') or 0)
        except ValueError:
            raise TroveFault(400, 'limit and marker must be integers.')
        with self._lock:
            now = self.clock()
            instance_id = query.get('instance_id')
            backups = (self._by_instance.get((project, instance_id), [])
                       if instance_id else
                       self._backups.get(project, {}).values())
            # Trove: the most recently updated first, offset pagination.
            views = sorted((self._view(b, now) for b in backups),
                           key=lambda v: (v['updated'], v['created'],
                                          v['id']), reverse=True)
        page = views[offset:offset + limit]
        answer = {'backups': page}
        # Trove's test: a full page has a next link, even the last one.
        if len(page) >= limit:
            answer['links'] = [{'rel': 'next', 'href': self._next_href(
                project, query, offset + limit)}]
        return 200, answer

    def _next_href(self, project, query, marker):
        # Like trove/common/pagination.py: the request URL with a new
        # marker, its scheme forced to https.
        query = dict(query, marker=str(marker))
        return 'https://127.0.0.1:%d/v1.0/%s/backups?%s' % (
            self.port, project, urllib.parse.urlencode(query))

    def _delete_backup(self, project, ident, query, body):
        with self._lock:
            now = self.clock()
            backup = self._backups.get(project, {}).get(ident)
            if backup is None:
                raise TroveFault(404, 'Resource %s cannot be found.' % ident)
            if backup.state(now)[0] in IN_PROGRESS:
                raise TroveFault(422, 'Backup %s cannot be deleted because '
                                      'it is running.' % ident)
            self._delete_with_children(project, backup)
        return 202, None

    def _delete_with_children(self, project, backup):
        # Trove deletes the incremental backups built on a backup with it.
        backups = self._backups[project]
        for child in [b for b in backups.values()
                      if b.parent_id == backup.id]:
            self._delete_with_children(project, child)
        backups.pop(backup.id, None)
        self._by_instance[(project, backup.instance_id)].remove(backup)
        self._history[backup.id].deleted = self.clock()

    def _view(self, backup, now):
        status, updated = backup.state(now)
        done = status == 'COMPLETED'
        return {
            'id': backup.id, 'name': backup.name,
            'description': backup.description,
            'locationRef': ('http://127.0.0.1:%d/swift/v1/AUTH_%s/%s/'
                            '%s.xbstream.gz.enc' % (
                                self.port, backup.project_id,
                                backup.container, backup.id)
                            if done else None),
            'instance_id': backup.instance_id,
            'created': _timestamp(backup.created),
            'updated': _timestamp(updated),
            'size': backup.behaviour.size_gb if done else None,
            'status': status, 'parent_id': backup.parent_id,
            'project_id': backup.project_id, 'datastore': DATASTORE,
            'storage_driver': 'swift',
        }


def _validate_create(body):
    """The ``backup`` of a create request, checked as Trove's schema does."""
    backup = body.get('backup') if isinstance(body, dict) else None
    if not isinstance(backup, dict):
        raise TroveFault(400, "'backup' is a required property")
    problems = []
    for key in ('name', 'description', 'swift_container'):
        value = backup.get(key)
        if key in backup or key == 'name':
            if not isinstance(value, str) or not 0 < len(value) <= 255:
                problems.append('%s must be a string of 1 to 255 '
                                'characters' % key)
    for key in ('instance', 'parent_id'):
        if (key in backup or key == 'instance') and not (
                isinstance(backup.get(key), str)
                and _UUID.match(backup[key])):
            problems.append('%s %r is not a UUID' % (key, backup.get(key)))
    incremental = backup.get('incremental', 0)
    if isinstance(incremental, bool) or incremental not in (0, 1):
        problems.append('incremental must be the integer 0 or 1')
    if problems:
        raise TroveFault(400, 'Validation error: %s.' % '; '.join(problems))
    return backup


class _Server(http.server.ThreadingHTTPServer):
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


class _Handler(http.server.BaseHTTPRequestHandler):
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
        except _Drop:
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
