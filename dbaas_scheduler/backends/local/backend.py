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
"""The ``local`` backend's interface: :class:`LocalBackend`.

The package's docstring (:mod:`dbaas_scheduler.backends.local`) says how
it works; this module answers the worker from the manifests on disk and
reports a job that died as FAILED.
"""

import os
import re
import uuid

from oslo_log import log as logging
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.backends.local import files
from dbaas_scheduler.backends.local import job_control
from dbaas_scheduler.backends.local import manifests

LOG = logging.getLogger(__name__)

# Instance names become directory names.
_INSTANCE_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')
# Characters of a dead job's log quoted in the fault.
_LOG_TAIL = 500


def has_tag(description, tag):
    """Whether ``description`` holds ``tag`` as a whole word."""
    # A tag for execution "ab" must not match one for "abc".
    pattern = re.escape(tag) + r'(?![\w-])'
    return bool(description and re.search(pattern, description))


class LocalBackend(base.BackupBackend):
    """Backups made on this host with the databases' own dump tools."""

    name = 'local'

    reports_finish = True

    def __init__(self, conf):
        super().__init__(conf)
        # The job's end is reported at once (base.BackupBackend.
        # report_finished): the worker need not wait for its next poll.
        self._jobs = job_control.JobControl(on_exit=self.report_finished)

    # The backend interface.

    def check_instance(self, policy):
        # The option is read now: SIGHUP may have added the instance.
        self._database_url(policy)

    def create_backup(self, policy, name, description):
        self._jobs.reap()
        url = self._database_url(policy)
        try:
            command = commands.dump_command(url)
        except commands.UnsupportedDatabase as e:
            raise base.PermanentBackendError(
                backend=self.name,
                reason='instance %s in [local_backend] instances: %s'
                       % (policy.instance_id, e))
        backup_id = uuidutils.generate_uuid()
        orders = {'url': url,
                  'compression_level':
                      self.conf.local_backend.compression_level}

        def make_manifest(pid, pid_started):
            return manifests.new_manifest(
                backup_id, policy, name, description, command.kind,
                self.conf.host, pid, pid_started)

        try:
            directory = self._instance_dir(policy, create=True)
            manifest = self._jobs.start(directory, backup_id, orders,
                                        make_manifest)
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
        return manifests.backup_from_manifest(directory, manifest)

    def get_backup(self, policy, backup_id):
        self._jobs.reap()
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
        return manifests.backup_from_manifest(directory, manifest)

    def find_backup(self, policy, tag):
        tagged = [backup for backup in self.list_backups(policy)
                  if has_tag(backup.description, tag)]
        # One per tag, unless someone made more by hand: the newest wins.
        return tagged[-1] if tagged else None

    def list_backups(self, policy):
        self._jobs.reap()
        directory = self._instance_dir(policy)
        try:
            filenames = sorted(os.listdir(directory))
        except FileNotFoundError:
            return []
        backups = []
        for filename in filenames:
            if (filename.startswith('.')
                    or not filename.endswith(files.MANIFEST_SUFFIX)):
                continue
            path = os.path.join(directory, filename)
            try:
                manifest = self._settled_manifest(directory, path)
            except (ValueError, KeyError) as e:
                LOG.warning('Ignoring unreadable backup manifest %(path)s: '
                            '%(error)s', {'path': path, 'error': e})
                continue
            if manifest is not None:
                backups.append(
                    manifests.backup_from_manifest(directory, manifest))
        backups.sort(key=lambda backup: backup.created_at)
        return backups

    def delete_backup(self, policy, backup_id):
        self._jobs.reap()
        directory = self._instance_dir(policy)
        manifest_path = self._manifest_path(directory, backup_id)
        try:
            manifest = manifests.read_manifest(manifest_path)
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
            if (self._jobs.running(manifest)
                    and not self._jobs.stop(manifest)):
                raise base.TransientBackendError(
                    backend=self.name,
                    reason='the job process %d of backup %s does not stop'
                           % (manifest['pid'], manifest['id']))
        for path in files.data_paths(directory, backup_id) + [
                files.log_path(directory, backup_id)]:
            files.remove(path)
        # The manifest goes last: a delete interrupted half way leaves it,
        # and the next delete finishes the job.
        files.remove(manifest_path)
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
            reason += ('; add it there as name:database-URL and send the '
                       'service SIGHUP to reload it')
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
        if os.path.lexists(directory) and not os.path.isdir(directory):
            # Someone's file where the instance's backups go: nothing can
            # be listed, found or made there until it is moved away.
            raise base.PermanentBackendError(
                backend=self.name,
                reason='%s, where the backups of instance %s go, is not a '
                       'directory; move it away' % (directory, instance))
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
        return files.manifest_path(directory, backup_id)

    def _made_elsewhere(self, manifest):
        """Whether another host's job makes it: its pid means nothing here."""
        host = manifest.get('host')
        return host is not None and host != self.conf.host

    def _settled_manifest(self, directory, manifest_path):
        """The manifest, FAILED (and recorded so) if its job died."""
        manifest = manifests.read_manifest(manifest_path)
        if (manifest is None
                or manifest['status'] != base.BackupStatus.BUILDING
                or self._made_elsewhere(manifest)):
            return manifest
        if self._jobs.running(manifest):
            # A job an earlier worker of this host started: its end is
            # reported too.
            self._jobs.watch(manifest)
            return manifest
        # The job may have finished between the read and the look.
        manifest = manifests.read_manifest(manifest_path)
        if (manifest is None
                or manifest['status'] != base.BackupStatus.BUILDING):
            return manifest
        return self._record_dead_job(directory, manifest_path, manifest)

    def _record_dead_job(self, directory, manifest_path, manifest):
        backup_id = manifest['id']
        fault = ('the dump process (pid %s) died before the backup was '
                 'finished' % manifest.get('pid'))
        last_words = self._log_tail(files.log_path(directory, backup_id))
        if last_words:
            fault += '; its last output: %s' % last_words
        for path in files.data_paths(directory, backup_id):
            files.remove(path)
        failed = manifests.finish_manifest(
            manifest, base.BackupStatus.FAILED, fault=fault)
        try:
            manifests.write_manifest(manifest_path, failed)
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
