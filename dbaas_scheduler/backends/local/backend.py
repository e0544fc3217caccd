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

What it answers may reach a tenant (an execution's ``fault``, the 400 of a
policy's create): never the operator's configured instance names, database
URLs or host paths.  Those go to the worker's log at WARNING, with the
execution id where there is one; the answer says to look there.
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
from dbaas_scheduler.backends.local import restore as local_restore
from dbaas_scheduler.backends.local import verify as local_verify
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

# Instance names become directory names.
_INSTANCE_NAME = re.compile(r'^[A-Za-z0-9][A-Za-z0-9._-]*$')
# Characters of a dead job's log quoted in the fault.
_LOG_TAIL = 500
# What a tenant reads of an error whose cause is the operator's to see.
_SEE_LOG = 'the service\'s operator finds the cause in its log'


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

    def instance_id_error(self, instance_id):
        if not _INSTANCE_NAME.match(instance_id):
            return ('a local instance is named by letters, digits, ".", "_" '
                    'and "-", starting with a letter or digit')
        return None

    def check_instance(self, policy):
        # The option is read now: SIGHUP may have added the instance.
        self._database_url(policy)

    # The coverage report knows local instances from their policies: an
    # instance of [local_backend] instances may serve several projects'
    # policies, or none.
    lists_instances = False

    def list_instances(self, actor):
        # For policy templates: the operator's, those [local_backend]
        # instance_projects gives the project, whatever the credentials.
        return {name: None for name, owner
                in self.conf.local_backend.instance_projects.items()
                if owner == actor.project_id}

    def create_backup(self, policy, name, description):
        self._jobs.reap()
        url = self._database_url(policy)
        execution_id = base.tagged_execution_id(description)
        try:
            command = commands.dump_command(url)
        except commands.UnsupportedDatabase as e:
            raise self._hidden(
                base.PermanentBackendError, execution_id,
                'instance %s cannot be backed up as configured'
                % policy.instance_id,
                'instance %s in [local_backend] instances: %s'
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
            raise self._hidden(
                base.TransientBackendError, execution_id,
                'cannot start a backup of instance %s' % policy.instance_id,
                'cannot start a backup of instance %s: %s'
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
            raise self._hidden(
                base.PermanentBackendError, None,
                'the record of backup %s is unreadable' % backup_id,
                'the manifest %s is unreadable: %s' % (manifest_path, e))
        if manifest is None:
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        backup = self._public(manifests.backup_from_manifest(directory,
                                                             manifest))
        if backup.status == base.BackupStatus.FAILED:
            LOG.warning('Execution %(execution)s: local backup %(backup)s of '
                        'instance %(instance)s failed: %(fault)s',
                        {'execution': base.tagged_execution_id(
                            manifest.get('description')),
                         'backup': backup_id,
                         'instance': manifest.get('instance'),
                         'fault': manifest.get('fault')})
        return backup

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
                backups.append(self._public(
                    manifests.backup_from_manifest(directory, manifest)))
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

    # Restores.

    def _restore_target(self, policy, params):
        """``(target name, database URL or None, path of a new file)``.

        Raises ``exception.Invalid`` for a target the request may not use.
        Only names the operator configured, for the policy's project, or
        the source itself when the request says so and names it.
        """
        params = params or {}
        target = params.get('target')
        if target is None:
            return None, None, None
        if target == policy.instance_id:
            if not params.get('allow_source'):
                raise exception.Invalid(
                    reason='restoring onto the source instance %s replaces '
                           'its data; to do it, name it as the target and '
                           'set allow_source to true' % target)
            return target, self._database_url(policy), None
        conf = self.conf.local_backend
        url = conf.restore_targets.get(target)
        if (url is None
                or conf.restore_target_projects.get(target)
                != policy.project_id):
            # Not the configured names: other projects' targets stay
            # unknown.
            raise exception.Invalid(
                reason='%s is not a restore target of this project; its '
                       'operator configures them in [local_backend] '
                       'restore_targets and restore_target_projects'
                       % target)
        return target, url, None

    def _restorable_manifest(self, policy, backup_id):
        directory = self._instance_dir(policy)
        manifest = manifests.read_manifest(
            self._manifest_path(directory, backup_id))
        if manifest is None:
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        if (manifest.get('status') != base.BackupStatus.COMPLETED
                or not manifest.get('file')):
            raise base.PermanentBackendError(
                backend=self.name,
                reason='backup %s is %s, not COMPLETED: there is nothing to '
                       'restore' % (backup_id, manifest.get('status')))
        return directory, manifest

    def check_restore(self, policy, backup_id, params):
        target, url, _ = self._restore_target(policy, params)
        try:
            directory, manifest = self._restorable_manifest(policy,
                                                            backup_id)
        except base.BackupNotFound:
            raise exception.Invalid(
                reason='backup %s no longer exists (retention may have '
                       'deleted it)' % backup_id)
        except base.BackendError as e:
            raise exception.Invalid(reason=str(e))
        kind = manifest.get('kind')
        if target is None:
            if kind != commands.SQLITE:
                raise exception.Invalid(
                    reason='a %s backup needs a target: name one of the '
                           'restore targets the operator configured for '
                           'this project' % kind)
            return
        try:
            target_kind = commands.database_kind(commands.parse_url(url))
        except commands.UnsupportedDatabase:
            target_kind = None
        if target_kind != kind:
            raise exception.Invalid(
                reason='backup %s is a %s dump; target %s is not a %s '
                       'database' % (backup_id, kind, target, kind))

    def restore_backup(self, policy, backup_id, params, restore_id):
        params = params or {}
        try:
            target, url, _ = self._restore_target(policy, params)
        except exception.Invalid as e:
            raise base.PermanentBackendError(backend=self.name,
                                             reason=e.kwargs['reason'])
        directory, manifest = self._restorable_manifest(policy, backup_id)
        data_path = os.path.join(directory, manifest['file'])
        try:
            local_restore.check_backup_file(data_path, manifest)
            if target is None:
                target_id = '%s.sqlite' % restore_id
                path = os.path.join(os.path.abspath(os.path.expanduser(
                    self.conf.local_backend.restore_dir)), target_id)
                local_restore.load_sqlite(data_path, path, backup_id)
            else:
                target_id = target
                self._load_into(url, data_path, backup_id, target,
                                bool(params.get('replace')), directory)
        except local_restore.RestoreFailed as e:
            LOG.warning('Restore %(restore)s of local backup %(backup)s '
                        'failed: %(detail)s',
                        {'restore': restore_id, 'backup': backup_id,
                         'detail': e.detail})
            raise base.PermanentBackendError(backend=self.name,
                                             reason=e.reason)
        LOG.info('Restored local backup %(backup)s of instance %(instance)s '
                 'into %(target)s (restore %(restore)s).',
                 {'backup': backup_id, 'instance': policy.instance_id,
                  'target': target_id, 'restore': restore_id})
        return base.RestoreProgress(target_id=target_id, done=True)

    def _load_into(self, url, data_path, backup_id, target, replace,
                   workdir):
        try:
            command = local_restore.load_command(url)
        except commands.UnsupportedDatabase as e:
            raise local_restore.RestoreFailed(
                'target %s cannot be restored into as configured; the '
                'service\'s operator finds the cause in its log' % target,
                'target %s: %s' % (target, e))
        if command.kind == commands.SQLITE:
            if (os.path.exists(command.sqlite_path) and not replace
                    and local_restore.table_names(url)):
                raise local_restore.RestoreFailed(
                    'target %s is not empty; restore into an empty '
                    'database, or set replace to true' % target)
            local_restore.load_sqlite(data_path, command.sqlite_path,
                                      backup_id)
            return
        try:
            tables = local_restore.table_names(url)
            if tables and not replace:
                raise local_restore.RestoreFailed(
                    'target %s is not empty (%d tables); restore into an '
                    'empty database, or set replace to true'
                    % (target, len(tables)))
            if tables:
                local_restore.clear_database(url)
        except local_restore.RestoreFailed:
            raise
        except Exception as e:
            raise local_restore.RestoreFailed(
                'target %s cannot be reached; the service\'s operator finds '
                'the cause in its log' % target,
                'target %s: %s: %s' % (target, type(e).__name__, e))
        local_restore.load_sql(command, data_path, backup_id, workdir)

    def get_restore(self, policy, target_id):
        # A local restore is over when restore_backup returns.
        return base.RestoreProgress(target_id=target_id, done=True)

    # Verifications.

    def verify_backup(self, policy, backup_id, check, scratch):
        url = self._database_url(policy)
        directory, manifest = self._restorable_manifest(policy, backup_id)
        try:
            return local_verify.verify(
                url, os.path.join(directory, manifest['file']), manifest,
                scratch, self.conf.local_backend.restore_dir, check,
                self.conf.verify.check_timeout, directory)
        except local_restore.RestoreFailed as e:
            LOG.warning('Verification %(scratch)s of local backup '
                        '%(backup)s failed: %(detail)s',
                        {'scratch': scratch, 'backup': backup_id,
                         'detail': e.detail})
            raise base.PermanentBackendError(backend=self.name,
                                             reason=e.reason)
        except Exception as e:
            raise self._hidden(
                base.TransientBackendError, None,
                'the scratch database of verification %s cannot be used'
                % scratch, 'scratch database %s of instance %s: %s: %s'
                % (scratch, policy.instance_id, type(e).__name__, e))

    def delete_scratch(self, policy, scratch):
        try:
            url = self._database_url(policy)
        except base.InstanceNotFound:
            url = None
        try:
            local_verify.delete_scratch(
                url, self.conf.local_backend.restore_dir, scratch)
        except Exception as e:
            raise self._hidden(
                base.TransientBackendError, None,
                'scratch target %s cannot be deleted now' % scratch,
                'scratch target %s of instance %s: %s: %s'
                % (scratch, policy.instance_id, type(e).__name__, e))

    # What a tenant may read.

    def _hidden(self, error_class, execution_id, public, detail):
        """``error_class`` saying ``public``; ``detail`` goes to the log."""
        LOG.warning('Execution %(execution)s: local backend: %(detail)s',
                    {'execution': execution_id, 'detail': detail})
        return error_class(backend=self.name,
                           reason='%s; %s' % (public, _SEE_LOG))

    @staticmethod
    def _public(backup):
        """``backup`` as a tenant may see it: its fault without details.

        The manifest keeps the dump tool's own words (host names, paths);
        :meth:`get_backup` logs them.
        """
        if backup.fault:
            backup.fault = 'the dump failed; %s (backup %s)' % (
                _SEE_LOG, backup.id)
        return backup

    # Configuration and paths.

    def _database_url(self, policy):
        url = self.conf.local_backend.instances.get(policy.instance_id)
        if url is None:
            # Not the configured names: a tenant would learn the
            # operator's databases from them.
            raise base.InstanceNotFound(
                backend=self.name, instance_id=policy.instance_id,
                reason='it is not a local instance of this service; its '
                       'operator configures them in [local_backend] '
                       'instances (name:database-URL, then SIGHUP)')
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
            raise self._hidden(
                base.PermanentBackendError, None,
                'the backup directory of instance %s is unusable' % instance,
                '%s, where the backups of instance %s go, is not a '
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
