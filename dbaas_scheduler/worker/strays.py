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
"""Extra backups of an execution, and the worker's compensation for them.

A backend without idempotency keys (Trove) cannot be fenced perfectly: a
create whose answer was lost may still land, and a paused worker can wake
up and create a backup after its claim was taken over.  Such a backup
carries the execution's tag but is not its recorded backup: a *stray*.
:func:`stray_reason` says when a tagged backup is one (and so may be
deleted); :func:`delete_stray` deletes it and records the deletion on the
execution.  :class:`Compensator` is what a worker does when it made a
backup under a claim it has lost: it deletes that backup itself once the
backend lets it (a running backup cannot be deleted), checking on every
poll pass.  Reconciliation (``worker/reconciler.py``) finds the strays
nobody compensated.
"""

import datetime
import threading
import typing

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import enums
from dbaas_scheduler import stats
from dbaas_scheduler.worker import backend_calls

LOG = logging.getLogger(__name__)

# Why a backup was deleted, as recorded in ``deleted_backups``.
DUPLICATE = 'duplicate'   # the execution recorded another backup
ORPHAN = 'orphan'         # the execution ended without recording one


def stray_reason(execution, backup_id):
    """Why a backup tagged with ``execution``'s id is one too many.

    DUPLICATE or ORPHAN if backup ``backup_id`` may be deleted; None if it
    is, or may still become, the execution's backup.
    A recorded backup id never changes, so any other tagged backup is a
    duplicate.  Without one, a tagged backup is an orphan once the
    execution has finished; while it has not, the worker holding it may
    still find the backup by its tag and record it.
    """
    if execution.backup_id == backup_id:
        return None
    if execution.backup_id is not None:
        return DUPLICATE
    if execution.status in enums.ExecutionStatus.FINISHED:
        return ORPHAN
    return None


def deleted_entry(backup, reason, now):
    """The ``deleted_backups`` entry of a stray deleted at ``now``."""
    return {'id': backup.id,
            'created_at': (backup.created_at.isoformat()
                           if backup.created_at else None),
            'reason': reason, 'deleted_at': now.isoformat()}


def delete_stray(conf, context, backend, policy, execution_id, backup,
                 reason, by, listed):
    """Delete a finished stray and record it on its execution.

    ``listed`` are the instance's backups: a stray that another backup
    builds on (Trove bases an incremental backup on the instance's latest
    one, whoever made it) is not deleted, since its children would go with
    it; False then.  ``by`` (``compensation``, ``reconciliation``) is for
    the log.
    """
    children = [other.id for other in listed if other.parent_id == backup.id]
    if children:
        LOG.warning('Execution %s: backup %s is one too many (%s), but '
                    'backups %s build on it; kept while they exist',
                    execution_id, backup.id, reason, ', '.join(children))
        return False
    backend_calls.call(conf, 'Execution %s' % execution_id,
                       backend.delete_backup, policy, backup.id)
    stats.STRAY_DELETIONS.inc(by)
    db_worker.record_deleted_backups(context, execution_id, [
        deleted_entry(backup, reason, timeutils.utcnow(True))])
    LOG.warning('Execution %s: deleted backup %s of instance %s, made for '
                'it once too often (%s; found by %s)', execution_id,
                backup.id, backup.instance_id or policy.instance_id, reason,
                by)
    return True


class _Stray(typing.NamedTuple):
    execution_id: str
    backup_id: str
    policy: object
    since: datetime.datetime


class Compensator:
    """Backups this worker made under claims it lost, until deleted."""

    def __init__(self, conf):
        self.conf = conf
        self._strays = {}
        self._lock = threading.Lock()

    def pending(self):
        with self._lock:
            return len(self._strays)

    def claim_lost(self, context, execution, policy, backup):
        """Backup ``backup`` was made, but the claim was gone on recording.

        The execution keeps what the claim's new holder records: this
        backup if that worker found it by its tag, or its own.
        """
        now = timeutils.utcnow(True)
        LOG.warning('Execution %s: lost its claim before backup %s could be '
                    'recorded; it is deleted unless it becomes the '
                    'execution\'s backup', execution.id, backup.id)
        try:
            # If this worker stops before it could delete the backup,
            # reconciliation finds it.
            db_reconciliation.schedule(
                context, db_reconciliation.InstanceToReconcile(
                    execution.instance_id, policy.id, now,
                    now + datetime.timedelta(
                        seconds=self.conf.worker.reconcile_window)))
        except Exception:
            LOG.exception('Execution %s: could not queue instance %s for '
                          'reconciliation', execution.id,
                          execution.instance_id)
        stray = _Stray(execution.id, backup.id, policy, now)
        with self._lock:
            self._strays[backup.id] = stray
        self._settle(context, stray)

    def run_pass(self, context):
        """Try again each stray not deleted yet; returns how many remain."""
        with self._lock:
            strays = list(self._strays.values())
        for stray in strays:
            self._settle(context, stray)
        return self.pending()

    def _forget(self, stray):
        with self._lock:
            self._strays.pop(stray.backup_id, None)

    def _settle(self, context, stray):
        try:
            execution = db_api.get_execution(context, stray.execution_id)
            reason = stray_reason(execution, stray.backup_id)
            if reason is None:
                self._undecided(execution, stray)
                return
            backend = loader.get_backend(self.conf, stray.policy.backend)
            backup = backend.get_backup(stray.policy, stray.backup_id)
            if not backup.finished:
                return
            listed = backend_calls.call(
                self.conf, 'Execution %s' % stray.execution_id,
                backend.list_backups, stray.policy)
            if not delete_stray(self.conf, context, backend, stray.policy,
                                stray.execution_id, backup, reason,
                                'compensation', listed):
                return
        except backends.BackupNotFound:
            LOG.info('Execution %s: backup %s is gone already',
                     stray.execution_id, stray.backup_id)
        except Exception as exc:
            LOG.warning('Execution %s: could not delete backup %s yet, next '
                        'poll pass: %s', stray.execution_id, stray.backup_id,
                        exc)
            return
        self._forget(stray)

    def _undecided(self, execution, stray):
        if execution.backup_id == stray.backup_id:
            LOG.info('Execution %s: backup %s became its backup (the worker '
                     'that resumed it found it); kept', execution.id,
                     stray.backup_id)
            self._forget(stray)
        elif timeutils.utcnow(True) - stray.since > datetime.timedelta(
                seconds=self.conf.worker.reconcile_window):
            # Still undecided after so long: reconciliation decides once
            # the execution ends.
            self._forget(stray)
