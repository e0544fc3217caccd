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
"""Database access of the worker: claims, leases and outcomes.

Every change an owner makes to an execution is conditional on still owning
it (``owner`` and status RUNNING), so a worker whose lease expired and was
handed to another can no longer record anything.
"""

import datetime
import types

import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums

_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__

_RUNNING = enums.ExecutionStatus.RUNNING


@context_manager.writer
def claim_executions(context, execution_ids, owner, now, lease_seconds):
    """Claim executions for ``owner``; return the ids it got.

    One conditional UPDATE for the whole list: an execution is claimable if
    it is PENDING or DISPATCHED (and its ``next_attempt_at``, if any, has
    come), or RUNNING with an expired lease (its worker died).  Anything
    else -- claimed by another worker, finished, a duplicate message -- is
    not touched and not returned.  The lease expiry written is unique to
    this call and tells which rows it claimed.
    """
    if not execution_ids:
        return []
    lease = now + datetime.timedelta(seconds=lease_seconds)
    claimable = sa.and_(
        sa.or_(_EXECUTION.c.status.in_(enums.ExecutionStatus.WAITING),
               sa.and_(_EXECUTION.c.status == _RUNNING,
                       _EXECUTION.c.lease_expires_at < now)),
        sa.or_(_EXECUTION.c.next_attempt_at.is_(None),
               _EXECUTION.c.next_attempt_at <= now))
    context.session.execute(
        sa.update(_EXECUTION)
        .where(_EXECUTION.c.id.in_(execution_ids), claimable)
        .values(status=_RUNNING, owner=owner, lease_expires_at=lease,
                attempts=_EXECUTION.c.attempts + 1, next_attempt_at=None,
                started_at=sa.func.coalesce(_EXECUTION.c.started_at, now),
                # Why it waited (queued, resumed) no longer holds.
                status_reason=sa.case(
                    (_EXECUTION.c.status_reason.like('queued:%'), None),
                    (_EXECUTION.c.status_reason.like(
                        db_api.RESUMING_REASON + '%'), None),
                    else_=_EXECUTION.c.status_reason)))
    query = sa.select(_EXECUTION.c.id).where(
        _EXECUTION.c.id.in_(execution_ids), _EXECUTION.c.owner == owner,
        _still_running(), _EXECUTION.c.lease_expires_at == lease)
    return list(context.session.execute(query).scalars())


@context_manager.reader
def get_executions_and_policies(context, execution_ids):
    """``[(execution, its policy or None if deleted)]``, in one query.

    Plain namespaces rather than ORM instances: a worker loads every claimed
    execution with its policy, and ORM instance state was a fifth of its
    CPU time at a thousand claims a second.  Nothing here is written back
    through them.
    """
    if not execution_ids:
        return []
    query = (
        sa.select(*_EXECUTION.c, *_POLICY.c)
        .select_from(_EXECUTION.outerjoin(
            _POLICY, _POLICY.c.id == _EXECUTION.c.policy_id))
        .where(_EXECUTION.c.id.in_(execution_ids)))
    split = len(_EXECUTION.c)
    execution_keys = [column.key for column in _EXECUTION.c]
    policy_keys = [column.key for column in _POLICY.c]
    found = []
    for row in context.session.execute(query):
        execution = types.SimpleNamespace(
            **dict(zip(execution_keys, row[:split])))
        policy_values = row[split:]
        policy = (types.SimpleNamespace(**dict(zip(policy_keys,
                                                   policy_values)))
                  if policy_values[0] is not None else None)
        found.append((execution, policy))
    return found


@context_manager.reader
def find_overlaps(context, executions, now):
    """For each execution, another live one of its instance that goes first.

    Goes first: one whose backup was already started at the backend, or,
    among those not started yet, the one with the earlier (scheduled_at,
    id).  Two workers that claim executions of one instance at the same
    moment thus agree on which one runs.  One query for all ``executions``;
    returns ``{execution id: the id of the one it yields to}``.
    """
    if not executions:
        return {}
    instances = {execution.instance_id for execution in executions}
    query = (
        sa.select(_EXECUTION.c.id, _EXECUTION.c.instance_id,
                  _EXECUTION.c.scheduled_at, _EXECUTION.c.backup_id)
        .where(_EXECUTION.c.instance_id.in_(instances),
               _EXECUTION.c.status == _RUNNING,
               _EXECUTION.c.lease_expires_at >= now))
    running = {}
    for row in context.session.execute(query).all():
        running.setdefault(row.instance_id, []).append(row)
    overlaps = {}
    for execution in executions:
        mine = (execution.scheduled_at, execution.id)
        for other in running.get(execution.instance_id, ()):
            if other.id != execution.id and (
                    other.backup_id is not None
                    or (other.scheduled_at, other.id) < mine):
                overlaps[execution.id] = other.id
                break
    return overlaps


def _still_running():
    """``status = 'RUNNING'``, written so that no index can serve it.

    Next to a primary key condition, PostgreSQL's planner may prefer the
    ``(status, lease_expires_at)`` index when its statistics say few rows
    are RUNNING -- as they say right after a burst turned thousands of
    rows RUNNING -- and then walks every RUNNING row for each statement
    (3 ms per recorded backup id with 10,000 in flight, measured by
    tools/benchmark_worker.py).  ``status`` is NOT NULL, so the COALESCE
    changes nothing but the plan: the row is found by its key.
    """
    return sa.func.coalesce(_EXECUTION.c.status, '') == _RUNNING


def _owned(execution_id, owner):
    return (_EXECUTION.c.id == execution_id, _EXECUTION.c.owner == owner,
            _still_running())


@context_manager.writer
def record_backup_id(context, execution_id, owner, backup_id):
    """Record the backend's backup id; False if ``owner`` lost the lease."""
    statement = (sa.update(_EXECUTION)
                 .where(*_owned(execution_id, owner))
                 .values(backup_id=backup_id))
    return context.session.execute(statement).rowcount == 1


@context_manager.writer
def record_backup_ids(context, owner, recorded):
    """Record many ``(execution id, backup id)`` in one transaction.

    Returns the execution ids whose id was recorded (those ``owner`` still
    holds).  One compiled UPDATE run for every pair (found by key, see
    ``_still_running``) costs the worker less than one statement built for
    the whole batch, which SQLAlchemy would compile anew for each size.
    """
    if not recorded:
        return set()
    statement = (sa.update(_EXECUTION)
                 .where(_EXECUTION.c.id == sa.bindparam('execution_id'),
                        _EXECUTION.c.owner == owner, _still_running())
                 .values(backup_id=sa.bindparam('new_backup_id')))
    context.session.execute(statement, [
        {'execution_id': execution_id, 'new_backup_id': backup_id}
        for execution_id, backup_id in recorded])
    wanted = dict(recorded)
    query = sa.select(_EXECUTION.c.id, _EXECUTION.c.backup_id).where(
        _EXECUTION.c.id.in_(list(wanted)), _EXECUTION.c.owner == owner)
    return {row.id for row in context.session.execute(query).all()
            if row.backup_id == wanted[row.id]}


@context_manager.writer
def release_execution(context, execution_id, owner, next_attempt_at,
                      reason):
    """Give an execution back, to be cast again at ``next_attempt_at``."""
    statement = (sa.update(_EXECUTION)
                 .where(*_owned(execution_id, owner))
                 .values(status=enums.ExecutionStatus.PENDING, owner=None,
                         lease_expires_at=None, dispatched_at=None,
                         # It has not really started: [worker]
                         # backup_timeout counts from when it does.
                         started_at=None, next_attempt_at=next_attempt_at,
                         status_reason=reason))
    return context.session.execute(statement).rowcount == 1


@context_manager.writer
def finish_execution(context, execution_id, owner, status, now, reason=None,
                     fault=None):
    """RUNNING -> SUCCEEDED, FAILED or SKIPPED; False if not ``owner``'s.

    A ``reason`` replaces the status reason; without one, what the engine
    noted (e.g. coalesced missed runs) stays.
    """
    values = dict(status=status, finished_at=now, fault=fault,
                  lease_expires_at=None)
    if reason is not None:
        values['status_reason'] = reason
    statement = (sa.update(_EXECUTION)
                 .where(*_owned(execution_id, owner)).values(**values))
    return context.session.execute(statement).rowcount == 1


@context_manager.writer
def record_deleted_backups(context, execution_id, deleted_backups):
    context.session.execute(
        sa.update(_EXECUTION).where(_EXECUTION.c.id == execution_id)
        .values(deleted_backups=deleted_backups))


@context_manager.writer
def renew_leases(context, owner, now, lease_seconds):
    """Extend the leases of ``owner``'s started backups, in one statement.

    An execution whose backup was not started yet is not renewed: the
    thread starting it is done well within a lease, and if it died without
    recording anything the lease must run out so that it is resumed.
    """
    statement = (sa.update(_EXECUTION)
                 .where(_EXECUTION.c.owner == owner,
                        _EXECUTION.c.status == _RUNNING,
                        _EXECUTION.c.backup_id.is_not(None))
                 .values(lease_expires_at=now + datetime.timedelta(
                     seconds=lease_seconds)))
    return context.session.execute(statement).rowcount


@context_manager.writer
def expire_leases(context, owner, now):
    """Let the sweep hand ``owner``'s executions to another worker now."""
    statement = (sa.update(_EXECUTION)
                 .where(_EXECUTION.c.owner == owner,
                        _EXECUTION.c.status == _RUNNING)
                 .values(lease_expires_at=now))
    return context.session.execute(statement).rowcount


@context_manager.reader
def list_backups_in_flight(context, owner):
    """``owner``'s RUNNING executions whose backup was started, with policy.

    Returns ``[(execution, policy or None)]``.
    """
    query = (
        sa.select(models.BackupExecution, models.BackupPolicy)
        .outerjoin(models.BackupPolicy, models.BackupPolicy.id
                   == models.BackupExecution.policy_id)
        .where(models.BackupExecution.owner == owner,
               models.BackupExecution.status == _RUNNING,
               models.BackupExecution.backup_id.is_not(None)))
    return [tuple(row) for row in context.session.execute(query).all()]


@context_manager.reader
def list_policy_backup_ids(context, policy_id):
    """The ids of every backup this policy's executions created."""
    query = sa.select(_EXECUTION.c.backup_id).where(
        _EXECUTION.c.policy_id == policy_id,
        _EXECUTION.c.backup_id.is_not(None))
    return set(context.session.execute(query).scalars())
