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
"""Database access of restores: records, claims and fenced outcomes.

A restore is claimed like an execution (doc/source/contributor/worker.rst,
"Claim"): one conditional UPDATE writes a new fencing token, ``claim_id``,
and every later write of the worker -- the target it made, a lease
renewal, the outcome -- is conditional on that token and on status
RUNNING.  A claim superseded after its lease expired can record nothing.
"""

import datetime

import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums
from dbaas_scheduler import exception

Restore = models.BackupRestore
_RESTORE = models.BackupRestore.__table__
_RUNNING = enums.RestoreStatus.RUNNING
_PENDING = enums.RestoreStatus.PENDING


@context_manager.writer
def create_restore(context, values):
    """Insert one restore; returns it."""
    restore = Restore(**values)
    context.session.add(restore)
    context.session.flush()
    return restore


@context_manager.reader
def get_restore(context, restore_id):
    """One restore, of any project; raises RestoreNotFound."""
    restore = context.session.get(Restore, restore_id)
    if restore is None:
        raise exception.RestoreNotFound(restore_id=restore_id)
    return restore


@context_manager.reader
def list_restores(context, project_id=None, execution_id=None,
                  policy_id=None, status=None, limit=None, marker=None):
    """Restores (of one project), newest first."""
    query = sa.select(Restore)
    for column, value in ((Restore.project_id, project_id),
                          (Restore.execution_id, execution_id),
                          (Restore.policy_id, policy_id),
                          (Restore.status, status)):
        if value is not None:
            query = query.where(column == value)
    columns = (Restore.created_at, Restore.id)
    if marker is not None:
        query = query.where(db_api._after_marker(
            context.session, Restore, marker, columns, True, project_id))
    query = query.order_by(*[column.desc() for column in columns])
    if limit:
        query = query.limit(limit)
    return list(context.session.scalars(query))


@context_manager.reader
def restore_durations(context, policy_id, limit=100):
    """Seconds the policy's last ``limit`` successful restores took.

    Newest first.
    """
    query = (sa.select(Restore.duration)
             .where(Restore.policy_id == policy_id,
                    Restore.status == enums.RestoreStatus.SUCCEEDED,
                    Restore.duration.is_not(None))
             .order_by(Restore.finished_at.desc())
             .limit(limit))
    return list(context.session.scalars(query))


def _fenced(restore_id, claim_id):
    return sa.and_(_RESTORE.c.id == restore_id,
                   _RESTORE.c.claim_id == claim_id,
                   _RESTORE.c.status == _RUNNING)


@db_api.retry_on_deadlock
@context_manager.writer
def claim_restore(context, restore_id, owner, claim_id, now, lease_seconds,
                  **values):
    """Claim a restore for ``owner`` with the new token ``claim_id``.

    Claimable: PENDING, or RUNNING with an expired lease (its worker died
    or froze).  Returns whether this call claimed it; a duplicate message
    or a restore held by a live worker, or finished, is left alone.
    ``values`` are more columns to set with the claim.
    """
    lease = now + datetime.timedelta(seconds=lease_seconds)
    claimable = sa.or_(
        _RESTORE.c.status == _PENDING,
        sa.and_(_RESTORE.c.status == _RUNNING,
                _RESTORE.c.lease_expires_at < now))
    result = context.session.execute(
        sa.update(_RESTORE)
        .where(_RESTORE.c.id == restore_id, claimable)
        .values(status=_RUNNING, owner=owner, claim_id=claim_id,
                lease_expires_at=lease,
                attempts=_RESTORE.c.attempts + 1,
                started_at=sa.func.coalesce(_RESTORE.c.started_at, now),
                **values))
    return result.rowcount == 1


@db_api.retry_on_deadlock
@context_manager.writer
def renew_restore_lease(context, restore_id, claim_id, now, lease_seconds):
    """Move the lease on; False when the claim is gone."""
    lease = now + datetime.timedelta(seconds=lease_seconds)
    result = context.session.execute(
        sa.update(_RESTORE).where(_fenced(restore_id, claim_id))
        .values(lease_expires_at=lease))
    return result.rowcount == 1


@db_api.retry_on_deadlock
@context_manager.writer
def record_restore_target(context, restore_id, claim_id, target_id,
                          reason=None):
    """Record what the backend made; never replaces a recorded target.

    False when the claim is gone or another target is recorded.
    """
    result = context.session.execute(
        sa.update(_RESTORE)
        .where(_fenced(restore_id, claim_id),
               sa.or_(_RESTORE.c.target_id.is_(None),
                      _RESTORE.c.target_id == target_id))
        .values(target_id=target_id, status_reason=reason))
    return result.rowcount == 1


@db_api.retry_on_deadlock
@context_manager.writer
def finish_restore(context, restore_id, claim_id, status, now, reason=None,
                   fault=None):
    """Record the outcome and the duration; False when the claim is gone.

    The duration runs from the first claim (``started_at``) to ``now``.
    """
    row = context.session.execute(
        sa.select(_RESTORE.c.started_at)
        .where(_fenced(restore_id, claim_id))).first()
    if row is None:
        return False
    duration = None
    if row.started_at is not None:
        duration = max(0.0, (now - row.started_at).total_seconds())
    result = context.session.execute(
        sa.update(_RESTORE).where(_fenced(restore_id, claim_id))
        .values(status=status, status_reason=reason, fault=fault,
                finished_at=now, duration=duration, lease_expires_at=None,
                owner=None, region_slot=None, project_slot=None))
    return result.rowcount == 1


@db_api.retry_on_deadlock
@context_manager.writer
def restores_to_cast(context, now, dispatch_timeout, limit=100):
    """Restores to cast again, stamped as dispatched ``now``.

    PENDING ones cast more than ``dispatch_timeout`` seconds ago (or never:
    the cast failed), and RUNNING ones whose lease expired (their worker
    died).  The stamp makes a second sweep leave them alone for another
    ``dispatch_timeout``; a second cast of one that is claimed meanwhile
    claims nothing.
    """
    cutoff = now - datetime.timedelta(seconds=dispatch_timeout)
    due = sa.or_(
        sa.and_(_RESTORE.c.status == _PENDING,
                sa.or_(_RESTORE.c.dispatched_at.is_(None),
                       _RESTORE.c.dispatched_at < cutoff)),
        sa.and_(_RESTORE.c.status == _RUNNING,
                _RESTORE.c.lease_expires_at < now,
                sa.or_(_RESTORE.c.dispatched_at.is_(None),
                       _RESTORE.c.dispatched_at < cutoff)))
    ids = list(context.session.execute(
        sa.select(_RESTORE.c.id).where(due)
        .order_by(_RESTORE.c.created_at).limit(limit)).scalars())
    if ids:
        context.session.execute(
            sa.update(_RESTORE).where(_RESTORE.c.id.in_(ids), due)
            .values(dispatched_at=now))
    return ids
