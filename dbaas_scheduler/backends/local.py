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
"""The ``local`` backend: dumps of databases this host reaches, as files.

Instances are the names of ``[local_backend] instances``.  Every backup is
a JSON manifest ``<backup_dir>/<instance>/<backup id>.json`` and, once
COMPLETED, a gzip file next to it.  The dump itself runs in a detached
:mod:`~dbaas_scheduler.backends.local_job` process, so that a worker dying
mid-backup neither stops it nor loses it: whichever worker asks next reads
the manifest.  A manifest left BUILDING by a job that is no longer alive is
reported FAILED (and recorded so, its partial files removed).

Job liveness is judged by pid, which makes this backend host-local: only
a worker on the host that made a backup (``[DEFAULT] host``, recorded in
the manifest) judges whether its job died; on a backup directory shared
between hosts, the others report it BUILDING until its own host says.
"""

import datetime
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import uuid

from oslo_log import log as logging
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends import local_job

LOG = logging.getLogger(__name__)

MANIFEST_VERSION = 1

# Instance names become directory names.
_INSTANCE_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')
# Seconds delete_backup waits for a job it killed to be gone.
_KILL_WAIT = 10
# Characters of a dead job's log quoted in the fault.
_LOG_TAIL = 500


def _proc_stat(pid):
    """(state, start time in ticks since boot) from /proc; None if absent."""
    try:
        with open('/proc/%d/stat' % pid) as stream:
            text = stream.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces.
    fields = text.rpartition(')')[2].split()
    return fields[0], int(fields[19])


def process_start_time(pid):
    """When ``pid`` started (ticks since boot), or None where unknown.

    Recorded with the pid, so that a pid the kernel handed to another
    process since is not mistaken for the job.
    """
    stat = _proc_stat(pid)
    return None if stat is None else stat[1]


def job_alive(pid, started=None):
    """Whether the job process ``pid`` (started at ``started``) still runs.

    A zombie has finished; a process with another start time is not the
    job but a later one that was given the same pid.
    """
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    stat = _proc_stat(pid)
    if stat is None:
        # Either no /proc on this system (trust kill), or the process
        # exited between the two looks.
        return not os.path.exists('/proc/self/stat')
    state, start = stat
    if state in ('Z', 'X', 'x'):
        return False
    return started is None or start == started


def new_manifest(backup_id, policy, name, description, kind, host, pid,
                 pid_started, now=None):
    """The manifest of a backup whose job ``pid`` is about to start."""
    now = (now or local_job.utcnow()).isoformat()
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


def has_tag(description, tag):
    """Whether ``description`` holds ``tag`` as a whole word."""
    # A tag for execution "ab" must not match one for "abc".
    pattern = re.escape(tag) + r'(?![\w-])'
    return bool(description and re.search(pattern, description))


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


class LocalBackend(base.BackupBackend):
    """Backups made on this host with the databases' own dump tools."""

    name = 'local'

    def __init__(self, conf):
        super().__init__(conf)
        # Jobs this process started, by backup id: reaped as they end, so
        # that a long-lived worker does not collect zombies.
        self._jobs = {}
        self._jobs_lock = threading.Lock()

    # The backend interface.

    def create_backup(self, policy, name, description):
        self._reap_jobs()
        url = self._database_url(policy)
        try:
            command = local_job.dump_command(url)
        except local_job.UnsupportedDatabase as e:
            raise base.PermanentBackendError(
                backend=self.name,
                reason='instance %s in [local_backend] instances: %s'
                       % (policy.instance_id, e))
        backup_id = uuidutils.generate_uuid()
        try:
            directory = self._instance_dir(policy, create=True)
            manifest_path = self._manifest_path(directory, backup_id)
            manifest = self._start_job(policy, directory, manifest_path,
                                       backup_id, name, description,
                                       command.kind, url)
        except OSError as e:
            raise base.TransientBackendError(
                backend=self.name,
                reason='cannot start a backup of instance %s: %s'
                       % (policy.instance_id, e))
        LOG.info('Started local backup %(backup)s of instance %(instance)s '
                 'for policy %(policy)s (%(description)s) in job process '
                 '%(pid)d.',
                 {'backup': backup_id, 'instance': policy.instance_id,
                  'policy': getattr(policy, 'id', None),
                  'description': description, 'pid': manifest['pid']})
        return backup_from_manifest(directory, manifest)

    def get_backup(self, policy, backup_id):
        self._reap_jobs()
        directory = self._instance_dir(policy)
        manifest_path = self._manifest_path(directory, backup_id)
        try:
            manifest = self._settled_manifest(directory, manifest_path)
        except (ValueError, KeyError) as e:
            raise base.PermanentBackendError(
                backend=self.name,
                reason='the manifest %s is unreadable: %s'
                       % (manifest_path, e))
        if manifest is None:
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        return backup_from_manifest(directory, manifest)

    def find_backup(self, policy, tag):
        tagged = [backup for backup in self.list_backups(policy)
                  if has_tag(backup.description, tag)]
        # One per tag, unless someone made more by hand: the newest wins.
        return tagged[-1] if tagged else None

    def list_backups(self, policy):
        self._reap_jobs()
        directory = self._instance_dir(policy)
        try:
            filenames = sorted(os.listdir(directory))
        except FileNotFoundError:
            return []
        backups = []
        for filename in filenames:
            if (filename.startswith('.')
                    or not filename.endswith(local_job.MANIFEST_SUFFIX)):
                continue
            path = os.path.join(directory, filename)
            try:
                manifest = self._settled_manifest(directory, path)
            except (ValueError, KeyError) as e:
                LOG.warning('Ignoring unreadable backup manifest %(path)s: '
                            '%(error)s', {'path': path, 'error': e})
                continue
            if manifest is not None:
                backups.append(backup_from_manifest(directory, manifest))
        backups.sort(key=lambda backup: backup.created_at)
        return backups

    def delete_backup(self, policy, backup_id):
        self._reap_jobs()
        directory = self._instance_dir(policy)
        manifest_path = self._manifest_path(directory, backup_id)
        try:
            manifest = local_job.read_manifest(manifest_path)
        except ValueError:
            manifest = None
        if (manifest is not None
                and manifest.get('status') == base.BackupStatus.BUILDING):
            if self._made_elsewhere(manifest):
                raise base.TransientBackendError(
                    backend=self.name,
                    reason='backup %s is still being made on host %s; it '
                           'can be deleted once it has finished'
                           % (backup_id, manifest['host']))
            if self._job_running(manifest):
                self._stop_job(manifest)
        stem = os.path.join(directory, backup_id)
        for path in local_job.data_paths(directory, backup_id) + [
                stem + local_job.LOG_SUFFIX]:
            _remove(path)
        # The manifest goes last: a delete interrupted half way leaves it,
        # and the next delete finishes the job.
        _remove(manifest_path)
        if manifest is not None:
            LOG.info('Deleted local backup %(backup)s of instance '
                     '%(instance)s.',
                     {'backup': backup_id, 'instance': policy.instance_id})

    # Configuration and paths.

    def _database_url(self, policy):
        instances = self.conf.local_backend.instances
        url = instances.get(policy.instance_id)
        if url is None:
            if instances:
                reason = ('it is not in [local_backend] instances, which '
                          'names %s' % ', '.join(sorted(instances)))
            else:
                reason = ('no instances are configured in [local_backend] '
                          'instances')
            raise base.InstanceNotFound(
                backend=self.name, instance_id=policy.instance_id,
                reason=reason)
        return url

    def _instance_dir(self, policy, create=False):
        self._database_url(policy)
        instance = policy.instance_id
        if not _INSTANCE_NAME.match(instance):
            raise base.PermanentBackendError(
                backend=self.name,
                reason='instance name %r cannot name a directory; use '
                       'letters, digits, ".", "_" and "-"' % instance)
        backup_dir = os.path.abspath(os.path.expanduser(
            self.conf.local_backend.backup_dir))
        directory = os.path.join(backup_dir, instance)
        if create:
            os.makedirs(backup_dir, mode=0o700, exist_ok=True)
            try:
                os.mkdir(directory, mode=0o700)
            except FileExistsError:
                pass
        return directory

    def _manifest_path(self, directory, backup_id):
        try:
            canonical = str(uuid.UUID(backup_id))
        except (TypeError, ValueError, AttributeError):
            canonical = None
        if canonical != backup_id:
            # Not an id this backend gives out; and never a path.
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        return os.path.join(directory, backup_id + local_job.MANIFEST_SUFFIX)

    # Jobs.

    def _start_job(self, policy, directory, manifest_path, backup_id, name,
                   description, kind, url):
        """Start the job, record its manifest, then let it go."""
        log_path = os.path.join(directory, backup_id + local_job.LOG_SUFFIX)
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                         0o600)
        try:
            process = subprocess.Popen(
                [sys.executable, '-m', local_job.__name__, manifest_path],
                stdin=subprocess.PIPE, stdout=log_fd, stderr=log_fd,
                cwd=directory, bufsize=0, start_new_session=True)
        finally:
            os.close(log_fd)
        orders = {'url': url,
                  'compression_level':
                      self.conf.local_backend.compression_level}
        try:
            process.stdin.write(json.dumps(orders).encode('utf-8') + b'\n')
            manifest = new_manifest(backup_id, policy, name, description,
                                    kind, self.conf.host, process.pid,
                                    process_start_time(process.pid))
            local_job.write_manifest(manifest_path, manifest)
        except BaseException:
            # No manifest, no backup: the job must not make one.
            process.kill()
            process.wait()
            _remove(manifest_path)
            _remove(log_path)
            raise
        with self._jobs_lock:
            self._jobs[backup_id] = process
        try:
            process.stdin.write(local_job.START + b'\n')
            process.stdin.close()
        except OSError:
            # The job is already gone; the manifest will say FAILED.
            pass
        return manifest

    def _made_elsewhere(self, manifest):
        """Whether another host's job makes it: its pid means nothing here."""
        host = manifest.get('host')
        return host is not None and host != self.conf.host

    def _reap_jobs(self):
        with self._jobs_lock:
            for backup_id, process in list(self._jobs.items()):
                if process.poll() is not None:
                    del self._jobs[backup_id]

    def _job_running(self, manifest):
        with self._jobs_lock:
            process = self._jobs.get(manifest['id'])
        if process is not None and process.pid == manifest.get('pid'):
            return process.poll() is None
        return job_alive(manifest.get('pid'), manifest.get('pid_started'))

    def _stop_job(self, manifest):
        pid = manifest['pid']
        LOG.info('Stopping job process %(pid)d of local backup %(backup)s '
                 'to delete it.', {'pid': pid, 'backup': manifest['id']})
        try:
            # The job leads its own session: the dump tool dies with it.
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + _KILL_WAIT
        while self._job_running(manifest):
            if time.monotonic() > deadline:
                raise base.TransientBackendError(
                    backend=self.name,
                    reason='the job process %d of backup %s does not stop'
                           % (pid, manifest['id']))
            time.sleep(0.05)

    def _settled_manifest(self, directory, manifest_path):
        """The manifest, FAILED (and recorded so) if its job died."""
        manifest = local_job.read_manifest(manifest_path)
        if (manifest is None
                or manifest['status'] != base.BackupStatus.BUILDING
                or self._made_elsewhere(manifest)
                or self._job_running(manifest)):
            return manifest
        # The job may have finished between the read and the look.
        manifest = local_job.read_manifest(manifest_path)
        if (manifest is None
                or manifest['status'] != base.BackupStatus.BUILDING):
            return manifest
        return self._record_dead_job(directory, manifest_path, manifest)

    def _record_dead_job(self, directory, manifest_path, manifest):
        backup_id = manifest['id']
        fault = ('the dump process (pid %s) died before the backup was '
                 'finished' % manifest.get('pid'))
        last_words = self._log_tail(
            os.path.join(directory, backup_id + local_job.LOG_SUFFIX))
        if last_words:
            fault += '; its last output: %s' % last_words
        for path in local_job.data_paths(directory, backup_id):
            _remove(path)
        failed = local_job.finish_manifest(
            manifest, base.BackupStatus.FAILED, fault=fault)
        try:
            local_job.write_manifest(manifest_path, failed)
        except OSError as e:
            LOG.warning('Cannot record local backup %(backup)s as FAILED: '
                        '%(error)s', {'backup': backup_id, 'error': e})
        LOG.warning('Local backup %(backup)s of instance %(instance)s '
                    'failed: %(fault)s',
                    {'backup': backup_id, 'instance': manifest['instance'],
                     'fault': fault})
        return failed

    @staticmethod
    def _log_tail(log_path):
        try:
            with open(log_path, 'rb') as stream:
                stream.seek(0, os.SEEK_END)
                stream.seek(max(0, stream.tell() - _LOG_TAIL))
                return stream.read().decode('utf-8', 'replace').strip()
        except OSError:
            return ''
