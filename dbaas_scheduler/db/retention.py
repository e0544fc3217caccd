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
"""Database access of retention: what it reasons over about an instance.

Every backup this service made of the instance, for which policy, and the
rules of every policy of the instance (``worker/retention.py``); and the
state of each backup, which every writer changes by compare-and-set:

* a hold (:func:`hold_backup`) sets ``held_at`` only on a backup that is
  not being deleted, and in the same transaction cancels every pending
  expiry of the instance (a backup may be built on any older one, and
  the decision that made them expire did not know of the hold);
* a deleter claims a backup (:func:`claim_deletion`) only while it is
  ``expiring``, past its ``backup_delete_after`` and not held.

Both are single-row conditional updates on the row of the backup to be
deleted, so whichever commits first wins and the other sees it: a hold
that lands between retention's decision and its delete leaves the
backup (and everything older on the instance) ``NULL`` again, and the
claim updates no row.  A claim that lands first makes the hold answer
409 (the backup, or one it may be built on, is ``deleting``).
"""

import datetime
import types

import sqlalchemy as sa

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums
from dbaas_scheduler import exception

State = enums.BackupState
# A claim older than this was left by a deleter that died: retried.
STALE_CLAIM = datetime.timedelta(minutes=10)

_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__


@context_manager.reader
def list_instance_backup_owners(context, project_id, instance_id):
    """``{backup id: policy id}`` of every backup made for the instance.

    Any policy's of the project, a deleted one's too: retention must know
    which backups of the instance this service created, and for whom.
    Another project's policy naming the same instance id is another
    tenant's business: its backups count as not this service's (kept).
    """
    query = sa.select(_EXECUTION.c.backup_id, _EXECUTION.c.policy_id).where(
        _EXECUTION.c.project_id == project_id,
        _EXECUTION.c.instance_id == instance_id,
        _EXECUTION.c.backup_id.is_not(None))
    return {row.backup_id: row.policy_id
            for row in context.session.execute(query)}


@context_manager.reader
def list_instance_policies(context, backend, project_id, instance_id):
    """The policies of an instance, with their retention.

    An instance is ``(backend, project_id, instance_id)``.
    """
    columns = [_POLICY.c.id, _POLICY.c.timezone, _POLICY.c.keep_last,
               _POLICY.c.keep_daily, _POLICY.c.keep_weekly,
               _POLICY.c.keep_monthly, _POLICY.c.max_age_days,
               _POLICY.c.min_keep, _POLICY.c.verify_every,
               _POLICY.c.verify_schedule]
    query = sa.select(*columns).where(_POLICY.c.backend == backend,
                                      _POLICY.c.project_id == project_id,
                                      _POLICY.c.instance_id == instance_id)
    return [types.SimpleNamespace(**row._asdict())
            for row in context.session.execute(query)]


@context_manager.reader
def list_instance_backups(context, project_id, instance_id):
    """``{backup id: record}`` of every backup made for the instance.

    A record has the ``execution_id``, ``policy_id``, ``held_at``,
    ``backup_state``, ``backup_delete_after``, ``finished_at`` and
    ``verify_result`` of the execution that made it (like
    :func:`list_instance_backup_owners`, deleted policies' too).
    """
    query = sa.select(
        _EXECUTION.c.backup_id, _EXECUTION.c.id.label('execution_id'),
        _EXECUTION.c.policy_id, _EXECUTION.c.held_at,
        _EXECUTION.c.backup_state, _EXECUTION.c.backup_delete_after,
        _EXECUTION.c.finished_at, _EXECUTION.c.verify_result).where(
        _EXECUTION.c.project_id == project_id,
        _EXECUTION.c.instance_id == instance_id,
        _EXECUTION.c.backup_id.is_not(None))
    return {row.backup_id: types.SimpleNamespace(**row._asdict())
            for row in context.session.execute(query)}


def _get(context, execution_id, lock=False):
    query = sa.select(models.BackupExecution).where(
        models.BackupExecution.id == execution_id)
    if lock:
        query = query.with_for_update()
    found = context.session.scalars(query).first()
    if found is None:
        raise exception.ExecutionNotFound(execution_id=execution_id)
    return found


@context_manager.writer
def hold_backup(context, execution_id, user_id, now):
    """Hold the backup of an execution; returns the execution.

    Holding a held backup changes nothing.  Raises ExecutionHasNoBackup
    (no backup), BackupDeleted (it is being deleted or is gone) or
    BackupChainDeleting (an older backup of its instance, which it may be
    built on, is being deleted: the backend would delete it with it).
    """
    execution = _get(context, execution_id, lock=True)
    if execution.backup_id is None:
        raise exception.ExecutionHasNoBackup(execution_id=execution_id,
                                             status=execution.status)
    table = _EXECUTION
    held = context.session.execute(
        sa.update(table).where(
            table.c.id == execution_id,
            sa.or_(table.c.backup_state.is_(None),
                   table.c.backup_state == State.EXPIRING))
        .values(held_at=sa.func.coalesce(table.c.held_at, now),
                held_by=sa.func.coalesce(table.c.held_by, user_id),
                backup_state=None, backup_delete_after=None)).rowcount
    if not held:
        context.session.refresh(execution)
        raise exception.BackupDeleted(
            execution_id=execution_id, backup_id=execution.backup_id,
            state=execution.backup_state)
    # The decision that made the instance's other backups expire did not
    # know of this hold: they wait for the next one.  The rows a deleter
    # claimed meanwhile are not changed, and refuse the hold below.
    context.session.execute(
        sa.update(table).where(
            table.c.project_id == execution.project_id,
            table.c.instance_id == execution.instance_id,
            table.c.backup_state == State.EXPIRING)
        .values(backup_state=None, backup_delete_after=None))
    deleting = context.session.execute(
        sa.select(table.c.backup_id).where(
            table.c.project_id == execution.project_id,
            table.c.instance_id == execution.instance_id,
            table.c.backup_state == State.DELETING,
            table.c.id != execution_id).with_for_update()).first()
    if deleting is not None:
        raise exception.BackupChainDeleting(
            execution_id=execution_id, backup_id=execution.backup_id,
            deleting=deleting.backup_id)
    context.session.refresh(execution)
    return execution


@context_manager.writer
def release_backup(context, execution_id):
    """Release the hold on an execution's backup; returns the execution.

    Releasing a backup that is not held changes nothing.  Retention
    decides about it again at its next pass (with the grace).
    """
    execution = _get(context, execution_id, lock=True)
    context.session.execute(
        sa.update(_EXECUTION).where(_EXECUTION.c.id == execution_id)
        .values(held_at=None, held_by=None))
    context.session.refresh(execution)
    return execution


@context_manager.writer
def mark_expiring(context, policy_id, backup_ids, delete_after):
    """Mark the policy's ``backup_ids`` expiring, unless held or decided.

    Returns the ids marked now.
    """
    if not backup_ids:
        return []
    table = _EXECUTION
    where = (table.c.policy_id == policy_id,
             table.c.backup_id.in_(list(backup_ids)),
             table.c.backup_state.is_(None), table.c.held_at.is_(None))
    marked = [row.backup_id for row in context.session.execute(
        sa.select(table.c.backup_id).where(*where).with_for_update())]
    if marked:
        context.session.execute(
            sa.update(table).where(*where, table.c.backup_id.in_(marked))
            .values(backup_state=State.EXPIRING,
                    backup_delete_after=delete_after))
    return marked


@context_manager.writer
def cancel_expiring(context, policy_id, backup_ids):
    """Retention keeps these after all: no longer expiring."""
    if not backup_ids:
        return 0
    table = _EXECUTION
    return context.session.execute(
        sa.update(table).where(
            table.c.policy_id == policy_id,
            table.c.backup_id.in_(list(backup_ids)),
            table.c.backup_state == State.EXPIRING)
        .values(backup_state=None, backup_delete_after=None)).rowcount


@context_manager.writer
def claim_deletion(context, policy_id, backup_id, now):
    """Compare-and-set: may this caller delete ``backup_id`` now?

    True for exactly one caller: the backup was ``expiring``, due and not
    held, and is ``deleting`` from now on (nobody can hold it any more);
    or it was claimed so long ago (``STALE_CLAIM``) that its deleter
    died, and the delete is tried again.
    """
    table = _EXECUTION
    return bool(context.session.execute(
        sa.update(table).where(
            table.c.policy_id == policy_id,
            table.c.backup_id == backup_id, *_due(now))
        .values(backup_state=State.DELETING,
                backup_delete_after=now)).rowcount)


def _due(now):
    """Due for deletion: expiring past its grace, or a stale claim."""
    table = _EXECUTION
    return (table.c.held_at.is_(None),
            sa.or_(sa.and_(table.c.backup_state == State.EXPIRING,
                           table.c.backup_delete_after <= now),
                   sa.and_(table.c.backup_state == State.DELETING,
                           table.c.backup_delete_after
                           <= now - STALE_CLAIM)))


@context_manager.writer
def due_policies(context, now, limit):
    """Ids of up to ``limit`` policies with backups due for deletion.

    Due: ``expiring`` with its grace over, or claimed by a deleter that
    died (:func:`claim_deletion`), and not held; found through the
    ``(backup_state, backup_delete_after)`` index.  The expiry of a
    backup whose policy was deleted is cancelled here (retention keeps
    the backups of a deleted policy, and has no credentials to delete
    them with).
    """
    table = _EXECUTION
    rows = context.session.execute(
        sa.select(table.c.policy_id, _POLICY.c.id).distinct()
        .select_from(table.outerjoin(
            _POLICY, _POLICY.c.id == table.c.policy_id))
        .where(*_due(now)).limit(limit)).all()
    gone = [row[0] for row in rows if row[1] is None]
    if gone:
        context.session.execute(
            sa.update(table).where(
                table.c.policy_id.in_(gone),
                table.c.backup_state == State.EXPIRING)
            .values(backup_state=None, backup_delete_after=None))
    return [row[0] for row in rows if row[1] is not None]


@context_manager.writer
def record_deletion(context, project_id, instance_id, backup_ids):
    """The backend deleted these (a claimed one and its cascade).

    Returns the ids that were not recorded deleted before: each deletion
    is recorded once.
    """
    table = _EXECUTION
    where = (table.c.project_id == project_id,
             table.c.instance_id == instance_id,
             table.c.backup_id.in_(list(backup_ids)),
             sa.or_(table.c.backup_state.is_(None),
                    table.c.backup_state != State.DELETED))
    recorded = [row.backup_id for row in context.session.execute(
        sa.select(table.c.backup_id).where(*where).with_for_update())]
    if recorded:
        context.session.execute(
            sa.update(table).where(*where, table.c.backup_id.in_(recorded))
            .values(backup_state=State.DELETED, backup_delete_after=None))
    return recorded


@context_manager.writer
def undo_claim(context, policy_id, backup_id):
    """The backend did not delete a claimed backup: nothing decided."""
    table = _EXECUTION
    return context.session.execute(
        sa.update(table).where(
            table.c.policy_id == policy_id,
            table.c.backup_id == backup_id,
            table.c.backup_state == State.DELETING)
        .values(backup_state=None, backup_delete_after=None)).rowcount
