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
"""The fake Trove itself: the fixture, its controls and its API."""

import collections
import dataclasses
import json
import random
import threading
import time
import urllib.parse
import uuid

import fixtures

from dbaas_scheduler.testing.fake_trove import model
from dbaas_scheduler.testing.fake_trove import server


class FakeTrove(fixtures.Fixture):
    """A Trove API on 127.0.0.1 for the duration of a test.

    :param behaviour: the :class:`model.BackupBehaviour` of instances that have
        none of their own.
    :param page_size: Trove's ``backups_page_size`` (default 20).
    :param check_token: called as ``check_token(token, project_id)`` with
        the ``X-Auth-Token`` header (None if absent) before each request;
        raise :class:`model.TroveFault` (401 or 403) to refuse it.  Default:
        accept any token or none.
    :param clock: POSIX time source, to move backups along without waiting.
    :param record_requests: keep :attr:`requests` (benchmarks turn it off).
    """

    def __init__(self, behaviour=None, page_size=20, check_token=None,
                 clock=time.time, record_requests=True):
        super().__init__()
        self.behaviour = behaviour or model.BackupBehaviour()
        self.page_size = page_size
        self.check_token = check_token
        self.clock = clock
        self.record_requests = record_requests
        self._lock = threading.Lock()
        self._instances = {}
        self._backups = {}        # project -> {id: model.Backup}
        self._by_instance = collections.defaultdict(list)
        self._injections = []
        self._creates = collections.Counter()
        self._history = {}
        self.requests = []
        # Seconds an instance restored from a backup stays BUILD.
        self.restore_build_seconds = 0.0
        # Seconds a deleted instance stays SHUTDOWN before it is gone.
        self.delete_seconds = 0.0

    def _setUp(self):
        self.server = server.Server(('127.0.0.1', 0), server.Handler, self)
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
        """Register an instance; returns its id (a new model.UUID by default).

        ``project_id`` None makes it visible in every project.  Keyword
        arguments of :class:`model.BackupBehaviour` apply to its backups.
        """
        instance_id = instance_id or str(uuid.uuid4())
        with self._lock:
            self._instances[instance_id] = model.Instance(
                instance_id, status, project_id, fault,
                model.BackupBehaviour(**behaviour) if behaviour else None)
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
        :data:`model.DROP`; ``count`` None means every request from now on.
        """
        with self._lock:
            self._injections.append(model.Injection(
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
            self._injections.append(model.Injection(
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
                model.BackupBehaviour(**behaviour) if behaviour else
                self._behaviour_of(project_id, instance_id))

    # What a test reads ----------------------------------------------------

    def create_count(self, instance_id):
        """Backups Trove accepted (202) for ``instance_id``."""
        with self._lock:
            return self._creates[instance_id]

    def history(self):
        """A :class:`model.BackupRecord` of every backup ever stored."""
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
        match = model.PATH.match(parsed.path)
        project = match and match.group('project')
        try:
            body = json.loads(raw_body) if raw_body else None
        except ValueError:
            body = raw_body
        if self.record_requests:
            self.requests.append(model.RecordedRequest(
                method, parsed.path, query, body, project,
                global_request_id))
        try:
            if self.check_token is not None:
                self.check_token(token, project)
            if match is None:
                raise model.TroveFault(404)
            collection, ident = match.group('collection', 'id')
            operation, serve = self._route(method, collection, ident)
            late = self._apply_injections(operation, self._instance_of(
                operation, project, ident, query, body))
            answer = serve(project, ident, query, body)
            deadline = time.time() + late
            while time.time() < deadline:
                if gone is not None and gone():
                    raise model.Drop()
                time.sleep(min(0.5, max(0.0, deadline - time.time())))
            return answer
        except model.TroveFault as fault:
            return fault.code, fault.body()

    def _route(self, method, collection, ident):
        routes = {
            ('GET', 'instances', True): (model.INSTANCE_SHOW,
                                         self._show_instance),
            ('GET', 'backups', False): (model.BACKUP_LIST, self._list_backups),
            ('POST', 'instances', False): (model.INSTANCE_CREATE,
                                           self._create_instance),
            ('GET', 'instances', False): (model.INSTANCE_LIST,
                                          self._list_instances),
            ('DELETE', 'instances', True): (model.INSTANCE_DELETE,
                                            self._delete_instance),
            ('POST', 'backups', False): (model.BACKUP_CREATE,
                                         self._create_backup),
            ('GET', 'backups', True): (model.BACKUP_SHOW, self._show_backup),
            ('DELETE', 'backups', True): (model.BACKUP_DELETE,
                                          self._delete_backup),
        }
        route = routes.get((method, collection, ident is not None))
        if route is None:
            raise model.TroveFault(405, 'The server does not serve %s here.'
                                   % method)
        return route

    def _instance_of(self, operation, project, ident, query, body):
        if operation in (model.INSTANCE_SHOW, model.INSTANCE_DELETE):
            return ident
        if operation in (model.INSTANCE_CREATE, model.INSTANCE_LIST):
            return None
        if operation == model.BACKUP_LIST:
            return query.get('instance_id')
        if operation == model.BACKUP_CREATE:
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
        if injection.status == model.DROP:
            raise model.Drop()
        if injection.status is not None:
            raise model.TroveFault(injection.status, injection.message,
                                   injection.retry_after)
        return 0

    def _find_instance(self, project, instance_id):
        self._forget_deleted()
        instance = self._instances.get(instance_id)
        if instance and instance.project_id in (None, project):
            return instance
        return None

    def _forget_deleted(self):
        # Under self._lock: deleted instances whose delete has finished.
        now = self.clock()
        for instance in list(self._instances.values()):
            if instance.gone_at is not None and now >= instance.gone_at:
                del self._instances[instance.id]

    def _behaviour_of(self, project, instance_id):
        instance = self._find_instance(project, instance_id)
        return (instance and instance.behaviour) or self.behaviour

    def _status_of(self, project, instance, now):
        # Trove shows BACKUP while a backup of the instance is running.
        if instance.status in model.READY_STATUSES and any(
                b.state(now)[0] in model.IN_PROGRESS
                for b in self._by_instance.get((project, instance.id), ())):
            return 'BACKUP'
        return instance.status

    def _instance_view(self, project, instance, now):
        status = self._status_of(project, instance, now)
        if (instance.ready_at is not None and status == 'BUILD'
                and now >= instance.ready_at):
            status = instance.status = 'ACTIVE'
        view = {'id': instance.id,
                'name': instance.name or 'instance-%s' % instance.id[:8],
                'status': status,
                # A restored instance's database is up once it is ACTIVE.
                'operating_status': ('HEALTHY' if instance.ready_at is None
                                     or status in model.READY_STATUSES
                                     else 'UNKNOWN'),
                'datastore': {'type': 'mysql', 'version': '8.0'},
                'flavor': {'id': instance.flavor_id}, 'region': 'RegionOne',
                'volume': {'size': instance.volume_size}}
        if instance.fault:
            view['fault'] = {'message': instance.fault,
                             'details': instance.fault}
        return view

    def _show_instance(self, project, ident, query, body):
        with self._lock:
            instance = self._find_instance(project, ident)
            if instance is None:
                raise model.TroveFault(
                    404, 'Resource %s cannot be found.' % ident)
            return 200, {'instance': self._instance_view(
                project, instance, self.clock())}

    def _list_instances(self, project, ident, query, body):
        with self._lock:
            self._forget_deleted()
            now = self.clock()
            found = [self._instance_view(project, instance, now)
                     for instance in self._instances.values()
                     if instance.project_id in (None, project)]
        return 200, {'instances': found, 'links': []}

    def _create_instance(self, project, ident, query, body):
        """Only what a restore sends: a new instance from a backup."""
        request = body.get('instance') if isinstance(body, dict) else None
        point = (request or {}).get('restorePoint') or {}
        if not isinstance(request, dict) or not point.get('backupRef'):
            raise model.TroveFault(
                400, 'This fake Trove only creates instances from a backup '
                     '(restorePoint).')
        for field in ('name', 'flavorRef'):
            if not isinstance(request.get(field), str):
                raise model.TroveFault(400, '%s is required.' % field)
        size = (request.get('volume') or {}).get('size')
        if not isinstance(size, int) or size < 1:
            raise model.TroveFault(400, 'volume size is required.')
        with self._lock:
            backup = self._backups.get(project, {}).get(point['backupRef'])
            if backup is None:
                raise model.TroveFault(
                    404, 'Backup %s cannot be found.' % point['backupRef'])
            if backup.state(self.clock())[0] != 'COMPLETED':
                raise model.TroveFault(
                    422, 'Backup %s is not COMPLETED.' % backup.id)
            instance = model.Instance(
                id=str(uuid.uuid4()), status='BUILD', project_id=project,
                name=request['name'],
                ready_at=self.clock() + self.restore_build_seconds,
                restored_from=backup.id, flavor_id=request['flavorRef'],
                volume_size=size)
            self._instances[instance.id] = instance
            return 200, {'instance': self._instance_view(
                project, instance, self.clock())}

    def _delete_instance(self, project, ident, query, body):
        """As Trove: 422 while BUILD; SHUTDOWN, then gone (404)."""
        with self._lock:
            instance = self._find_instance(project, ident)
            if instance is None:
                raise model.TroveFault(
                    404, 'Resource %s cannot be found.' % ident)
            now = self.clock()
            status = self._instance_view(project, instance, now)['status']
            if status == 'BUILD':
                raise model.TroveFault(
                    422, 'Instance %s is not ready. (Status is BUILD).'
                    % ident)
            if instance.gone_at is None:
                instance.status, instance.ready_at = 'SHUTDOWN', None
                instance.gone_at = now + self.delete_seconds
            self._forget_deleted()
        return 202, None

    def restored_instances(self, backup_id=None):
        """The instances made from a backup (of ``backup_id``)."""
        with self._lock:
            return [instance for instance in self._instances.values()
                    if instance.restored_from is not None
                    and backup_id in (None, instance.restored_from)]

    def _create_backup(self, project, ident, query, body):
        backup = model.validate_create(body)
        instance_id = backup['instance']
        with self._lock:
            now = self.clock()
            instance = self._find_instance(project, instance_id)
            if instance is None:
                raise model.TroveFault(404, 'Resource %s cannot be found.'
                                       % instance_id)
            status = self._status_of(project, instance, now)
            if status not in model.READY_STATUSES:
                raise model.TroveFault(422, (
                    'Instance %s is not currently available for an action to '
                    'be performed (instance status was %s).'
                    % (instance_id, status)))
            parent_id = backup.get('parent_id')
            if parent_id and parent_id not in self._backups.get(project, {}):
                raise model.TroveFault(404, 'Resource %s cannot be found.'
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
        backup = model.Backup(str(uuid.uuid4()), project, instance_id, name,
                              description, parent_id, container, created,
                              behaviour)
        self._backups.setdefault(project, {})[backup.id] = backup
        self._by_instance[(project, instance_id)].append(backup)
        self._history[backup.id] = model.BackupRecord(
            backup.id, project, instance_id, description, created,
            parent_id=parent_id)
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
                raise model.TroveFault(
                    404, 'Resource %s cannot be found.' % ident)
            return 200, {'backup': self._view(backup, self.clock())}

    def _list_backups(self, project, ident, query, body):
        try:
            limit = int(query.get('limit') or self.page_size)
            offset = int(query.get('marker') or 0)
        except ValueError:
            raise model.TroveFault(400, 'limit and marker must be integers.')
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
                raise model.TroveFault(
                    404, 'Resource %s cannot be found.' % ident)
            if backup.state(now)[0] in model.IN_PROGRESS:
                raise model.TroveFault(
                    422, 'Backup %s cannot be deleted because it is '
                    'running.' % ident)
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
            'created': model.timestamp(backup.created),
            'updated': model.timestamp(updated),
            'size': backup.behaviour.size_gb if done else None,
            'status': status, 'parent_id': backup.parent_id,
            'project_id': backup.project_id, 'datastore': model.DATASTORE,
            'storage_driver': 'swift',
        }
