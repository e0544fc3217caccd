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
"""The fake Trove's records, faults and Trove's validation of a create."""

import dataclasses
import datetime
import re

DROP = 'drop'

# Operations, to aim an injection at one kind of request.
INSTANCE_SHOW = 'instance'
BACKUP_LIST = 'list'
BACKUP_CREATE = 'create'
BACKUP_SHOW = 'show'
BACKUP_DELETE = 'delete'
INSTANCE_CREATE = 'instance_create'
INSTANCE_LIST = 'instance_list'
INSTANCE_DELETE = 'instance_delete'

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

UUID = re.compile(r'^[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}$')
PATH = re.compile(r'^/v1\.0/(?P<project>[^/]+)/(?P<collection>instances|'
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


class Drop(Exception):
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
class Injection:
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
    # The backup it is built on (an incremental one), as stored.
    parent_id: str | None = None


@dataclasses.dataclass
class Instance:
    id: str
    status: str
    project_id: str | None = None     # None: visible in every project
    fault: str | None = None
    behaviour: BackupBehaviour | None = None
    # Instances restored from a backup (POST instances with restorePoint).
    name: str | None = None
    ready_at: float | None = None
    restored_from: str | None = None
    flavor_id: str = '6'
    volume_size: int = 1
    # When a deleted instance is gone (SHUTDOWN until then, as Trove shows
    # an instance its task manager is deleting).
    gone_at: float | None = None


@dataclasses.dataclass
class Backup:
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


def timestamp(posix):
    return datetime.datetime.fromtimestamp(
        posix, datetime.timezone.utc).strftime(TIME_FORMAT)


def validate_create(body):
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
                and UUID.match(backup[key])):
            problems.append('%s %r is not a UUID' % (key, backup.get(key)))
    incremental = backup.get('incremental', 0)
    if isinstance(incremental, bool) or incremental not in (0, 1):
        problems.append('incremental must be the integer 0 or 1')
    if problems:
        raise TroveFault(400, 'Validation error: %s.' % '; '.join(problems))
    return backup
