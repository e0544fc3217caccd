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
"""Database access: the only oslo.db enginefacade transaction context.

Nothing outside this module opens a session or a connection.  Functions
that read are decorated ``@context_manager.reader`` and those that write
``@context_manager.writer``; they take a
:class:`~dbaas_scheduler.context.RequestContext` first, whose transaction
they join when one is already open.
"""

import datetime
import os

from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy.engine import url as sa_url

from dbaas_scheduler.db import models
from dbaas_scheduler.db import types
from dbaas_scheduler import enums
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

context_manager = enginefacade.transaction_context()


def configure(conf):
    """Point the transaction context at ``conf.database``.

    Creates the directory of a SQLite database file (the embedded default
    lives under ``state_path``, which may not exist yet).
    """
    options = dict(conf.database.items())
    _ensure_sqlite_directory(options.get('connection'))
    context_manager.configure(**options)
    context_manager.append_on_engine_create(_tune_sqlite)


# Seconds a SQLite writer waits for another one to finish.
SQLITE_BUSY_TIMEOUT = 30


def _tune_sqlite(engine):
    """Let the threads of the all-in-one process share one SQLite file.

    WAL lets readers run beside a writer; every transaction begins with
    BEGIN IMMEDIATE, so that a transaction that reads and then writes
    waits for the write lock up front (busy timeout) instead of failing
    with "database is locked" when it tries to upgrade its lock.
    """
    if engine.dialect.name != 'sqlite':
        return

    def connect(dbapi_connection, record):
        dbapi_connection.execute('PRAGMA busy_timeout = %d'
                                 % (SQLITE_BUSY_TIMEOUT * 1000))
        dbapi_connection.execute('PRAGMA journal_mode = WAL')

    def begin(connection):
        # Runs before oslo.db's own listener, which then sees the flag and
        # emits no plain BEGIN.
        if 'in_transaction' not in connection.info:
            connection.exec_driver_sql('BEGIN IMMEDIATE')
            connection.info['in_transaction'] = True

    sa.event.listen(engine, 'connect', connect)
    sa.event.listen(engine, 'begin', begin, insert=True)


def _ensure_sqlite_directory(connection):
    if not connection:
        return
    url = sa_url.make_url(connection)
    if url.get_backend_name() == 'sqlite' and url.database not in (
            None, '', ':memory:'):
        os.makedirs(os.path.dirname(os.path.abspath(url.database)),
                    exist_ok=True)


def get_engine():
    """The writer engine (for migrations and the status checks)."""
    return context_manager.writer.get_engine()


def writer_transaction(context):
    """One writer transaction around several of the functions below.

    ``with db_api.writer_transaction(context): ...`` -- the decorated
    functions called inside join it, and it commits when the block ends
    (or rolls back if it raises).
    """
    return context_manager.writer.using(context)


@context_manager.writer
def create_policy(context, values):
    """Insert a backup policy; ``values`` are its column values."""
    policy = models.BackupPolicy(**values)
    context.session.add(policy)
    context.session.flush()
    return policy


@context_manager.reader
def get_policy(context, policy_id):
    policy = context.session.get(models.BackupPolicy, policy_id)
    if policy is None:
        raise exception.PolicyNotFound(policy_id=policy_id)
    return policy


@context_manager.writer
def create_execution(context, values):
    """Insert one execution; a second one for the same slot is refused."""
    execution = models.BackupExecution(**values)
    context.session.add(execution)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.ExecutionExists(
            policy_id=values.get('policy_id'),
            scheduled_at=values.get('scheduled_at'))
    return execution


@context_manager.reader
def get_execution(context, execution_id):
    execution = context.session.get(models.BackupExecution, execution_id)
    if execution is None:
        raise exception.ExecutionNotFound(execution_id=execution_id)
    return execution


@context_manager.writer
def update_policy(context, policy_id, values):
    """Change a policy's columns; returns the policy."""
    policy = context.session.get(models.BackupPolicy, policy_id)
    if policy is None:
        raise exception.PolicyNotFound(policy_id=policy_id)
    for name, value in values.items():
        setattr(policy, name, value)
    context.session.flush()
    return policy


@context_manager.writer
def delete_policy(context, policy_id):
    """Delete a policy; its executions stay, as history."""
    policy = context.session.get(models.BackupPolicy, policy_id)
    if policy is None:
        raise exception.PolicyNotFound(policy_id=policy_id)
    context.session.delete(policy)


@context_manager.reader
def list_policies(context, project_id=None, instance_id=None):
    """Policies (of one project, of one instance), by name.

    The filters are SQL conditions, served by the indexes on
    ``project_id`` and ``instance_id``: deleting an instance's policies
    must not read every policy of the cloud.
    """
    query = sa.select(models.BackupPolicy)
    if project_id is not None:
        query = query.where(models.BackupPolicy.project_id == project_id)
    if instance_id is not None:
        query = query.where(models.BackupPolicy.instance_id == instance_id)
    query = query.order_by(models.BackupPolicy.name, models.BackupPolicy.id)
    return list(context.session.scalars(query))


@context_manager.writer
def record_manual_run(context, values):
    """Insert a manual execution and make it its policy's last one.

    One transaction, as the engine's tick does for scheduled runs, and in
    the tick's order (the policy row, then the execution), so that the
    two cannot deadlock.  A policy deleted meanwhile raises
    PolicyNotFound and inserts nothing.
    """
    values = dict(values)
    values.setdefault('id', uuidutils.generate_uuid())
    table = models.BackupPolicy.__table__
    matched = context.session.execute(
        sa.update(table).where(table.c.id == values['policy_id'])
        .values(last_execution_id=values['id'],
                updated_at=timeutils.utcnow(True))).rowcount
    if not matched:
        raise exception.PolicyNotFound(policy_id=values['policy_id'])
    return create_execution(context, values)


@context_manager.reader
def list_executions(context, policy_id=None, limit=None):
    """Executions (of one policy), oldest slot first; the newest ``limit``."""
    query = sa.select(models.BackupExecution)
    if policy_id is not None:
        query = query.where(models.BackupExecution.policy_id == policy_id)
    if limit:
        newest = query.order_by(models.BackupExecution.scheduled_at.desc(),
                                models.BackupExecution.id.desc()).limit(limit)
        return list(reversed(list(context.session.scalars(newest))))
    return list(context.session.scalars(
        query.order_by(models.BackupExecution.scheduled_at)))


# The engine tick.

_POLICY = models.BackupPolicy.__table__
_EXECUTION = models.BackupExecution.__table__
_SERVICE = models.Service.__table__

# What the tick needs to know about a due policy.
_DUE_POLICY_COLUMNS = (
    'id', 'project_id', 'instance_id', 'schedule_type', 'schedule',
    'resolved_schedule', 'timezone', 'start_at', 'end_at', 'remaining_runs',
    'catchup_window', 'next_execution_time')

# The values the compare-and-set of one tick writes, per policy, in order.
POLICY_ADVANCE_COLUMNS = ('id', 'due', 'next_execution_time', 'remaining_runs',
                          'enabled', 'paused_reason', 'last_execution_id')


@context_manager.writer
def claim_due_policies(context, now, limit):
    """Lock up to ``limit`` enabled policies due at ``now``, earliest first.

    ``FOR UPDATE SKIP LOCKED`` on PostgreSQL and MariaDB/MySQL: rows another
    engine has claimed are skipped, not waited for, so engines share a
    burst without blocking each other.  SQLite has no row locks (one engine
    only); the compare-and-set in :func:`advance_policies` still fences it.
    """
    query = (sa.select(*[_POLICY.c[name] for name in _DUE_POLICY_COLUMNS])
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
         for column in POLICY_ADVANCE_COLUMNS[2:]]
        + ['%supdated_at = {p}' % target])


_V_COLUMNS = ', '.join(POLICY_ADVANCE_COLUMNS)
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
                               in enumerate(POLICY_ADVANCE_COLUMNS, 1))
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
                              for c in POLICY_ADVANCE_COLUMNS),
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

    ``advances`` are tuples in the order of :data:`POLICY_ADVANCE_COLUMNS`.
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


# The columns of an execution the tick inserts, in order.
EXECUTION_INSERT_COLUMNS = (
    'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
    'trigger', 'status', 'status_reason', 'attempts', 'created_at',
    'finished_at')


@context_manager.writer
def insert_executions(context, executions):
    """Insert executions in one multi-row INSERT.

    ``executions`` are tuples in the order of
    :data:`EXECUTION_INSERT_COLUMNS`.  SQL text for the same reason as
    :func:`advance_policies`: SQLAlchemy's bind processing of 11,000 values
    per batch costs more than the insert itself.
    """
    if not executions:
        return
    connection = context.session.connection()
    name, placeholder = _driver_dialect(connection)
    row = '(%s)' % ', '.join([placeholder] * len(EXECUTION_INSERT_COLUMNS))
    quote = connection.dialect.identifier_preparer.quote
    sql = 'INSERT INTO backup_execution (%s) VALUES %s' % (
        ', '.join(quote(column) for column in EXECUTION_INSERT_COLUMNS),
        ', '.join([row] * len(executions)))
    connection.exec_driver_sql(sql, tuple(
        _driver_value(name, value)
        for execution in executions for value in execution))


@context_manager.writer
def mark_executions_dispatched(context, execution_ids, cast_at):
    """PENDING -> DISPATCHED for executions that were cast at ``cast_at``.

    A worker may already have claimed one (it can be faster than this
    update, and in the all-in-one process often is): its status stays
    what the worker made it, but it still gets its ``dispatched_at``, so
    that every execution a worker took shows when it was handed over.
    ``cast_at`` is taken before the cast, and so is never later than the
    worker's ``started_at``.  An execution already stamped (cast again by
    a sweep meanwhile) is left alone.
    """
    if not execution_ids:
        return 0
    status = sa.case(
        (_EXECUTION.c.status == enums.ExecutionStatus.PENDING,
         enums.ExecutionStatus.DISPATCHED),
        else_=_EXECUTION.c.status)
    statement = (
        sa.update(_EXECUTION)
        .where(_EXECUTION.c.id.in_(execution_ids),
               _EXECUTION.c.dispatched_at.is_(None))
        .values(status=status, dispatched_at=cast_at))
    return context.session.execute(statement).rowcount


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


@context_manager.writer
def claim_waiting_executions(context, now, stale_before, limit):
    """Take executions no worker claimed in time, to cast them again.

    An execution qualifies when it is PENDING or DISPATCHED and either its
    ``next_attempt_at`` has come, or it has none and was created (or last
    cast) before ``stale_before``.  The rows are locked with SKIP LOCKED
    and stamped DISPATCHED now, so another engine's sweep does not cast
    them too.  Returns their ids.
    """
    last_cast = sa.func.coalesce(_EXECUTION.c.dispatched_at,
                                 _EXECUTION.c.created_at)
    query = (
        sa.select(_EXECUTION.c.id)
        .where(_EXECUTION.c.status.in_(enums.ExecutionStatus.WAITING),
               sa.or_(sa.and_(_EXECUTION.c.next_attempt_at.is_(None),
                              last_cast <= stale_before),
                      _EXECUTION.c.next_attempt_at <= now))
        .order_by(_EXECUTION.c.created_at)
        .limit(limit)
        .with_for_update(skip_locked=True))
    ids = list(context.session.execute(query).scalars())
    if ids:
        context.session.execute(
            sa.update(_EXECUTION)
            .where(_EXECUTION.c.id.in_(ids))
            .values(status=enums.ExecutionStatus.DISPATCHED,
                    dispatched_at=now, next_attempt_at=None))
    return ids


@context_manager.writer
def reclaim_expired_leases(context, now, limit):
    """Make RUNNING executions whose lease expired claimable again.

    Their worker stopped renewing the lease (it died, or lost the
    database): they go back to DISPATCHED without an owner, keeping what
    was recorded (``backup_id`` above all), and are cast again so that
    another worker resumes them.  A late renewal by the old owner no
    longer matches its row.  Returns ``[(id, old_owner)]``.
    """
    query = (
        sa.select(_EXECUTION.c.id, _EXECUTION.c.owner)
        .where(_EXECUTION.c.status == enums.ExecutionStatus.RUNNING,
               _EXECUTION.c.lease_expires_at < now)
        .order_by(_EXECUTION.c.lease_expires_at)
        .limit(limit)
        .with_for_update(skip_locked=True))
    rows = context.session.execute(query).all()
    if rows:
        context.session.execute(
            sa.update(_EXECUTION)
            .where(_EXECUTION.c.id.in_([row.id for row in rows]))
            .values(status=enums.ExecutionStatus.DISPATCHED, owner=None,
                    lease_expires_at=None, dispatched_at=now,
                    status_reason=RESUMING_REASON))
    return [(row.id, row.owner) for row in rows]


@context_manager.writer
def disable_policy(context, policy_id, reason):
    """Stop scheduling a policy, saying why (e.g. its instance is gone)."""
    context.session.execute(
        sa.update(_POLICY).where(_POLICY.c.id == policy_id)
        .values(enabled=False, next_execution_time=None,
                paused_reason=reason, updated_at=timeutils.utcnow(True)))
