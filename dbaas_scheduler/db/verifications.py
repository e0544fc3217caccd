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
"""Database access of verifications: restores of kind 'verify'.

A verification is a ``backup_restore`` row of kind ``verify``, claimed,
leased and fenced like any restore (db/restores.py).  Three things are
its own, each enforced by a unique index rather than by a count read
first:

* exactly one verification per verification slot: ``verify_slot`` holds
  the execution id;
* at most ``[verify] max_concurrent`` running in the region and
  ``max_concurrent_per_project`` in one project: the claim takes a free
  ``region_slot`` and ``project_slot`` number below the limits; two
  claims taking the same number collide on the index, and the loser
  waits for the next cast;
* its outcome is written on the execution and the policy in the
  transaction that finishes it, under its claim.
"""

import datetime
import types

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler.db import protection as db_protection
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler import enums

LOG = logging.getLogger(__name__)

_RESTORE = models.BackupRestore.__table__
_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__
_VERIFY = enums.RestoreKind.VERIFY
_SUCCEEDED = enums.ExecutionStatus.SUCCEEDED
# Retention (or the user) is deleting, or has deleted, the backup.
_DELETED = (enums.BackupState.DELETING, enums.BackupState.DELETED)


def _due_candidates(now):
    """One statement: each verifying policy due now, with its candidate.

    A row per policy with ``verify_every`` set, and per policy whose
    ``verify_schedule`` slot (``verify_next_at``) has come; with, outer
    joined, the newest successful backup finished after the backup of
    the policy's newest verification (``n``: how many such backups; the
    candidate is the newest of them still retained, ranked first).
    """
    verifying = sa.or_(_POLICY.c.verify_every.is_not(None),
                       _POLICY.c.verify_schedule.is_not(None))
    last = (sa.select(_RESTORE.c.policy_id,
                      sa.func.max(_EXECUTION.c.finished_at).label('since'))
            .select_from(_RESTORE.join(
                _EXECUTION, _EXECUTION.c.id == _RESTORE.c.verify_slot))
            .where(_RESTORE.c.kind == _VERIFY)
            .group_by(_RESTORE.c.policy_id).subquery('last'))
    retained = sa.case((_EXECUTION.c.backup_state.is_(None), 0), else_=1)
    ranked_columns = (
        _EXECUTION.c.id, _EXECUTION.c.policy_id, _EXECUTION.c.instance_id,
        _EXECUTION.c.backup_id, _EXECUTION.c.backup_state,
        sa.func.count().over(
            partition_by=_EXECUTION.c.policy_id).label('n'),
        sa.func.row_number().over(
            partition_by=_EXECUTION.c.policy_id,
            order_by=(retained, _EXECUTION.c.finished_at.desc(),
                      _EXECUTION.c.id.desc())).label('rank'))
    executions = _EXECUTION.join(
        _POLICY, _POLICY.c.id == _EXECUTION.c.policy_id).outerjoin(
        last, last.c.policy_id == _EXECUTION.c.policy_id)
    ranked = (
        sa.select(*ranked_columns).select_from(executions)
        .where(verifying,
               _EXECUTION.c.status == _SUCCEEDED,
               _EXECUTION.c.backup_id.is_not(None),
               sa.or_(last.c.since.is_(None),
                      _EXECUTION.c.finished_at > last.c.since))
        .subquery('ranked'))
    return (sa.select(
        _POLICY.c.id.label('policy_id'), _POLICY.c.project_id,
        _POLICY.c.backend, _POLICY.c.verify_every,
        _POLICY.c.verify_schedule, _POLICY.c.timezone,
        _POLICY.c.verify_next_at, ranked.c.id, ranked.c.instance_id,
        ranked.c.backup_id, ranked.c.backup_state, ranked.c.n)
        .select_from(_POLICY.outerjoin(ranked, sa.and_(
            ranked.c.policy_id == _POLICY.c.id, ranked.c.rank == 1)))
        .where(sa.or_(
            sa.and_(_POLICY.c.verify_every.is_not(None),
                    ranked.c.n >= _POLICY.c.verify_every,
                    ranked.c.backup_state.is_(None)),
            sa.and_(_POLICY.c.verify_schedule.is_not(None),
                    _POLICY.c.verify_next_at <= now)))
        .order_by(_POLICY.c.id))


def _advance_slot(session, row, now, next_slot):
    """Move the policy's verify_next_at past ``now``; whether this did.

    Compare-and-set on the slot read: of two engines recording the same
    slot, one advances it, the other changes nothing and records nothing.
    """
    following = next_slot(row.verify_schedule, row.timezone, row.policy_id,
                          now)
    return session.execute(
        sa.update(_POLICY)
        .where(_POLICY.c.id == row.policy_id,
               _POLICY.c.verify_next_at == row.verify_next_at)
        .values(verify_next_at=following)).rowcount == 1


@db_api.retry_on_deadlock
@context_manager.writer
def create_due_verifications(context, now, next_slot, limit=100):
    """Record the verifications now due; returns the new rows' ids.

    A policy with ``verify_every`` N is due once N backups succeeded
    since the backup of its newest verification (or since it began);
    a policy with ``verify_schedule`` is due when its slot
    (``verify_next_at``) has come.  Either verifies its newest retained
    successful backup newer than that of its newest verification (a
    slot without one passes, verifying nothing).  One read for every
    policy; then, per verification, the slot's compare-and-set and the
    insert.  A second engine recording the same slot loses the
    compare-and-set, or collides on ``verify_slot`` or
    ``(policy_id, verify_scheduled_at)``, and records nothing.

    ``next_slot(expression, timezone, policy_id, after)``: the slot of a
    ``verify_schedule`` after ``after`` (None: none), from the schedule
    maths (:func:`dbaas_scheduler.schedule.next_verify_slot`).
    """
    session = context.session
    created = []
    for row in session.execute(_due_candidates(now)).all():
        if len(created) >= limit:
            break
        slot_at = None
        if row.verify_schedule is not None:
            slot_at = row.verify_next_at
            if not _advance_slot(session, row, now, next_slot):
                continue
        if row.id is None or row.backup_state is not None:
            LOG.info('Verification slot %(slot)s of policy %(policy)s: '
                     'no backup newer than the last one verified.',
                     {'slot': slot_at, 'policy': row.policy_id})
            continue
        values = dict(
            kind=_VERIFY, verify_slot=row.id, execution_id=row.id,
            verify_scheduled_at=slot_at,
            policy_id=row.policy_id, project_id=row.project_id,
            instance_id=row.instance_id, backend=row.backend,
            backup_id=row.backup_id, params={},
            status=enums.RestoreStatus.PENDING, attempts=0, created_at=now)
        try:
            with session.begin_nested():
                restore = models.BackupRestore(**values)
                session.add(restore)
                session.flush()
        except db_exc.DBDuplicateEntry:
            continue
        created.append(restore.id)
    return created


def _free(used, limit):
    for number in range(limit):
        if number not in used:
            return number
    return None


@db_api.retry_on_deadlock
@context_manager.writer
def claim_verification(context, restore_id, owner, claim_id, now,
                       lease_seconds, max_concurrent, max_per_project):
    """Claim a verification, with a concurrency slot; whether it did.

    A verification resumed after its worker died keeps the slots it
    holds.  When every slot is taken (or another claim took the same
    one at the same moment) nothing is claimed: the verification stays
    PENDING and the engine's sweep casts it again later.
    """
    session = context.session
    row = session.execute(
        sa.select(_RESTORE.c.project_id, _RESTORE.c.region_slot,
                  _RESTORE.c.project_slot)
        .where(_RESTORE.c.id == restore_id)).first()
    if row is None:
        return False
    slots = {}
    if row.region_slot is None:
        used = set(session.execute(
            sa.select(_RESTORE.c.region_slot)
            .where(_RESTORE.c.region_slot.is_not(None))).scalars())
        slots['region_slot'] = _free(used, max_concurrent)
        used = set(session.execute(
            sa.select(_RESTORE.c.project_slot)
            .where(_RESTORE.c.project_id == row.project_id,
                   _RESTORE.c.project_slot.is_not(None))).scalars())
        slots['project_slot'] = _free(used, min(max_per_project,
                                                max_concurrent))
        if None in slots.values():
            return False
    try:
        with session.begin_nested():
            return db_restores.claim_restore(
                context, restore_id, owner, claim_id, now, lease_seconds,
                **slots)
    except db_exc.DBDuplicateEntry:
        return False


@db_api.retry_on_deadlock
@context_manager.writer
def finish_verification(context, restore_id, claim_id, now, reason,
                        scratch_deleted, backup_gone=False):
    """Record a verification's outcome, fenced by its claim.

    ``reason`` None: it passed.  Writes the restore, the execution's
    ``verified_at``, result, reason and duration, and the policy's
    ``verify_failing`` (a failure holds the policy at_risk), in one
    transaction.  Returns ``(recorded, protection Transition or None)``.

    A verification that did not pass while its backup was deleted
    meanwhile -- the backend no longer has it (``backup_gone``), or
    retention (or the user's delete) has it ``deleting`` or ``deleted``,
    or its execution is gone -- learnt nothing about the backup: it ends
    CANCELLED with the reason, and neither the execution's result nor the
    policy's state changes.
    """
    session = context.session
    passed = reason is None
    status = (enums.RestoreStatus.SUCCEEDED if passed
              else enums.RestoreStatus.FAILED)
    if not passed:
        found = session.execute(
            sa.select(_RESTORE.c.backup_id, _EXECUTION.c.backup_state,
                      _EXECUTION.c.id)
            .select_from(_RESTORE.outerjoin(
                _EXECUTION, _EXECUTION.c.id == _RESTORE.c.execution_id))
            .where(_RESTORE.c.id == restore_id)).first()
        if found is not None and (
                backup_gone or found.id is None
                or found.backup_state in _DELETED):
            status = enums.RestoreStatus.CANCELLED
            reason = ('cancelled: backup %s was deleted (by retention or '
                      'by its owner) while it was being verified, so '
                      'nothing was learnt about it (%s)'
                      % (found.backup_id, reason))
    if not db_restores.finish_restore(context, restore_id, claim_id, status,
                                      now, reason=reason):
        return False, None
    restore = session.execute(
        sa.select(_RESTORE).where(_RESTORE.c.id == restore_id)).first()
    if scratch_deleted:
        session.execute(sa.update(_RESTORE)
                        .where(_RESTORE.c.id == restore_id)
                        .values(scratch_deleted_at=now))
    if status == enums.RestoreStatus.CANCELLED:
        return True, None
    session.execute(
        sa.update(_EXECUTION).where(_EXECUTION.c.id == restore.execution_id)
        .values(verified_at=now,
                verify_result=(enums.VerifyResult.PASSED if passed
                               else enums.VerifyResult.FAILED),
                verify_reason=reason, verify_duration=restore.duration))
    transition = db_protection.record_verification(
        context, restore.policy_id, not passed, now)
    return True, transition


@context_manager.reader
def scratch_to_delete(context, limit=100):
    """Finished verifications whose scratch target may still exist."""
    return [types.SimpleNamespace(**row._mapping) for row in
            context.session.execute(
                sa.select(_RESTORE.c.id, _RESTORE.c.policy_id,
                          _RESTORE.c.backend, _RESTORE.c.target_id)
                .where(_RESTORE.c.kind == _VERIFY,
                       _RESTORE.c.status.in_(enums.RestoreStatus.FINISHED),
                       _RESTORE.c.target_id.is_not(None),
                       _RESTORE.c.scratch_deleted_at.is_(None))
                .order_by(_RESTORE.c.finished_at).limit(limit))]


@db_api.retry_on_deadlock
@context_manager.writer
def record_scratch_deleted(context, restore_id, now):
    context.session.execute(
        sa.update(_RESTORE).where(_RESTORE.c.id == restore_id,
                                  _RESTORE.c.scratch_deleted_at.is_(None))
        .values(scratch_deleted_at=now))


@context_manager.reader
def newest_verified(context, policy_id):
    """The newest execution of the policy whose verification passed."""
    return context.session.execute(
        sa.select(_EXECUTION.c.id, _EXECUTION.c.backup_id,
                  _EXECUTION.c.verified_at)
        .where(_EXECUTION.c.policy_id == policy_id,
               _EXECUTION.c.verify_result == enums.VerifyResult.PASSED)
        .order_by(_EXECUTION.c.finished_at.desc()).limit(1)).first()


@context_manager.reader
def oldest_newest_verified_age(context, now):
    """Seconds since the newest passed verification, at worst over policies.

    Of the policies with verification on; None when there are none, and a
    policy never verified counts from its creation.
    """
    # Per policy with verification on, its own executions (the index on
    # (policy_id, scheduled_at)): the executions of the other policies,
    # most of the history, are not read.
    newest = (sa.select(sa.func.max(_EXECUTION.c.verified_at))
              .where(_EXECUTION.c.policy_id == _POLICY.c.id,
                     _EXECUTION.c.verify_result
                     == enums.VerifyResult.PASSED)
              .scalar_subquery())
    oldest = context.session.execute(
        sa.select(sa.func.min(sa.func.coalesce(newest,
                                               _POLICY.c.created_at)))
        .where(sa.or_(_POLICY.c.verify_every.is_not(None),
                      _POLICY.c.verify_schedule.is_not(None)))).scalar()
    if oldest is None:
        return None
    if oldest.tzinfo is None:
        oldest = oldest.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, (now - oldest).total_seconds())
