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
"""The backend interface: what a worker needs from a place backups live.

A backend is a stevedore plugin in the ``dbaas_scheduler.backends``
namespace, named by a policy's ``backend`` column, instantiated once per
worker process with the configuration.  Every call receives the policy
(its ``instance_id``, ``project_id``, ``trust_id`` and ``backup_params``).

Backups are asynchronous at the backend: :meth:`BackupBackend.create_backup`
returns as soon as the backend has accepted the request (and given it an
id); the worker then polls :meth:`BackupBackend.get_backup` until the
status is terminal.  A backend must be safe to call from several threads.

Errors are classified, because the worker treats them differently:

* :class:`TransientBackendError` (connection refused or reset, timeouts,
  5xx, the instance busy): retried with backoff;
* :class:`PermanentBackendError`: the execution fails at once;
  :class:`InstanceNotFound` also disables the policy.
"""

import abc
import dataclasses
import datetime
import re
import threading

from dbaas_scheduler import exception
from dbaas_scheduler import stats

NAMESPACE = 'dbaas_scheduler.backends'


def execution_tag(execution_id):
    """The marker a backup's description carries to name its execution.

    ``find_backup`` looks for it, so that a worker that died between the
    backend's create and the recording of the backup id finds the backup
    again instead of creating a second one.
    """
    return 'dbaas-scheduler-execution:%s' % execution_id


_TAG = re.compile(r'dbaas-scheduler-execution:([0-9a-f]{8}-[0-9a-f]{4}-'
                  r'[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})')


def tagged_execution_id(description):
    """The execution id a backup's description carries, or None.

    Reconciliation reads it to find the backups this service made: an id
    that is not one of its executions means the backup is someone else's.
    """
    found = _TAG.search(description or '')
    return found.group(1) if found else None


_LISTENERS = []
_LISTENERS_LOCK = threading.Lock()


def add_finish_listener(listener):
    """Call ``listener(backup_id)`` when a backend reports a backup ended.

    A hint, not a state: the listener checks the backup through the
    backend as a poll would.  It must return quickly (it runs in the
    backend's thread).
    """
    with _LISTENERS_LOCK:
        _LISTENERS.append(listener)


def remove_finish_listener(listener):
    with _LISTENERS_LOCK:
        if listener in _LISTENERS:
            _LISTENERS.remove(listener)


class BackupStatus:
    """Backup states, as Trove names them; every backend maps to these."""

    NEW = 'NEW'
    BUILDING = 'BUILDING'
    SAVING = 'SAVING'
    COMPLETED = 'COMPLETED'
    FAILED = 'FAILED'
    DELETE_FAILED = 'DELETE_FAILED'

    IN_PROGRESS = (NEW, BUILDING, SAVING)
    TERMINAL = (COMPLETED, FAILED, DELETE_FAILED)


@dataclasses.dataclass
class Backup:
    """One backup as a backend reports it."""

    id: str
    instance_id: str
    status: str
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None
    name: str | None = None
    description: str | None = None
    # The full backup an incremental one builds on; deleting the parent
    # deletes its children (Trove's rule, and retention's).
    parent_id: str | None = None
    size_bytes: int | None = None
    location: str | None = None
    # Why the backend failed it, in the backend's words.
    fault: str | None = None

    @property
    def finished(self):
        return self.status in BackupStatus.TERMINAL


def restore_tag(restore_id):
    """The marker a restored target carries to name its restore."""
    return 'dbaas-scheduler-restore:%s' % restore_id


def scratch_name(verify_id):
    """The name of a verification's scratch target: the service's mark.

    Recorded on the verification before the target is made; the service
    deletes no scratch target but those it recorded.
    """
    return 'dbaas_verify_%s' % verify_id.replace('-', '')


@dataclasses.dataclass
class RestoreProgress:
    """Where a restore stands, as a backend reports it."""

    # What the backup is restored into: a Trove instance id, a restore
    # target's name, a SQLite file's name.
    target_id: str
    done: bool = False
    failed: bool = False
    # What the user reads: why it failed, or what it is waiting for.
    reason: str | None = None


class BackendError(exception.DbaasSchedulerException):
    msg_fmt = '%(backend)s backend error: %(reason)s'

    #: Why the call failed, one of ``stats.ERROR_KINDS``, for the metrics;
    #: None lets :func:`error_kind` tell it from the class.  A backend
    #: that knows better (an HTTP 429, a timeout) passes ``kind=``.
    kind = None

    def __init__(self, message=None, kind=None, **kwargs):
        super().__init__(message, **kwargs)
        if kind is not None:
            self.kind = kind


class TransientBackendError(BackendError):
    """Worth trying again later: the backend or the network hiccupped."""


class InstanceBusy(TransientBackendError):
    msg_fmt = ('%(backend)s backend: instance %(instance_id)s is busy '
               '(%(reason)s)')


class PermanentBackendError(BackendError):
    """Trying again will not help; a person has to act."""


class InstanceNotFound(PermanentBackendError):
    msg_fmt = ('%(backend)s backend: instance %(instance_id)s does not exist '
               '(any more): %(reason)s')


class BackendForbidden(PermanentBackendError):
    msg_fmt = ('%(backend)s backend refused access to instance '
               '%(instance_id)s: %(reason)s')


class TrustBroken(PermanentBackendError):
    """The Keystone trust of a policy no longer lets the service act."""

    msg_fmt = ('the Keystone trust %(trust_id)s of this policy no longer '
               'works -- the user who created the policy may have been '
               'removed or lost the delegated roles: %(reason)s')


class ProjectRateLimited(TransientBackendError):
    """The backend rate-limits the project for longer than we wait."""

    kind = 'rate_limited'


class ProjectQuotaExceeded(PermanentBackendError):
    """A quota of the project at the backend is used up."""


#: The backend's own limits on a project: with ``[worker]
#: project_backoff``, signals to slow down for that project only
#: (``db/capacity.py``), rather than errors of one execution.
PROJECT_OVER_LIMIT = (ProjectRateLimited, ProjectQuotaExceeded)


class BackupNotFound(PermanentBackendError):
    msg_fmt = '%(backend)s backend: backup %(backup_id)s does not exist'


def error_kind(error):
    """The kind of a backend call's failure, for the metrics.

    One of ``stats.ERROR_KINDS``: what the backend said (``kind``), else
    what the exception's class means.
    """
    kind = getattr(error, 'kind', None)
    if kind in stats.ERROR_KINDS:
        return kind
    if isinstance(error, (InstanceNotFound, BackupNotFound)):
        return 'not_found'
    if isinstance(error, (BackendForbidden, TrustBroken)):
        return 'auth'
    if isinstance(error, InstanceBusy):
        return 'busy'
    if isinstance(error, TimeoutError):
        return 'timeout'
    if isinstance(error, TransientBackendError):
        return 'unavailable'
    return stats.OTHER


class MeasuredBackend:
    """A backend whose interface calls are timed and their errors counted.

    What :func:`loader.get_backend` hands out: each call of the interface
    (``stats.BACKEND_CALLS``) made from outside is measured once -- a
    backend's own calls to itself (Trove's ``get_backups`` asking
    ``get_backup``) are not, since they do not pass through here.  Every
    other attribute is the backend's.
    """

    def __init__(self, backend):
        self.backend = backend

    def __getattr__(self, name):
        # Only for what is not the proxy's own.
        return getattr(self.backend, name)

    def __repr__(self):
        return '<MeasuredBackend %r>' % (self.backend,)


def _measured(call):
    def measured(self, *args, **kwargs):
        # Looked up on each call: a test may patch the backend's class.
        method = getattr(self.backend, call)
        with stats.BACKEND_CALL_SECONDS.time(call):
            try:
                return method(*args, **kwargs)
            except Exception as error:
                stats.BACKEND_ERRORS.inc(call, error_kind(error))
                raise
    measured.__name__ = measured.__qualname__ = call
    return measured


for _call in stats.BACKEND_CALLS:
    setattr(MeasuredBackend, _call, _measured(_call))
del _call


class BackupBackend(metaclass=abc.ABCMeta):
    """What every backend implements."""

    #: The plugin name, used in messages.
    name = None

    #: Whether the backend acts in the user's project through the Keystone
    #: trust each policy gets (see dbaas_scheduler.keystone).
    needs_trust = False

    #: Whether the backend calls :meth:`report_finished` when a backup
    #: ends: a worker stopping gracefully waits a little for such backups
    #: (``[worker] stop_wait``), where waiting for a poll would not do.
    reports_finish = False

    def __init__(self, conf):
        self.conf = conf

    def report_finished(self, backup_id):
        """Tell the worker that backup ``backup_id`` may have ended now.

        For backends that know when a backup ends; the others leave the
        worker to poll.  It only makes the worker look sooner: what it
        records still comes from :meth:`get_backup`.
        """
        with _LISTENERS_LOCK:
            listeners = list(_LISTENERS)
        for listener in listeners:
            try:
                listener(backup_id)
            except Exception:
                # A hint lost: the next poll sees the backup anyway.
                pass

    def instance_id_error(self, instance_id):
        """Why ``instance_id`` can name no instance here, or None.

        Its form only, asked before anything else when a policy is created
        or moves to another instance or backend: a Trove instance id is a
        UUID, a local instance a name.  The default takes any id (control
        characters are refused before, for every backend).
        """
        return None

    def check_instance(self, policy):
        """Check that ``policy.instance_id`` is an instance this can back up.

        Called when a policy is created, and when its instance or backend
        changes, so that a mistyped instance is refused then rather than
        failing the first backup.  Raises :class:`InstanceNotFound` when
        the instance does not exist (for the policy's project),
        :class:`BackendForbidden` when the project may not see it, and
        ``exception.BackendNotConfigured`` (which the user reads as it is)
        when the backend cannot work at all; any other error is no verdict
        on the instance.  The default checks nothing.
        """

    @classmethod
    def call_timeout(cls, conf):
        """Longest a single call to the backend can block, in seconds.

        None when the backend's calls do not wait on the network (they act
        on this host).  The worker refuses to start unless this is shorter
        than ``[worker] lease_duration``: a call that outlasts the lease
        could make a backup after another worker took the execution over.
        """
        return None

    @abc.abstractmethod
    def create_backup(self, policy, name, description):
        """Ask for a backup of ``policy.instance_id``; return its Backup.

        ``description`` carries :func:`execution_tag`.  Returns once the
        backend has accepted the request; the status is then usually NEW or
        BUILDING.  Raises :class:`InstanceNotFound` if the instance is gone,
        :class:`InstanceBusy` if it cannot be backed up right now.
        """

    @abc.abstractmethod
    def get_backup(self, policy, backup_id):
        """The current state of one backup; :class:`BackupNotFound`."""

    def get_backups(self, policy, backup_ids):
        """The current state of several backups of ``policy``'s project.

        Returns ``{backup id: Backup}``; a backup that does not exist is
        absent.  The worker's poller asks this once per project and pass,
        so that a backend that can list its backups answers with a few
        requests instead of one per backup; this default asks for each.
        """
        found = {}
        for backup_id in backup_ids:
            try:
                found[backup_id] = self.get_backup(policy, backup_id)
            except BackupNotFound:
                pass
        return found

    @abc.abstractmethod
    def find_backup(self, policy, tag):
        """The backup of the instance whose description holds ``tag``.

        None if there is none.
        """

    @abc.abstractmethod
    def list_backups(self, policy):
        """Every backup of ``policy.instance_id``, in any order."""

    @abc.abstractmethod
    def delete_backup(self, policy, backup_id):
        """Delete one backup; a backup that is already gone is no error."""

    # Whether :meth:`list_instances` can list a project's instances.
    lists_instances = False

    def list_instances(self, actor):
        """``{instance_id: name}`` of every instance of a project, or None.

        ``actor`` has the ``project_id`` to list and the credentials to
        list it with (``trust_id``, or ``user_auth``: the auth plugin of
        the user who asks).  None (the default) means this backend cannot
        list a project's instances: the coverage report then knows its
        instances from the policies alone.
        """
        return None

    # Restores.  A backend that cannot restore keeps these defaults.

    def check_restore(self, policy, backup_id, params):
        """Refuse a restore request that cannot be done, before it is made.

        Raises ``exception.Invalid`` with a sentence the user can act on.
        """
        raise exception.Invalid(
            reason='the %s backend cannot restore backups' % self.name)

    def restore_backup(self, policy, backup_id, params, restore_id):
        """Restore ``backup_id``; return a :class:`RestoreProgress`.

        A backend that restores asynchronously returns once its target
        exists (``done`` False); one that restores in the calling thread
        returns when it is over.  ``params`` is what the request asked
        for; the target carries :func:`restore_tag` where it can.
        """
        raise PermanentBackendError(
            backend=self.name, reason='this backend cannot restore backups')

    def find_restore(self, policy, restore_id, params):
        """The target a restore made before its worker died, or None."""
        return None

    def get_restore(self, policy, target_id):
        """Where the restore into ``target_id`` stands (RestoreProgress)."""
        raise PermanentBackendError(
            backend=self.name, reason='this backend cannot restore backups')

    # Verifications.

    #: Whether :meth:`verify_backup` runs a policy's ``verify_check`` (a
    #: read-only SQL query on the restored database).  A backend that
    #: cannot (no credentials on the database it restores into) sets it
    #: False: the policy API then refuses ``verify_check`` on its policies.
    runs_sql_checks = True

    def verify_backup(self, policy, backup_id, check, scratch):
        """Restore into scratch target ``scratch``, check it, delete it.

        Returns None when every check passed, else why not (for the
        user); ``check`` is the policy's ``verify_check`` or None.
        Raises a BackendError when the backup cannot be restored (its
        message is the reason).  A scratch target already there (its
        verifier died) is replaced.
        """
        raise PermanentBackendError(
            backend=self.name, reason='this backend cannot verify backups yet')

    def delete_scratch(self, policy, scratch):
        """Delete scratch target ``scratch`` if it exists (idempotent)."""
