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
buckets of a histogram.  The policies' figures are one pass over their
table (the failure streaks are kept on each policy as outcomes are
recorded); the queries on executions follow an index and read only the
unfinished ones and those of the window, never the rest of the history.
The live services' own metrics are read as the JSON their heartbeats
wrote.
"""

import collections
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
    ('excluded', _EXECUTION.c.status_reason.like('excluded: %')),
    ('start_window', _EXECUTION.c.status_reason.like('start window ended %')),
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
    # protection state -> (policies, oldest last_success_at)
    protection: dict = {}
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
    they were tagged with, which finished at most ``reach`` before them
    and whose ``stray_deleted_at`` is the latest of them: found from the
    index on (finished_at, stray_deleted_at) alone, only they are read.
    """
    totals = {'duplicate': 0, 'orphan': 0}
    query = (sa.select(_EXECUTION.c.deleted_backups)
             .where(_EXECUTION.c.finished_at >= since - reach,
                    _EXECUTION.c.stray_deleted_at >= since))
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


class _Policies(typing.NamedTuple):
    counts: dict              # enabled (bool) -> count
    backlog: int
    backlog_oldest: typing.Optional[datetime.datetime]
    protection: dict          # state -> (count, oldest last_success_at)
    failure_streaks: dict     # streak length (capped) -> policies


def _earliest(first, second):
    if first is None or second is None:
        return second if first is None else first
    return min(first, second)


def _policies(session, now, longest):
    """Every figure of the policies, in one pass over their table.

    Grouped by whether the policy is enabled, its protection state and
    its failure streak -- its ``consecutive_failures``, which the
    transaction recording each outcome keeps (a success ends it, a failed
    outcome lengthens it: ``db.protection.record_outcome``).  The groups
    are the raw streak lengths, in the order of the index on (enabled,
    protection, consecutive_failures, ...), so that MariaDB groups while
    it reads that index instead of through a temporary table (the capped
    length, an expression, needed one); the cap at ``longest`` (0: not
    read) is applied here.  One row per distinct (enabled, protection,
    streak): a few dozen, whatever the number of policies.
    """
    due = _POLICY.c.next_execution_time <= now
    groups = [_POLICY.c.enabled, _POLICY.c.protection]
    if longest:
        groups.append(_POLICY.c.consecutive_failures)
    query = (sa.select(sa.func.count(), _count_if(due),
                       sa.func.min(sa.case(
                           (due, _POLICY.c.next_execution_time))),
                       sa.func.min(_POLICY.c.last_success_at), *groups)
             .group_by(*groups))
    result = _Policies({}, 0, None, {}, {})
    for row in session.execute(query):
        (count, due_count, due_oldest, oldest_success, enabled,
         protection) = row[:6]
        length = min(int(row[6] or 0), int(longest)) if longest else 0
        enabled = bool(enabled)
        result.counts[enabled] = result.counts.get(enabled, 0) + count
        if enabled and due_count:
            result = result._replace(
                backlog=result.backlog + int(due_count),
                backlog_oldest=_earliest(result.backlog_oldest, due_oldest))
        if protection is not None:
            total, oldest = result.protection.get(protection, (0, None))
            result.protection[protection] = (
                total + count, _earliest(oldest, oldest_success))
        if length:
            result.failure_streaks[length] = (
                result.failure_streaks.get(length, 0) + count)
    return result


def _add(totals, values):
    for index, value in enumerate(values):
        totals[index] += value


def _executions(session, since, buckets):
    """(in flight, finished, lateness sums) in two statements.

    The unfinished executions by status (the index on status), and those
    finished in the window by status and reason class (the index on
    finished_at), each grouped by trigger too, with the sums of the
    lateness histograms: those of the scheduled ones finished in the
    window or dispatched and not finished are added up.
    """
    columns = (_lateness_columns(_EXECUTION.c.dispatched_at, buckets)
               + _lateness_columns(_EXECUTION.c.started_at, buckets))
    lateness = [0] * len(columns)
    in_flight = {}
    for status, trigger, count, oldest, *values in session.execute(
            sa.select(_EXECUTION.c.status, _EXECUTION.c.trigger,
                      sa.func.count(), sa.func.min(_EXECUTION.c.created_at),
                      *columns)
            .where(_EXECUTION.c.status.in_(
                enums.ExecutionStatus.WAITING
                + (enums.ExecutionStatus.RUNNING,)))
            .group_by(_EXECUTION.c.status, _EXECUTION.c.trigger)):
        total, first = in_flight.get(status, (0, None))
        in_flight[status] = (total + count, oldest if first is None else
                             min(first, oldest))
        if (trigger == enums.ExecutionTrigger.SCHEDULE
                and status != enums.ExecutionStatus.PENDING):
            _add(lateness, values)
    reason = _reason_class().label('reason')
    finished = collections.Counter()
    for status, reason_class, trigger, count, *values in session.execute(
            sa.select(_EXECUTION.c.status, reason, _EXECUTION.c.trigger,
                      sa.func.count(), *columns)
            .where(_EXECUTION.c.finished_at >= since,
                   _EXECUTION.c.status.in_(enums.ExecutionStatus.FINISHED))
            .group_by(_EXECUTION.c.status, reason, _EXECUTION.c.trigger)):
        finished[(status, reason_class)] += count
        if trigger == enums.ExecutionTrigger.SCHEDULE:
            _add(lateness, values)
    return in_flight, dict(finished), lateness


def _services(session, alive_since):
    """({(binary, up): count}, the live ones' stats) in one statement."""
    up = _SERVICE.c.heartbeat_at >= alive_since
    services = collections.Counter()
    process_stats = []
    for service_id, binary, host, is_up, stats in session.execute(
            sa.select(_SERVICE.c.id, _SERVICE.c.binary, _SERVICE.c.host,
                      up, sa.case((up, _SERVICE.c.stats)))
            .order_by(_SERVICE.c.binary, _SERVICE.c.host, _SERVICE.c.id)):
        services[(binary, bool(is_up))] += 1
        if is_up and stats is not None:
            process_stats.append((service_id, binary, host, stats))
    return dict(services), process_stats


@context_manager.reader
def collect(context, now, since, buckets, service_down_time,
            reconcile_reach, longest_streak=1):
    """Read every figure of the metrics endpoint; a :class:`Snapshot`.

    ``since`` starts the window of the history figures, ``buckets`` are
    the upper bounds of the lateness histograms, ``service_down_time``
    the heartbeat age after which a process counts as down and
    ``reconcile_reach`` how long after its execution finished a stray
    backup may be deleted; failure streaks are counted up to
    ``longest_streak`` failed outcomes in a row.  Six statements, in one
    transaction.
    """
    session = context.session
    policies = _policies(session, now, longest_streak)
    in_flight, finished, lateness = _executions(session, since, buckets)
    reconciliations_due = session.execute(
        sa.select(sa.func.count()).select_from(_RECONCILIATION)
        .where(_RECONCILIATION.c.due_at <= now)).scalar()
    services, process_stats = _services(
        session, now - datetime.timedelta(seconds=service_down_time))
    return Snapshot(
        policies=policies.counts, backlog=policies.backlog,
        backlog_oldest=policies.backlog_oldest,
        in_flight=in_flight, finished=finished,
        dispatch_lateness=_lateness(lateness, 0, buckets),
        start_lateness=_lateness(lateness, len(buckets) + 2, buckets),
        strays_deleted=_strays_deleted(session, now, since, reconcile_reach),
        reconciliations_due=reconciliations_due, services=services,
        failure_streaks=policies.failure_streaks,
        protection=policies.protection, process_stats=process_stats)
