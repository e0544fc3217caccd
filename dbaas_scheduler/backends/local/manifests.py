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
"""The manifest of a local backup: its JSON format, read and written here.

The manifest is the backup's state: the backend writes it BUILDING before
the job starts, the job rewrites it COMPLETED or FAILED when it ends, and
the backend rewrites it FAILED for a job that died.  Every write replaces
the file atomically, so a reader sees one whole manifest or the other.
"""

import datetime
import json
import os
import tempfile

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.local import files

MANIFEST_VERSION = 1


def _utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def new_manifest(backup_id, policy, name, description, kind, host, pid,
                 pid_started, now=None):
    """The manifest of a backup whose job ``pid`` is about to start."""
    now = (now or _utcnow()).isoformat()
    return {
        'version': MANIFEST_VERSION,
        'id': backup_id,
        'host': host,
        'instance': policy.instance_id,
        'policy_id': getattr(policy, 'id', None),
        'name': name,
        'description': description,
        'kind': kind,
        'status': base.BackupStatus.BUILDING,
        'created_at': now,
        'updated_at': now,
        'finished_at': None,
        'pid': pid,
        'pid_started': pid_started,
        'file': None,
        'size_bytes': None,
        'sha256': None,
        'fault': None,
    }


def finish_manifest(manifest, status, now=None, **values):
    """A copy of ``manifest`` in its terminal state."""
    now = (now or _utcnow()).isoformat()
    return dict(manifest, status=status, updated_at=now, finished_at=now,
                pid=None, **values)


def _parse_time(value):
    return datetime.datetime.fromisoformat(value) if value else None


def backup_from_manifest(directory, manifest):
    """The :class:`~dbaas_scheduler.backends.base.Backup` a manifest says."""
    location = None
    if (manifest['status'] == base.BackupStatus.COMPLETED
            and manifest.get('file')):
        location = os.path.join(directory, manifest['file'])
    return base.Backup(
        id=manifest['id'],
        instance_id=manifest['instance'],
        status=manifest['status'],
        created_at=_parse_time(manifest.get('created_at')),
        updated_at=_parse_time(manifest.get('updated_at')),
        name=manifest.get('name'),
        description=manifest.get('description'),
        size_bytes=manifest.get('size_bytes'),
        location=location,
        fault=manifest.get('fault'))


def write_manifest(path, manifest):
    """Replace the manifest at ``path`` atomically (temp, fsync, rename)."""
    directory, filename = os.path.split(path)
    fd, temp_path = tempfile.mkstemp(dir=directory, prefix='.' + filename,
                                     suffix='.tmp')
    try:
        with os.fdopen(fd, 'w') as stream:
            json.dump(manifest, stream, indent=2, sort_keys=True)
            stream.write('\n')
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp_path, path)
    except BaseException:
        files.remove(temp_path)
        raise
    files.fsync_directory(directory)


def read_manifest(path):
    """The manifest at ``path`` as a dict; None if there is none."""
    try:
        with open(path) as stream:
            return json.load(stream)
    except FileNotFoundError:
        return None
