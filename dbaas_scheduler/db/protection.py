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
"""The protection state on the policy row: outcomes, sweeps, transitions.

The state is kept on ``backup_policy`` and changed where the facts change:
an outcome recorded (:func:`record_outcome`, in the transaction that
finishes the execution), a change of the policy (:func:`refresh`), or the
moment time alone moves it on (:func:`sweep_due`, the engine's sweep over
``protection_check_at``).  No request reads executions to show it.

Each change of state is a compare-and-set on the row's previous state,
made under the row's lock: of several engines and workers, exactly one
records a transition, and only it announces it (a :class:`Transition`
returned once the caller's transaction commits).
"""

import types
import typing

from oslo_utils import timeutils
import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums
from dbaas_scheduler import protection

_POLICY = models.BackupPolicy.__table__
_EXECUTION = models.BackupExecution.__table__
_STATUS = enums.ExecutionStatus

# What a paused policy's reason says, followed by the last fault.
PAUSED_AFTER_FAILURES = 'paused after %d failed backups in a row'

_UNFINISHED = _STATUS.WAITING + (_STATUS.RUNNING,)


class Transition(typing.NamedTuple):
    """A policy's protection state changed (or, with ``paused``, it did).

    The fields of the ``BackupProtectionPayload`` notification.
    """

    id: str
    name: str
    project_id: str
    instance_id: str
    protection: typing.Optional[str]
    previous_protection: typing.Optional[str]
    changed_at: object
    last_success_at: object
    protected_until: object
    effective_rpo: typing.Optional[int]
    consecutive_failures: int
    next_execution_time: object


class Outcome(typing.NamedTuple):
    """What recording an execution's outcome changed on its policy."""

    transition: typing.Optional[Transition]
    # The policy was paused by pause_after_failures, with this reason.
    paused_reason: typing.Optional[str]


def _renewal_slots(session, rows):
    """{policy id: the earliest slot that could still renew it}."""
    ids = [row.id for row in rows]
    if not ids:
        return {}
    # Through the (instance_id, status) index: few unfinished rows.
    earliest = dict(session.execute(
        sa.select(_EXECUTION.c.policy_id,
                  sa.func.min(_EXECUTION.c.scheduled_at))
        .where(_EXECUTION.c.instance_id.in_({row.instance_id
                                             for row in rows}),
               _EXECUTION.c.status.in_(_UNFINISHED),
               _EXECUTION.c.policy_id.in_(ids))
        .group_by(_EXECUTION.c.policy_id)).all())
    slots = {}
    for row in rows:
        candidates = [slot for slot in (earliest.get(row.id),
                                        row.next_execution_time
                                        if row.enabled else None)
                      if slot is not None]
        slots[row.id] = min(candidates) if candidates else None
    return slots


def _evaluate(row, until, now, renewal_slot, failures):
    return protection.evaluate(
        now, until, row.effective_rpo, renewal_slot,
        row.lateness_p95 or 0.0, row.duration_p95 or 0.0,
        failing=failures > 0 or bool(row.verify_failing))


def _write(session, row, values, evaluation, now):
    """CAS the row from its state to ``evaluation``; a Transition or None.

    ``values`` are other columns to set at the same time.  False when the
    row's state was changed by someone else meanwhile (nothing written).
    """
    changed = evaluation.state != row.protection
    values = dict(values, protection=evaluation.state,
                  protection_check_at=evaluation.check_at,
                  # A change of state is not a change the user made.
                  updated_at=_POLICY.c.updated_at)
    if changed:
        values['protection_changed_at'] = now
    previous = (_POLICY.c.protection.is_(None) if row.protection is None
                else _POLICY.c.protection == row.protection)
    matched = session.execute(
        sa.update(_POLICY).where(_POLICY.c.id == row.id, previous)
        .values(**values)).rowcount == 1
    if not matched:
        return False
    if not changed:
        return None
    merged = dict(vars(row))
    merged.update((key, value) for key, value in values.items()
                  if not isinstance(value, sa.Column))
    return Transition(
        id=row.id, name=row.name, project_id=row.project_id,
        instance_id=row.instance_id, protection=evaluation.state,
        previous_protection=row.protection, changed_at=now,
        last_success_at=merged['last_success_at'],
        protected_until=merged['protected_until'],
        effective_rpo=row.effective_rpo,
        consecutive_failures=merged['consecutive_failures'],
        next_execution_time=merged['next_execution_time'])


def _namespace(row):
    return types.SimpleNamespace(**row._mapping)


def _lock(session, policy_id):
    row = session.execute(
        sa.select(_POLICY).where(_POLICY.c.id == policy_id)
        .with_for_update()).first()
    return None if row is None else _namespace(row)


def _success_samples(session, policy_id):
    query = (sa.select(_EXECUTION.c.scheduled_at, _EXECUTION.c.started_at,
                       _EXECUTION.c.finished_at)
             .where(_EXECUTION.c.policy_id == policy_id,
                    _EXECUTION.c.status == _STATUS.SUCCEEDED)
             .order_by(_EXECUTION.c.scheduled_at.desc())
             .limit(protection.SAMPLE_SIZE))
    return session.execute(query).all()


def record_outcome(context, execution_id, status, now, fault=None):
    """Count an execution's outcome on its policy; an :class:`Outcome`.

    Call it in the transaction that finished the execution (the claim's
    fencing makes it once per execution).  A success renews the
    protection and ends the failure streak; a failed outcome
    (:data:`enums.ExecutionStatus.FAILED_OUTCOMES`) lengthens it, and
    pauses the policy when it reaches ``pause_after_failures``; any
    outcome re-evaluates the state.
    """
    session = context.session
    execution = session.execute(
        sa.select(_EXECUTION.c.policy_id, _EXECUTION.c.started_at,
                  _EXECUTION.c.finished_at)
        .where(_EXECUTION.c.id == execution_id)).first()
    if execution is None:
        return Outcome(None, None)
    row = _lock(session, execution.policy_id)
    if row is None:
        # Deleted meanwhile: its executions stay as history.
        return Outcome(None, None)
    values = {}
    failures = row.consecutive_failures or 0
    last_success_at = row.last_success_at
    paused_reason = None
    if status == _STATUS.SUCCEEDED:
        failures = 0
        point = execution.started_at or execution.finished_at or now
        # An older slot finishing late does not move the point back.
        if last_success_at is None or point > last_success_at:
            last_success_at = point
        lateness, duration = protection.lateness_and_duration(
            _success_samples(session, row.id))
        values.update(last_success_at=last_success_at,
                      lateness_p95=lateness, duration_p95=duration)
        row.lateness_p95, row.duration_p95 = lateness, duration
    elif status in _STATUS.FAILED_OUTCOMES:
        failures += 1
        if (row.enabled and row.pause_after_failures
                and failures >= row.pause_after_failures):
            paused_reason = (PAUSED_AFTER_FAILURES % failures
                             + ('; the last one failed: %s' % fault
                                if fault else ''))[:2000]
            values.update(enabled=False, next_execution_time=None,
                          paused_reason=paused_reason)
            row.enabled, row.next_execution_time = False, None
    values['consecutive_failures'] = failures
    until = protection.protected_until(last_success_at, row.created_at,
                                       row.effective_rpo)
    values['protected_until'] = until
    slot = _renewal_slots(session, [row])[row.id]
    transition = _write(session, row, values,
                        _evaluate(row, until, now, slot, failures), now)
    return Outcome(transition or None, paused_reason)


def refresh(context, policy_id, now=None):
    """Re-evaluate a policy after a change of it; a Transition or None.

    Its ``protected_until`` follows its ``effective_rpo`` as it is now.
    Call it in the writer transaction that changed the policy.
    """
    now = now or timeutils.utcnow(True)
    session = context.session
    row = _lock(session, policy_id)
    if row is None:
        return None
    until = protection.protected_until(row.last_success_at, row.created_at,
                                       row.effective_rpo)
    slot = _renewal_slots(session, [row])[row.id]
    failures = row.consecutive_failures or 0
    return _write(session, row, {'protected_until': until},
                  _evaluate(row, until, now, slot, failures), now) or None


def record_verification(context, policy_id, failing, now):
    """Note whether the policy's newest verification failed.

    A failed one holds the policy at_risk (while it has a state, that
    is an RPO) until a verification passes.  Call it in the transaction
    that records the verification; a Transition or None.
    """
    session = context.session
    row = _lock(session, policy_id)
    if row is None:
        return None
    row.verify_failing = failing
    slot = _renewal_slots(session, [row])[row.id]
    return _write(session, row, {'verify_failing': failing},
                  _evaluate(row, row.protected_until, now, slot,
                            row.consecutive_failures or 0), now) or None


@db_api.retry_on_deadlock
@context_manager.writer
def sweep_due(context, now, limit):
    """Move on the policies whose state time alone changes by ``now``.

    Claims up to ``limit`` rows with ``protection_check_at <= now``
    (``SKIP LOCKED``: engines sweeping at once take different rows) and
    returns the :class:`Transition` of each whose state changed.
    """
    session = context.session
    rows = [_namespace(row) for row in session.execute(
        sa.select(_POLICY)
        .where(_POLICY.c.protection_check_at <= now)
        .order_by(_POLICY.c.protection_check_at)
        .limit(limit)
        .with_for_update(skip_locked=True))]
    slots = _renewal_slots(session, rows)
    transitions = []
    for row in rows:
        transition = _write(
            session, row, {},
            _evaluate(row, row.protected_until, now, slots[row.id],
                      row.consecutive_failures or 0), now)
        if transition:
            transitions.append(transition)
    return transitions


def _unset():
    """A policy made before protection existed, never changed since."""
    return (_POLICY.c.effective_rpo.is_(None), _POLICY.c.rpo.is_(None),
            _POLICY.c.protection.is_(None),
            _POLICY.c.protection_changed_at.is_(None),
            _POLICY.c.schedule_type != 'once')


@context_manager.reader
def list_unset(context, limit):
    """Up to ``limit`` policies that have no protection state yet.

    Those made before the upgrade that added it (a ``once`` schedule has
    no default RPO, hence no state: left out).
    """
    return list(context.session.execute(
        sa.select(_POLICY.c.id).where(*_unset()).order_by(_POLICY.c.id)
        .limit(limit)).scalars())


@db_api.retry_on_deadlock
@context_manager.writer
def set_up(context, policy_id, effective_rpo, now):
    """The first protection state of a policy listed by :func:`list_unset`.

    ``effective_rpo`` is the default from its schedule.  Its last success,
    lateness and duration are read from its executions, as outcomes would
    have recorded them; a Transition, or None (nothing changed, or
    another engine or a change of the policy set it up first).
    """
    session = context.session
    row = session.execute(
        sa.select(_POLICY).where(_POLICY.c.id == policy_id, *_unset())
        .with_for_update()).first()
    if row is None:
        return None
    row = _namespace(row)
    samples = _success_samples(session, row.id)
    points = [started_at or finished_at
              for _, started_at, finished_at in samples
              if started_at or finished_at]
    last_success_at = max(points, default=None)
    lateness, duration = protection.lateness_and_duration(samples)
    row.effective_rpo = effective_rpo
    row.lateness_p95, row.duration_p95 = lateness, duration
    until = protection.protected_until(last_success_at, row.created_at,
                                       effective_rpo)
    values = dict(effective_rpo=effective_rpo,
                  last_success_at=last_success_at, lateness_p95=lateness,
                  duration_p95=duration, protected_until=until)
    if until is None:
        # Nothing to evaluate, but never listed again.
        values['protection_changed_at'] = now
    slot = _renewal_slots(session, [row])[row.id]
    return _write(session, row, values,
                  _evaluate(row, until, now, slot,
                            row.consecutive_failures or 0), now) or None
