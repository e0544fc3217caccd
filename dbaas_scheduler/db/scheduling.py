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
"""Database access of the engine: the tick's claim, compare-and-set and
inserts, and the sweeps.

The rows that cross from :mod:`dbaas_scheduler.engine.tick` into the
statements here are named tuples defined next to the SQL that consumes
them (:class:`PolicyAdvance`, :class:`NewExecution`).  The tick's batch
statements are SQL text, one form per dialect (see the comment above
:func:`advance_policies`); everything else is SQLAlchemy Core.
"""

import datetime
import functools
import json
import types as types_
import typing

import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import capacity as db_capacity
from dbaas_scheduler.db import models
from dbaas_scheduler.db import protection as db_protection
from dbaas_scheduler.db import types
from dbaas_scheduler import enums

_POLICY = models.BackupPolicy.__table__
_EXECUTION = models.BackupExecution.__table__

# What the tick needs to know about a due policy.
_DUE_POLICY_COLUMNS = (
    'id', 'project_id', 'instance_id', 'schedule_type', 'schedule',
    'resolved_schedule', 'timezone', 'start_at', 'end_at', 'remaining_runs',
    'catchup_window', 'start_window', 'completion_window', 'exclusions',
    'next_execution_time')


class PolicyAdvance(typing.NamedTuple):
    """What the tick's compare-and-set writes to one claimed policy.

    The row is changed only while its ``next_execution_time`` still equals
    ``due``, the time the tick read when it claimed it.
    """

    id: str
    due: datetime.datetime
    next_execution_time: typing.Optional[datetime.datetime]
    remaining_runs: typing.Optional[int]
    enabled: bool
    paused_reason: typing.Optional[str]
    last_execution_id: typing.Optional[str]


class NewExecution(typing.NamedTuple):
    """One execution the tick inserts.

    DISPATCHED (a run), SKIPPED (missed, or excluded) or EXPIRED (its start
    window ended before the engine got to it).
    """

    id: str
    policy_id: str
    project_id: str
    instance_id: str
    scheduled_at: datetime.datetime
    trigger: str
    status: str
    status_reason: typing.Optional[str]
    attempts: int
    created_at: datetime.datetime
    dispatched_at: typing.Optional[datetime.datetime]
    finished_at: typing.Optional[datetime.datetime]
    start_deadline: typing.Optional[datetime.datetime] = None
    completion_deadline: typing.Optional[datetime.datetime] = None


_ADVANCE_COLUMNS = PolicyAdvance._fields


@context_manager.writer
def claim_due_policies(context, now, limit):
    """Lock up to ``limit`` enabled policies due at ``now``, earliest first.

    ``FOR UPDATE SKIP LOCKED`` on PostgreSQL and MariaDB/MySQL: rows another
    engine has claimed are skipped, not waited for, so engines share a
    burst without blocking each other.  SQLite has no row locks (one engine
    only); the compare-and-set in :func:`advance_policies` still fences it.
    """
    columns = [_POLICY.c[name] for name in _DUE_POLICY_COLUMNS]
    # The exclusions as stored (JSON text): the tick decodes each distinct
    # text once, not each row.
    columns[_DUE_POLICY_COLUMNS.index('exclusions')] = sa.type_coerce(
        _POLICY.c.exclusions, sa.Text).label('exclusions')
    query = (sa.select(*columns)
             .where(_POLICY.c.enabled == sa.true(),
                    _POLICY.c.next_execution_time <= now)
             .order_by(_POLICY.c.next_execution_time)
             .limit(limit)
             .with_for_update(skip_locked=True))
    return context.session.execute(query).all()


# The compare-and-set of a whole batch is one statement per dialect, with
# the batch as a derived table.  It is written as SQL text with positional
# parameters because building it with SQLAlchemy constructs costs more than
# the database work (7,000 bound literals per 1,000 rows), and because each
# backend needs a different form:
#
# * PostgreSQL: UPDATE ... FROM (VALUES ...).  A UNION ALL of 1,000 SELECTs
#   takes PostgreSQL seconds to plan.  The first row carries the casts, or
#   a column that is NULL in every row would be typed text.
# * MariaDB/MySQL: UPDATE ... JOIN (SELECT ... UNION ALL ...).  MariaDB
#   rejects WITH ... UPDATE and cannot name the columns of VALUES; no casts
#   (CAST AS DATETIME drops microseconds; the string compares exactly).
# * SQLite: UPDATE ... FROM (SELECT column1 AS id, ... FROM (VALUES ...)).
#   SQLite cannot name the columns of VALUES, caps UNION ALL at 500 terms,
#   and Python's sqlite3 reports no rowcount for a statement that starts
#   with WITH.
def _set_from_v(target):
    return ', '.join(
        ['%s%s = v.%s' % (target, column, column)
         for column in _ADVANCE_COLUMNS[2:]]
        + ['%supdated_at = {p}' % target])


_V_COLUMNS = ', '.join(_ADVANCE_COLUMNS)
_ADVANCE_SQL = {
    'postgresql': (
        'UPDATE backup_policy AS p SET ' + _set_from_v('') + ' '
        'FROM (VALUES {rows}) AS v (' + _V_COLUMNS + ') '
        'WHERE p.id = v.id AND p.next_execution_time = v.due'),
    'mysql': (
        'UPDATE backup_policy AS p JOIN ({rows}) AS v '
        'ON p.id = v.id AND p.next_execution_time = v.due '
        'SET ' + _set_from_v('p.')),
    'sqlite': (
        'UPDATE backup_policy SET ' + _set_from_v('') + ' FROM '
        '(SELECT ' + ', '.join('column%d AS %s' % (n, column) for n, column
                               in enumerate(_ADVANCE_COLUMNS, 1))
        + ' FROM (VALUES {rows})) AS v '
        'WHERE backup_policy.id = v.id '
        'AND backup_policy.next_execution_time = v.due'),
}
_ADVANCE_ROW = {
    'postgresql': (
        '(CAST({p} AS varchar), CAST({p} AS timestamp), '
        'CAST({p} AS timestamp), CAST({p} AS integer), '
        'CAST({p} AS boolean), CAST({p} AS text), CAST({p} AS varchar))',
        '({p}, {p}, {p}, {p}, {p}, {p}, {p})'),
    'mysql': (
        'SELECT ' + ', '.join('{p} AS %s' % c
                              for c in _ADVANCE_COLUMNS),
        'SELECT {p}, {p}, {p}, {p}, {p}, {p}, {p}'),
    'sqlite': ('({p}, {p}, {p}, {p}, {p}, {p}, {p})',) * 2,
}
_ROW_SEPARATOR = {'postgresql': ', ', 'mysql': ' UNION ALL ',
                  'sqlite': ', '}
_SQLITE_DATETIME = '%Y-%m-%d %H:%M:%S.%f'


def _driver_dialect(connection):
    """(backend name, positional placeholder) of a connection's driver."""
    dialect = connection.dialect
    name = 'mysql' if dialect.name == 'mariadb' else dialect.name
    return name, '?' if dialect.paramstyle == 'qmark' else '%s'


def _driver_value(dialect_name, value):
    """What the DB-API driver gets for ``value``: UTC datetimes, naive."""
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(types.UTC).replace(tzinfo=None)
        if dialect_name == 'sqlite':
            # The format SQLAlchemy stores, so that equality holds.
            value = value.strftime(_SQLITE_DATETIME)
    return value


@context_manager.writer
def advance_policies(context, advances, now):
    """Compare-and-set many policies in one statement; return rows matched.

    ``advances`` are :class:`PolicyAdvance` rows.
    A policy is only changed if its ``next_execution_time`` still equals
    the ``due`` time the caller read, so that two engines can never both
    advance (and fire) the same slot.
    """
    if not advances:
        return 0
    connection = context.session.connection()
    name, placeholder = _driver_dialect(connection)
    first, other = (template.format(p=placeholder)
                    for template in _ADVANCE_ROW[name])
    rows = _ROW_SEPARATOR[name].join(
        [first] + [other] * (len(advances) - 1))
    sql = _ADVANCE_SQL[name].format(rows=rows, p=placeholder)
    parameters = [_driver_value(name, value)
                  for advance in advances for value in advance]
    # Positional: updated_at's placeholder is in the SET clause, which the
    # PostgreSQL and SQLite forms have before the rows, MySQL's after them.
    if name in ('postgresql', 'sqlite'):
        parameters.insert(0, _driver_value(name, now))
    else:
        parameters.append(_driver_value(name, now))
    return connection.exec_driver_sql(sql, tuple(parameters)).rowcount


@context_manager.writer
def insert_executions(context, executions):
    """Insert executions in one multi-row INSERT; return the rows inserted.

    ``executions`` are :class:`NewExecution` rows; one whose slot already
    has an execution is not inserted (see ``_ONCE_PER_SLOT``).  SQL text
    for the same reason as :func:`advance_policies`: SQLAlchemy's bind
    processing of 11,000 values per batch costs more than the insert
    itself.
    """
    if not executions:
        return 0
    connection = context.session.connection()
    name, placeholder = _driver_dialect(connection)
    row = '(%s)' % ', '.join([placeholder] * len(NewExecution._fields))
    quote = connection.dialect.identifier_preparer.quote
    sql = 'INSERT INTO backup_execution (%s) VALUES %s %s' % (
        ', '.join(quote(column) for column in NewExecution._fields),
        ', '.join([row] * len(executions)), _ONCE_PER_SLOT[name])
    return connection.exec_driver_sql(sql, tuple(
        _driver_value(name, value)
        for execution in executions for value in execution)).rowcount


def _json_text(rows):
    """``rows`` (tuples) as one JSON array of arrays, for the SQL below.

    Datetimes become naive UTC text to the microsecond, converted once per
    distinct value: a batch has a handful (its ``now``, due times, slots
    and deadlines), shared by every row.
    """
    texts = {}

    def datetime_text(value):
        text = texts.get(value)
        if text is None:
            naive = (value.astimezone(types.UTC).replace(tzinfo=None)
                     if value.tzinfo is not None else value)
            text = texts[value] = naive.strftime(_SQLITE_DATETIME)
        return text

    return json.dumps(rows, default=datetime_text, separators=(',', ':'))


def _json_columns(dialect, name, table, fields, aliases=None):
    """The batch's fields read from its JSON, typed as ``table`` has them.

    ``fields`` are column names of ``table``, in the order of each row's
    values; ``aliases`` names them otherwise.  PostgreSQL: cast expressions
    over ``e``, an element of the array; MariaDB/MySQL: the COLUMNS clause
    of a JSON_TABLE.
    """
    form = ('CAST(e->>{n} AS {type}) AS {alias}' if name == 'postgresql'
            else "{alias} {type} PATH '$[{n}]'")
    columns = []
    for number, (field, alias) in enumerate(zip(fields, aliases or fields)):
        type_ = table.c[field].type.compile(dialect=dialect)
        if name == 'mysql' and type_ == 'TEXT':
            # Free text may hold any character: utf8mb4, as the tables.
            type_ += ' CHARACTER SET utf8mb4'
        columns.append(form.format(
            n=number, alias=dialect.identifier_preparer.quote(alias),
            type=type_))
    return ', '.join(columns)


# The JSON parameter in utf8mb4, whatever the connection's character set:
# MariaDB cannot decode an escaped character outside the Basic
# Multilingual Plane (an emoji) into utf8mb3, and reads the text as ''.
_MYSQL_JSON = 'CONVERT(%s USING utf8mb4)'


@functools.lru_cache(maxsize=4)
def _tick_sql(dialect):
    """The SQL of :func:`record_tick` for a dialect; one or two statements.

    PostgreSQL: the compare-and-set and the insert in one statement (two
    data-modifying CTEs) that answers both row counts.  MariaDB/MySQL
    cannot (no UPDATE in a CTE, one statement per call): two statements,
    each with its batch as one JSON_TABLE.
    """
    name = 'mysql' if dialect.name == 'mariadb' else dialect.name
    quote = dialect.identifier_preparer.quote
    advance_set = ', '.join(
        ['%s = v.%s' % (column, column) for column in _ADVANCE_COLUMNS[2:]]
        + ['updated_at = %s'])
    execution_columns = ', '.join(quote(column)
                                  for column in NewExecution._fields)
    # A PolicyAdvance: the policy's id and the due time it was claimed at
    # (typed as next_execution_time), then the values it gets.
    advance_fields = _json_columns(
        dialect, name, _POLICY,
        ('id', 'next_execution_time') + _ADVANCE_COLUMNS[2:],
        _ADVANCE_COLUMNS)
    execution_fields = _json_columns(dialect, name, _EXECUTION,
                                     NewExecution._fields)
    if name == 'postgresql':
        return ((
            'WITH v AS (SELECT ' + advance_fields + ' '
            'FROM jsonb_array_elements(CAST(%s AS jsonb)) AS e), '
            'advanced AS (UPDATE backup_policy AS p SET ' + advance_set +
            ' FROM v WHERE p.id = v.id AND p.next_execution_time = v.due '
            'RETURNING 1), '
            'inserted AS (INSERT INTO backup_execution (' +
            execution_columns + ') SELECT ' + execution_fields + ' '
            'FROM jsonb_array_elements(CAST(%s AS jsonb)) AS e ' +
            _ONCE_PER_SLOT[name] + ' RETURNING 1) '
            'SELECT (SELECT count(*) FROM advanced), '
            '(SELECT count(*) FROM inserted)'),)
    return (
        'UPDATE backup_policy AS p JOIN JSON_TABLE(' + _MYSQL_JSON +
        ', \'$[*]\' COLUMNS (' +
        advance_fields + ')) AS v '
        'ON p.id = v.id AND p.next_execution_time = v.due '
        'SET ' + ', '.join('p.' + item for item in advance_set.split(', ')),
        'INSERT INTO backup_execution (' + execution_columns + ') '
        'SELECT ' + ', '.join('v.' + quote(column)
                              for column in NewExecution._fields) + ' '
        'FROM JSON_TABLE(' + _MYSQL_JSON + ', \'$[*]\' COLUMNS (' +
        execution_fields +
        ')) AS v ON DUPLICATE KEY UPDATE id = backup_execution.id')


@context_manager.writer
def record_tick(context, advances, executions, now):
    """Compare-and-set the claimed policies and insert their executions.

    ``advances`` are :class:`PolicyAdvance` rows (see
    :func:`advance_policies`), ``executions`` :class:`NewExecution` rows
    (see :func:`insert_executions`).  Returns ``(matched, inserted)``,
    inserted being -1 where the driver cannot tell.  On PostgreSQL this is
    one statement, on MariaDB/MySQL two, whatever the size of the batch:
    each batch travels as one JSON parameter, so neither the driver nor
    the server handles a placeholder per value.  SQLite runs the two
    statements above.
    """
    connection = context.session.connection()
    dialect = connection.dialect
    if dialect.name == 'sqlite' or not advances:
        return (advance_policies(context, advances, now),
                insert_executions(context, executions))
    statements = _tick_sql(dialect)
    stamp = _driver_value('postgresql', now)
    if len(statements) == 1:
        matched, inserted = connection.exec_driver_sql(statements[0], (
            _json_text(advances), stamp, _json_text(executions))).one()
        return matched, inserted
    matched = connection.exec_driver_sql(
        statements[0], (_json_text(advances), stamp)).rowcount
    inserted = 0
    if executions:
        inserted = connection.exec_driver_sql(
            statements[1], (_json_text(executions),)).rowcount
    return matched, inserted


# A slot that already has its execution keeps it: the policy's next time
# was set back to a slot that ran (a resume or update on a host whose
# clock is behind the engine's), and running it again would break "once";
# failing the insert would fail the whole batch at every tick.  Only the
# (policy_id, scheduled_at) key is ignored, never another error.
_ONCE_PER_SLOT = {
    'postgresql': 'ON CONFLICT (policy_id, scheduled_at) DO NOTHING',
    'sqlite': 'ON CONFLICT (policy_id, scheduled_at) DO NOTHING',
    'mysql': 'ON DUPLICATE KEY UPDATE id = id',
}


# Statements that lock executions a worker may also hold retry a deadlock
# (the transaction is taken again, never part of it), and never wait for a
# row lock: see "Row locks" in doc/source/contributor/exactly-once.rst.
_retry_deadlock = db_api.retry_on_deadlock


@_retry_deadlock
@context_manager.writer
def release_uncast_executions(context, execution_ids, dispatched_at):
    """DISPATCHED -> PENDING for executions whose cast failed.

    Only those still DISPATCHED with the ``dispatched_at`` stamped when
    they were handed over: one a worker claimed after all (the cast may
    have reached the broker before it failed), or a sweep took meanwhile,
    is left alone, and so is one locked right now (``SKIP LOCKED``).  They
    lose ``dispatched_at``, so the sweep casts them again
    ``dispatch_timeout`` after they were created.  Returns how many.
    """
    if not execution_ids:
        return 0
    ids = [row.id for row in _lock_skipping_locked(context, execution_ids, (
        _EXECUTION.c.status == enums.ExecutionStatus.DISPATCHED,
        _EXECUTION.c.dispatched_at == dispatched_at))]
    if ids:
        context.session.execute(
            sa.update(_EXECUTION).where(_EXECUTION.c.id.in_(ids))
            .values(status=enums.ExecutionStatus.PENDING,
                    dispatched_at=None))
    return len(ids)


def _lock_skipping_locked(context, execution_ids, conditions,
                          columns=(_EXECUTION.c.id,)):
    """Lock the given executions that match ``conditions``; their rows.

    By primary key, in key order, skipping rows another transaction
    holds: this never waits for a lock, so it can never be part of a
    deadlock.  The conditions are checked again on the locked row, so a
    row that changed since the caller read it is not taken.  Returns
    ``columns`` of the rows locked.
    """
    query = (sa.select(*columns)
             .where(_EXECUTION.c.id.in_(sorted(execution_ids)), *conditions)
             .order_by(_EXECUTION.c.id)
             .with_for_update(skip_locked=True))
    return context.session.execute(query).all()


@context_manager.reader
def get_earliest_due_time(context):
    """The smallest next_execution_time of an enabled policy, or None."""
    query = (sa.select(_POLICY.c.next_execution_time)
             .where(_POLICY.c.enabled == sa.true())
             .order_by(_POLICY.c.next_execution_time)
             .limit(1))
    return context.session.execute(query).scalar()


# The engine sweeps.

# The status reason of an execution the sweep hands to another worker.
RESUMING_REASON = 'worker lease expired; resuming'


def _waiting(now, stale_before):
    """PENDING or DISPATCHED, and no worker claimed it in time."""
    last_cast = sa.func.coalesce(_EXECUTION.c.dispatched_at,
                                 _EXECUTION.c.created_at)
    return (_EXECUTION.c.status.in_(enums.ExecutionStatus.WAITING),
            sa.or_(sa.and_(_EXECUTION.c.next_attempt_at.is_(None),
                           last_cast <= stale_before),
                   _EXECUTION.c.next_attempt_at <= now))


@_retry_deadlock
@context_manager.writer
def claim_waiting_executions(context, now, stale_before, limit,
                             limits=None):
    """Take up to ``limit`` executions no worker claimed, to cast again.

    An execution qualifies when it is PENDING or DISPATCHED and either its
    ``next_attempt_at`` has come, or it has none and was created (or last
    cast) before ``stale_before``.  A worker's claim makes it RUNNING, so
    an execution a worker has claimed is never taken.

    The oldest candidates are read without a lock; then only those are
    locked, by primary key and ``SKIP LOCKED`` (:func:`_lock_skipping_locked`,
    which checks the conditions again), and stamped DISPATCHED now, so
    that no other engine's sweep casts them too.  Locking the candidates
    with the read itself would lock every waiting row the read scans and
    sorts -- all of a burst's -- and hold them until the commit.  Returns
    the ids taken.

    Under active ``limits`` (``db_capacity.Limits``) the candidates are
    those with room to start, round-robin across projects and in slot
    order within one (``db_capacity.fair_candidates``); else the oldest.
    """
    if limits is not None and limits.active:
        candidates = db_capacity.fair_candidates(
            context, _waiting(now, stale_before), limits, now, limit)
    else:
        candidates = list(context.session.execute(
            sa.select(_EXECUTION.c.id).where(*_waiting(now, stale_before))
            .order_by(_EXECUTION.c.created_at).limit(limit)).scalars())
    if not candidates:
        return []
    ids = [row.id for row in _lock_skipping_locked(
        context, candidates, _waiting(now, stale_before))]
    if ids:
        context.session.execute(
            sa.update(_EXECUTION)
            .where(_EXECUTION.c.id.in_(ids))
            .values(status=enums.ExecutionStatus.DISPATCHED,
                    dispatched_at=now, next_attempt_at=None))
    return ids


@_retry_deadlock
@context_manager.writer
def reclaim_expired_leases(context, now, limit):
    """Make RUNNING executions whose lease expired claimable again.

    Their worker stopped renewing the lease (it died, or lost the
    database): they go back to DISPATCHED without an owner, keeping what
    was recorded (``backup_id`` above all), and are cast again so that
    another worker resumes them.  A late renewal by the old owner no
    longer matches its row.  Read, then locked, as
    :func:`claim_waiting_executions` does.  Returns ``[(id, old_owner)]``.
    """
    expired = (_EXECUTION.c.status == enums.ExecutionStatus.RUNNING,
               _EXECUTION.c.lease_expires_at < now)
    candidates = list(context.session.execute(
        sa.select(_EXECUTION.c.id).where(*expired)
        .order_by(_EXECUTION.c.lease_expires_at).limit(limit)).scalars())
    if not candidates:
        return []
    rows = _lock_skipping_locked(context, candidates, expired,
                                 (_EXECUTION.c.id, _EXECUTION.c.owner))
    if rows:
        context.session.execute(
            sa.update(_EXECUTION)
            .where(_EXECUTION.c.id.in_([row.id for row in rows]))
            .values(status=enums.ExecutionStatus.DISPATCHED, owner=None,
                    lease_expires_at=None, dispatched_at=now,
                    status_reason=RESUMING_REASON))
    return [(row.id, row.owner) for row in rows]


# The status reason of an execution no worker claimed before its start
# window ended.
UNCLAIMED_EXPIRED_REASON = ('start window ended at %s before any worker '
                            'claimed it')


def _never_started(now):
    """Waiting, never claimed, and past its start window."""
    return (_EXECUTION.c.status.in_(enums.ExecutionStatus.WAITING),
            _EXECUTION.c.attempts == 0,
            _EXECUTION.c.backup_id.is_(None),
            _EXECUTION.c.start_deadline < now)


@_retry_deadlock
@context_manager.writer
def expire_unclaimed_executions(context, now, limit):
    """EXPIRED: waiting executions no worker claimed within their window.

    Only those never claimed (``attempts`` 0): nothing can have been
    created for them.  One a worker claimed before is left to the worker,
    which looks for a backup made under its earlier claim before it
    expires it.  Read, then locked, as :func:`claim_waiting_executions`
    does: a worker's claim of the same row waits for this transaction and
    then finds it EXPIRED, or this finds it RUNNING and leaves it.

    Each EXPIRED is counted on its policy in the same transaction
    (``db_protection.record_outcome``: the failure streak, the pause
    after ``pause_after_failures``, the protection state), as a worker's
    is.  The policies are locked first, in key order, before the
    executions (which are never waited for): the order of the engine's
    tick, which locks policies and then writes their executions, so the
    two cannot deadlock.  Returns the rows expired (their fields as of
    before), each with the ``outcome`` recorded (a
    ``db_protection.Outcome``).
    """
    candidates = context.session.execute(
        sa.select(_EXECUTION.c.id, _EXECUTION.c.policy_id)
        .where(*_never_started(now))
        .order_by(_EXECUTION.c.start_deadline).limit(limit)).all()
    if not candidates:
        return []
    context.session.execute(
        sa.select(_POLICY.c.id)
        .where(_POLICY.c.id.in_(sorted({row.policy_id
                                        for row in candidates})))
        .order_by(_POLICY.c.id).with_for_update()).all()
    rows = _lock_skipping_locked(
        context, [row.id for row in candidates], _never_started(now),
        (_EXECUTION.c.id, _EXECUTION.c.policy_id, _EXECUTION.c.project_id,
         _EXECUTION.c.instance_id, _EXECUTION.c.scheduled_at,
         _EXECUTION.c.trigger, _EXECUTION.c.attempts,
         _EXECUTION.c.start_deadline, _EXECUTION.c.completion_deadline))
    expired = []
    for row in rows:
        reason = UNCLAIMED_EXPIRED_REASON % row.start_deadline.isoformat()
        context.session.execute(
            sa.update(_EXECUTION).where(_EXECUTION.c.id == row.id)
            .values(status=enums.ExecutionStatus.EXPIRED, finished_at=now,
                    next_attempt_at=None, status_reason=reason))
        outcome = db_protection.record_outcome(
            context, row.id, enums.ExecutionStatus.EXPIRED, now,
            fault=reason)
        expired.append(types_.SimpleNamespace(**row._asdict(),
                                              outcome=outcome))
    return expired
