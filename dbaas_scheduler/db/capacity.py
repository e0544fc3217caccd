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
"""Fair capacity: how many backups may run at once, per project and region.

``[worker] max_running_per_project`` and ``[worker] max_running`` bound
the executions RUNNING at once, counted in the database, so that the
bound holds over every worker.  A worker's claim (``db_worker.
claim_executions``) calls :func:`admit` in its own transaction, before its
conditional update:

1. the ``project_capacity`` rows of the projects the claim would start
   backups for, and the region's row (``'*'``) when ``max_running`` is
   set, are updated (``claims + 1``), one at a time in key order: a second
   claim of the same project waits for the first to commit, and two
   claims never lock two rows in opposite orders.  The update is a real
   write, so on Galera two claims on two nodes conflict at certification
   and one is taken again (``retry_on_deadlock``);
2. then the RUNNING executions are counted.  At READ COMMITTED (PostgreSQL,
   and MariaDB as ``db/api.py`` sets it) each statement sees what was
   committed before it began, so this count includes every claim that held
   the row before; SQLite's write transactions are serialized anyway;
3. the executions are admitted in slot order while their project (and the
   region) is below its limit and the project has no backoff; the others
   are queued: PENDING, ``next_attempt_at`` now (or the end of the
   project's backoff), a ``queued:`` status reason, ``attempts``
   unchanged -- so one never claimed still EXPIRES through the sweep once
   its start window ends, as any unclaimed execution does.

An execution whose backup was started already (``backup_id`` set: a
resume) and a RUNNING one whose lease expired are always admitted: they
are running at the backend whatever the count says.

Queued executions are offered again by the engine's sweep
(:func:`fair_candidates`): ranked by slot within their project, rank 1 of
every project before rank 2 of any -- round-robin across projects -- and
only as many as each project (and the region) has free slots, so that a
sweep does not cast what the claim would refuse.  The claim decides; the
sweep only avoids casting in vain.

With every option 0 (the default) nothing here runs: the claim is the
single conditional update it always was.
"""

import collections
import typing

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums

_EXECUTION = models.BackupExecution.__table__
_CAPACITY = models.ProjectCapacity.__table__

# The key of the region-wide row.
REGION = '*'

# Characters of the backend's explanation kept with a backoff.
_REASON = 1000

# Status reasons of queued executions (the claim clears "queued:" ones).
PROJECT_FULL = ('queued: project %s has %d backups running, its limit '
                '([worker] max_running_per_project)')
REGION_FULL = ('queued: %d backups are running in the region, its limit '
               '([worker] max_running)')
BACKED_OFF = ('queued: the backend asked project %s to slow down; no new '
              'backup of it starts before %s (%s)')


class Limits(typing.NamedTuple):
    """The limits in force; 0 is none."""

    per_project: int = 0
    region: int = 0
    backoff: int = 0

    @property
    def active(self):
        return bool(self.per_project or self.region or self.backoff)


def limits_from_conf(conf):
    return Limits(conf.worker.max_running_per_project,
                  conf.worker.max_running, conf.worker.project_backoff)


def _insert_missing(context, keys):
    """Create the capacity rows of ``keys`` that do not exist yet."""
    session = context.session
    name = session.get_bind().dialect.name
    rows = [{'project_id': key, 'claims': 0} for key in keys]
    if name == 'postgresql':
        statement = postgresql.insert(_CAPACITY).on_conflict_do_nothing()
    elif name == 'sqlite':
        statement = sqlite.insert(_CAPACITY).on_conflict_do_nothing()
    else:
        statement = sa.insert(_CAPACITY).prefix_with('IGNORE')
    session.execute(statement, rows)


def _lock(context, keys):
    """Lock the capacity rows of ``keys``, one at a time in key order."""
    keys = sorted(set(keys))
    existing = set(context.session.execute(
        sa.select(_CAPACITY.c.project_id)
        .where(_CAPACITY.c.project_id.in_(keys))).scalars())
    if set(keys) - existing:
        _insert_missing(context, sorted(set(keys) - existing))
    for key in keys:
        context.session.execute(
            sa.update(_CAPACITY).where(_CAPACITY.c.project_id == key)
            .values(claims=_CAPACITY.c.claims + 1))


def _running(context, projects, region):
    """``({project: RUNNING count}, RUNNING in the region or None)``."""
    running = _EXECUTION.c.status == enums.ExecutionStatus.RUNNING
    counts = dict(context.session.execute(
        sa.select(_EXECUTION.c.project_id, sa.func.count())
        .where(running, _EXECUTION.c.project_id.in_(sorted(projects)))
        .group_by(_EXECUTION.c.project_id)).all())
    total = None
    if region:
        total = context.session.execute(
            sa.select(sa.func.count()).select_from(_EXECUTION)
            .where(running)).scalar()
    return counts, total


def _backoffs(context, projects, now):
    """``{project: (until, reason)}`` of the projects backing off now."""
    rows = context.session.execute(
        sa.select(_CAPACITY.c.project_id, _CAPACITY.c.backoff_until,
                  _CAPACITY.c.backoff_reason)
        .where(_CAPACITY.c.project_id.in_(sorted(projects)),
               _CAPACITY.c.backoff_until > now)).all()
    return {row.project_id: (row.backoff_until, row.backoff_reason)
            for row in rows}


class _Room:
    """Free slots per project and in the region, spent as they are given."""

    def __init__(self, limits, counts, total, backoffs):
        self.limits = limits
        self.counts = dict(counts)
        self.total = total or 0
        self.backoffs = backoffs

    def refusal(self, project_id):
        """Why a new backup of ``project_id`` cannot start; None if it can.

        ``(reason, next_attempt_at or None)``.
        """
        if project_id in self.backoffs:
            until, why = self.backoffs[project_id]
            return BACKED_OFF % (project_id, until.isoformat(), why), until
        running = self.counts.get(project_id, 0)
        if self.limits.per_project and running >= self.limits.per_project:
            return PROJECT_FULL % (project_id, running), None
        if self.limits.region and self.total >= self.limits.region:
            return REGION_FULL % self.total, None
        return None

    def take(self, project_id):
        self.counts[project_id] = self.counts.get(project_id, 0) + 1
        self.total += 1


def admit(context, execution_ids, limits, now):
    """Which of ``execution_ids`` a claim may start; queue the others.

    Runs in the claim's transaction (see the module's text); returns the
    ids the claim's conditional update may take.  Those refused are
    queued here, if still waiting.
    """
    rows = context.session.execute(
        sa.select(_EXECUTION.c.id, _EXECUTION.c.project_id,
                  _EXECUTION.c.status, _EXECUTION.c.backup_id,
                  _EXECUTION.c.scheduled_at)
        .where(_EXECUTION.c.id.in_(execution_ids))).all()
    new = sorted((row for row in rows
                  if row.status in enums.ExecutionStatus.WAITING
                  and row.backup_id is None),
                 key=lambda row: (row.scheduled_at, row.id))
    if not new:
        return list(execution_ids)
    # First without a lock: a project (or a region) already full refuses
    # at once -- a refusal is always safe, the sweep offers it again --
    # so that a burst of a full project does not queue on its row.
    projects = {row.project_id for row in new}
    unlocked = _Room(limits, *_running(context, projects, limits.region),
                     _backoffs(context, projects, now))
    hopeful = {row.project_id for row in new
               if unlocked.refusal(row.project_id) is None}
    room = unlocked
    if hopeful:
        _lock(context, ([REGION] if limits.region else []) + list(hopeful))
        # Counted again, now that no other claim of these can commit.
        room = _Room(limits, *_running(context, hopeful, limits.region),
                     _backoffs(context, hopeful, now))
    refused = collections.defaultdict(list)
    for row in new:
        refusal = (room.refusal(row.project_id) if row.project_id in hopeful
                   else unlocked.refusal(row.project_id))
        if refusal is None:
            room.take(row.project_id)
        else:
            refused[refusal].append(row.id)
    for (reason, until), ids in sorted(refused.items(),
                                       key=lambda item: item[0][0]):
        _queue(context, ids, reason, until or now)
    queued = {execution_id for ids in refused.values() for execution_id in ids}
    return [execution_id for execution_id in execution_ids
            if execution_id not in queued]


def _queue(context, execution_ids, reason, next_attempt_at):
    context.session.execute(
        sa.update(_EXECUTION)
        .where(_EXECUTION.c.id.in_(sorted(execution_ids)),
               _EXECUTION.c.status.in_(enums.ExecutionStatus.WAITING))
        .values(status=enums.ExecutionStatus.PENDING, dispatched_at=None,
                next_attempt_at=next_attempt_at, status_reason=reason))


def fair_candidates(context, conditions, limits, now, limit):
    """Waiting executions to offer again, fairly; ``[id]``, in order.

    ``conditions`` select the waiting executions (the sweep's).  Ranked
    by ``(scheduled_at, id)`` within their project; taken rank by rank
    across projects (round-robin), each while its project and the region
    have room (resumes, with a backup id, always), at most ``limit``.
    """
    rank = sa.func.row_number().over(
        partition_by=_EXECUTION.c.project_id,
        order_by=(_EXECUTION.c.scheduled_at,
                  _EXECUTION.c.id)).label('slot_rank')
    ranked = (sa.select(_EXECUTION.c.id, _EXECUTION.c.project_id,
                        _EXECUTION.c.backup_id, _EXECUTION.c.scheduled_at,
                        rank)
              .where(*conditions).subquery())
    # No project needs more of its queue than the per-project limit (or
    # than the whole pass may take).
    depth = min(limits.per_project or limit, limit)
    rows = context.session.execute(
        sa.select(ranked).where(ranked.c.slot_rank <= depth)
        .order_by(ranked.c.slot_rank, ranked.c.scheduled_at, ranked.c.id)
        .limit(limit * 4)).all()
    if not rows:
        return []
    projects = {row.project_id for row in rows}
    counts, total = _running(context, projects, limits.region)
    room = _Room(limits, counts, total, _backoffs(context, projects, now))
    chosen = []
    for row in rows:
        if row.backup_id is None:
            if room.refusal(row.project_id) is not None:
                continue
            room.take(row.project_id)
        chosen.append(row.id)
        if len(chosen) >= limit:
            break
    return chosen


@db_api.retry_on_deadlock
@context_manager.writer
def record_backoff(context, project_id, until, reason):
    """No new backup of ``project_id`` starts before ``until``.

    A later ``until`` already recorded stays.
    """
    _lock(context, [project_id])
    context.session.execute(
        sa.update(_CAPACITY)
        .where(_CAPACITY.c.project_id == project_id,
               sa.or_(_CAPACITY.c.backoff_until.is_(None),
                      _CAPACITY.c.backoff_until < until))
        .values(backoff_until=until, backoff_reason=reason[:_REASON]))


@context_manager.reader
def get_backoff(context, project_id):
    """``(until, reason)`` of the project's last backoff, or None."""
    row = context.session.execute(
        sa.select(_CAPACITY.c.backoff_until, _CAPACITY.c.backoff_reason)
        .where(_CAPACITY.c.project_id == project_id)).first()
    return None if row is None or row.backoff_until is None else tuple(row)


# The metrics (dbaas_scheduler.metrics): why an execution waits for
# capacity, from its status reason -- a bounded label.  The overlap queue
# ("queued: execution ... of the same instance") is not capacity.
QUEUED_REASONS = (
    ('project_limit', 'queued: project % has % backups running%'),
    ('region_limit', 'queued: % backups are running in the region%'),
    ('backoff', 'queued: the backend asked project %'),
)


class Queued(typing.NamedTuple):
    """A project's executions waiting for capacity."""

    project_id: str
    counts: dict        # reason (QUEUED_REASONS) -> executions
    oldest: typing.Any  # the earliest scheduled_at of them


@context_manager.reader
def queued_for_capacity(context):
    """The executions waiting for capacity, per project; ``[Queued]``.

    One statement: the waiting executions (``status`` PENDING or
    DISPATCHED, a range of the index on (status, lease_expires_at)) whose
    status reason says they were queued for a limit or a backoff, grouped
    by project -- one row per project with any.
    """
    reason = _EXECUTION.c.status_reason
    columns = [sa.func.coalesce(sa.func.sum(sa.case(
        (reason.like(pattern), 1), else_=0)), 0)
        for _, pattern in QUEUED_REASONS]
    rows = context.session.execute(
        sa.select(_EXECUTION.c.project_id,
                  sa.func.min(_EXECUTION.c.scheduled_at), *columns)
        .where(_EXECUTION.c.status.in_(enums.ExecutionStatus.WAITING),
               sa.or_(*[reason.like(pattern)
                        for _, pattern in QUEUED_REASONS]))
        .group_by(_EXECUTION.c.project_id)).all()
    return [Queued(row[0], {name: int(value) for (name, _), value
                            in zip(QUEUED_REASONS, row[2:])}, row[1])
            for row in rows]


@context_manager.reader
def backoffs_now(context, now, limit):
    """``(projects backing off at now, latest end, [(project, until)])``.

    The list holds the ``limit`` backoffs that end last.  One statement,
    on the index on ``backoff_until``: only the rows of the projects
    backing off are read.
    """
    total = sa.func.count().over().label('total')
    rows = context.session.execute(
        sa.select(_CAPACITY.c.project_id, _CAPACITY.c.backoff_until, total)
        .where(_CAPACITY.c.backoff_until > now,
               _CAPACITY.c.project_id != REGION)
        .order_by(_CAPACITY.c.backoff_until.desc(), _CAPACITY.c.project_id)
        .limit(max(limit, 1))).all()
    if not rows:
        return 0, None, []
    return (int(rows[0].total), rows[0].backoff_until,
            [(row.project_id, row.backoff_until) for row in rows[:limit]])
