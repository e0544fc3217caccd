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
"""Database access of the metrics endpoint: a few bounded aggregates.

Each function is one aggregate query whose result has a bounded number of
rows, whatever the size of the tables: counts grouped by a status, a
reason class or a binary, and sums of ``CASE`` expressions for the
buckets of a histogram.  The queries on live state (due policies, waiting
and running executions, due reconciliations, services) follow an index;
those on recent history read the executions of the window.  The live
services' own metrics are read as the JSON their heartbeats wrote.
"""

import datetime
import typing

import sqlalchemy as sa
from sqlalchemy.ext import compiler
from sqlalchemy.sql import expression

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums

_POLICY = models.BackupPolicy.__table__
_EXECUTION = models.BackupExecution.__table__
_RECONCILIATION = models.BackupReconciliation.__table__
_SERVICE = models.Service.__table__

# What the engine writes as the reason of an execution whose worker lost
# its lease (db.scheduling.RESUMING_REASON, which db may not import from the
# engine: it is the same layer, but kept here as text the SQL matches).
_LEASE_EXPIRED = 'worker lease expired; resuming'

# The reason class of a finished execution: a bounded label, from its
# status_reason and fault, which are free text.  First match wins.
REASON_CLASSES = (
    ('missed', _EXECUTION.c.status_reason == 'missed'),
    ('coalesced', _EXECUTION.c.status_reason.like('coalesced %')),
    ('lease_expired', _EXECUTION.c.status_reason == _LEASE_EXPIRED),
    ('overlap', _EXECUTION.c.status_reason.like('overlap: %')),
    ('policy_deleted', sa.or_(
        _EXECUTION.c.status_reason.like('the policy was deleted %'),
        _EXECUTION.c.fault.like('the policy was deleted %'))),
    ('timeout', _EXECUTION.c.fault.like('timed out: %')),
    ('backup_failed', _EXECUTION.c.fault.like('the % backend reports %')),
    ('backup_disappeared', _EXECUTION.c.fault.like('backup % disappeared %')),
    ('status_unreadable', _EXECUTION.c.fault.like(
        'the status of backup % cannot be read%')),
    ('internal_error', _EXECUTION.c.fault.like('internal error %')),
)
REASON_OTHER_FAULT = 'backend_error'
REASON_NONE = 'none'


class Lateness(typing.NamedTuple):
    """A histogram of seconds: cumulative bucket counts, sum and count."""

    buckets: list
    total: float
    count: int


class Snapshot(typing.NamedTuple):
    """Every figure of one scrape, as plain numbers."""

    policies: dict            # enabled (bool) -> count
    backlog: int              # enabled policies due at or before now
    backlog_oldest: typing.Optional[datetime.datetime]
    in_flight: dict           # status -> (count, oldest created_at)
    finished: dict            # (status, reason class) -> count, in window
    dispatch_lateness: Lateness
    start_lateness: Lateness
    strays_deleted: dict      # reason -> backups deleted, in window
    reconciliations_due: int
    services: dict            # (binary, up) -> count
    failure_streaks: dict     # streak length (capped) -> policies
    # (service id, binary, host, stats JSON text) of the live services
    # whose heartbeat wrote their own metrics.
    process_stats: list = []


class _Seconds(expression.FunctionElement):
    """Seconds from the first timestamp to the second, as a float."""

    type = sa.Float()
    name = 'seconds_between'
    inherit_cache = True


@compiler.compiles(_Seconds, 'postgresql')
def _seconds_postgresql(element, compiler, **kw):
    start, end = list(element.clauses)
    return 'EXTRACT(EPOCH FROM (%s - %s))' % (
        compiler.process(end, **kw), compiler.process(start, **kw))


@compiler.compiles(_Seconds, 'mysql')
@compiler.compiles(_Seconds, 'mariadb')
def _seconds_mysql(element, compiler, **kw):
    start, end = list(element.clauses)
    return 'TIMESTAMPDIFF(MICROSECOND, %s, %s) / 1000000.0' % (
        compiler.process(start, **kw), compiler.process(end, **kw))


@compiler.compiles(_Seconds, 'sqlite')
def _seconds_sqlite(element, compiler, **kw):
    # julianday() is a double: rounded to the millisecond, one second is
    # one second.
    start, end = list(element.clauses)
    return 'ROUND((julianday(%s) - julianday(%s)) * 86400.0, 3)' % (
        compiler.process(end, **kw), compiler.process(start, **kw))


def _count_if(condition):
    return sa.func.coalesce(
        sa.func.sum(sa.case((condition, 1), else_=0)), 0)


def _reason_class():
    return sa.case(
        *[(condition, sa.literal(name)) for name, condition in REASON_CLASSES],
        (_EXECUTION.c.fault.is_not(None), sa.literal(REASON_OTHER_FAULT)),
        else_=sa.literal(REASON_NONE))


def _lateness_columns(stamp, buckets):
    seconds = _Seconds(_EXECUTION.c.scheduled_at, stamp)
    present = stamp.is_not(None)
    return ([_count_if(sa.and_(present, seconds <= bound))
             for bound in buckets]
            + [sa.func.coalesce(sa.func.sum(
                sa.case((present, seconds), else_=0.0)), 0.0),
               _count_if(present)])


def _lateness(row, offset, buckets):
    values = row[offset:offset + len(buckets) + 2]
    return Lateness([int(value) for value in values[:len(buckets)]],
                    float(values[len(buckets)]), int(values[-1]))


def _strays_deleted(session, now, since, reach):
    """Backups deleted as duplicate or orphan since ``since``, by reason.

    The entries are in the ``deleted_backups`` JSON of the execution
    they were tagged with, which finished at most ``reach`` before them.
    """
    totals = {'duplicate': 0, 'orphan': 0}
    # Matched as the JSON text it is stored as.
    text = sa.type_coerce(_EXECUTION.c.deleted_backups, sa.Text)
    query = (sa.select(_EXECUTION.c.deleted_backups)
             .where(_EXECUTION.c.finished_at >= since - reach,
                    sa.or_(text.like('%"duplicate"%'),
                           text.like('%"orphan"%'))))
    for entries in session.execute(query).scalars():
        for entry in entries or ():
            reason = entry.get('reason')
            deleted_at = entry.get('deleted_at')
            if reason not in totals or not deleted_at:
                continue
            when = datetime.datetime.fromisoformat(deleted_at)
            if when.tzinfo is None:
                when = when.replace(tzinfo=datetime.timezone.utc)
            if since <= when <= now:
                totals[reason] += 1
    return totals


# Policies ranked per statement: each is a range of the unique index on
# (policy_id, scheduled_at).
_STREAK_CHUNK = 500


def _failure_streaks(session, longest, lookback_since):
    """{streak length: policies} for policies whose newest run failed.

    A streak is the number of the newest runs (SUCCEEDED or FAILED,
    scheduled since ``lookback_since``) that all failed, counted up to
    ``longest`` (0: nothing is read).  The policies whose
    ``last_execution_id`` names a FAILED execution that finished since
    ``lookback_since`` are read first; only their history is ranked, by
    the unique index on (policy_id, scheduled_at), a chunk at a time --
    an ``IN`` over a subquery lets MariaDB scan the whole history instead.
    """
    # From the FAILED executions (the index on status) to their policy
    # (by primary key), not from every policy to its last execution: the
    # cost follows the failures, not the number of policies.  MariaDB
    # would start from the policies; STRAIGHT_JOIN keeps the order.
    if not longest:
        return {}
    policy = _POLICY.alias('policy')
    failing = list(session.execute(
        sa.select(_EXECUTION.c.policy_id)
        .prefix_with('STRAIGHT_JOIN', dialect='mysql')
        .select_from(_EXECUTION)
        .join(policy, sa.and_(policy.c.id == _EXECUTION.c.policy_id,
                              policy.c.last_execution_id
                              == _EXECUTION.c.id))
        .where(_EXECUTION.c.status == enums.ExecutionStatus.FAILED,
               _EXECUTION.c.finished_at >= lookback_since)).scalars())
    totals = {}
    for start in range(0, len(failing), _STREAK_CHUNK):
        rank = sa.func.row_number().over(
            partition_by=_EXECUTION.c.policy_id,
            order_by=_EXECUTION.c.scheduled_at.desc()).label('rank')
        ranked = (sa.select(_EXECUTION.c.policy_id, _EXECUTION.c.status,
                            rank)
                  .where(_EXECUTION.c.policy_id.in_(
                      failing[start:start + _STREAK_CHUNK]),
                      _EXECUTION.c.scheduled_at >= lookback_since,
                      _EXECUTION.c.status.in_(
                          (enums.ExecutionStatus.SUCCEEDED,
                           enums.ExecutionStatus.FAILED)))
                  .subquery())
        first_success = sa.func.min(sa.case(
            (ranked.c.status != enums.ExecutionStatus.FAILED,
             ranked.c.rank)))
        streak = sa.func.coalesce(first_success - 1, sa.func.count())
        per_policy = (sa.select(streak.label('streak'))
                      .where(ranked.c.rank <= longest)
                      .group_by(ranked.c.policy_id).subquery())
        for length, count in session.execute(
                sa.select(per_policy.c.streak, sa.func.count())
                .group_by(per_policy.c.streak)):
            totals[int(length)] = totals.get(int(length), 0) + count
    return totals


@context_manager.reader
def collect(context, now, since, buckets, service_down_time,
            reconcile_reach, longest_streak=1,
            lookback=datetime.timedelta(days=30)):
    """Read every figure of the metrics endpoint; a :class:`Snapshot`.

    ``since`` starts the window of the history figures, ``buckets`` are
    the upper bounds of the lateness histograms, ``service_down_time``
    the heartbeat age after which a process counts as down and
    ``reconcile_reach`` how long after its execution finished a stray
    backup may be deleted; failure streaks are counted up to
    ``longest_streak`` runs over the ``lookback`` before ``now``.
    """
    session = context.session
    policies = dict(session.execute(
        sa.select(_POLICY.c.enabled, sa.func.count())
        .group_by(_POLICY.c.enabled)).all())
    backlog, backlog_oldest = session.execute(
        sa.select(sa.func.count(), sa.func.min(_POLICY.c.next_execution_time))
        .where(_POLICY.c.enabled == sa.true(),
               _POLICY.c.next_execution_time <= now)).one()
    in_flight = {row[0]: (row[1], row[2]) for row in session.execute(
        sa.select(_EXECUTION.c.status, sa.func.count(),
                  sa.func.min(_EXECUTION.c.created_at))
        .where(_EXECUTION.c.status.in_(
            enums.ExecutionStatus.WAITING + (enums.ExecutionStatus.RUNNING,)))
        .group_by(_EXECUTION.c.status))}
    reason = _reason_class().label('reason')
    finished = {(row[0], row[1]): row[2] for row in session.execute(
        sa.select(_EXECUTION.c.status, reason, sa.func.count())
        .where(_EXECUTION.c.finished_at >= since,
               _EXECUTION.c.status.in_(enums.ExecutionStatus.FINISHED))
        .group_by(_EXECUTION.c.status, reason))}
    # Lateness: the scheduled runs finished in the window (by the index on
    # finished_at) and those in flight (by the index on status).
    columns = (_lateness_columns(_EXECUTION.c.dispatched_at, buckets)
               + _lateness_columns(_EXECUTION.c.started_at, buckets))
    scheduled = _EXECUTION.c.trigger == enums.ExecutionTrigger.SCHEDULE
    lateness = [
        sum(values) for values in zip(
            session.execute(sa.select(*columns).where(
                _EXECUTION.c.finished_at >= since,
                _EXECUTION.c.status.in_(enums.ExecutionStatus.FINISHED),
                scheduled)).one(),
            session.execute(sa.select(*columns).where(
                _EXECUTION.c.status.in_(
                    (enums.ExecutionStatus.DISPATCHED,
                     enums.ExecutionStatus.RUNNING)),
                scheduled)).one())]
    reconciliations_due = session.execute(
        sa.select(sa.func.count()).select_from(_RECONCILIATION)
        .where(_RECONCILIATION.c.due_at <= now)).scalar()
    alive_since = now - datetime.timedelta(seconds=service_down_time)
    up = (_SERVICE.c.heartbeat_at >= alive_since).label('up')
    services = {}
    for binary, is_up, count in session.execute(
            sa.select(_SERVICE.c.binary, up, sa.func.count())
            .group_by(_SERVICE.c.binary, up)):
        services[(binary, bool(is_up))] = count
    process_stats = [tuple(row) for row in session.execute(
        sa.select(_SERVICE.c.id, _SERVICE.c.binary, _SERVICE.c.host,
                  _SERVICE.c.stats)
        .where(_SERVICE.c.heartbeat_at >= alive_since,
               _SERVICE.c.stats.is_not(None))
        .order_by(_SERVICE.c.binary, _SERVICE.c.host, _SERVICE.c.id))]
    return Snapshot(
        policies={bool(key): value for key, value in policies.items()},
        backlog=backlog, backlog_oldest=backlog_oldest,
        in_flight=in_flight, finished=finished,
        dispatch_lateness=_lateness(lateness, 0, buckets),
        start_lateness=_lateness(lateness, len(buckets) + 2, buckets),
        strays_deleted=_strays_deleted(session, now, since, reconcile_reach),
        reconciliations_due=reconciliations_due, services=services,
        failure_streaks=_failure_streaks(session, longest_streak,
                                         now - lookback),
        process_stats=process_stats)
