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

import os

from oslo_db import api as oslo_db_api
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy.engine import url as sa_url

from dbaas_scheduler.db import models
from dbaas_scheduler import exception


context_manager = enginefacade.transaction_context()

# A transaction that lost a deadlock is taken again, whole (never part of
# it): on one server, two transactions locking rows in another order; on a
# Galera cluster, also a certification conflict at commit with a write
# made on another node (error 1213 too).  Only for transactions whose
# statements are conditional, so that a retry decides again on what the
# database holds then: claims, fenced writes.  Outside the transaction
# (oslo.db refuses a retry inside one).
retry_on_deadlock = oslo_db_api.wrap_db_retry(max_retries=5,
                                              retry_on_deadlock=True)

Policy = models.BackupPolicy
Execution = models.BackupExecution


def configure(conf):
    """Point the transaction context at ``conf.database``.

    Creates the directory of a SQLite database file (the embedded default
    lives under ``state_path``, which may not exist yet).
    """
    options = dict(conf.database.items())
    ensure_sqlite_directory(options.get('connection'))
    context_manager.configure(**options)
    context_manager.append_on_engine_create(_tune_sqlite)
    context_manager.append_on_engine_create(use_read_committed)
    context_manager.append_on_engine_create(_tune_mysql)


def use_read_committed(engine):
    """Run every transaction on MariaDB/MySQL at READ COMMITTED.

    PostgreSQL's default, and what every statement here is written for.
    InnoDB's default, REPEATABLE READ, adds next-key and gap locks to
    locking reads, UPDATEs and DELETEs, and turns a record lock into a gap
    lock when a page splits; inserts then wait on those gaps, and engines
    that insert executions at the same time deadlocked on them (see "Row
    locks" in doc/source/contributor/exactly-once.rst).  At READ COMMITTED
    InnoDB locks only the rows a statement changes or returns.  Set once
    per connection; an engine that already has connections is emptied so
    that all of them get it.
    """
    if engine.dialect.name not in ('mysql', 'mariadb'):
        return
    if sa.event.contains(engine, 'connect', _set_read_committed):
        return
    sa.event.listen(engine, 'connect', _set_read_committed)
    engine.dispose()


def _set_read_committed(dbapi_connection, record):
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute('SET SESSION TRANSACTION ISOLATION LEVEL '
                       'READ COMMITTED')
    finally:
        cursor.close()


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

    if sa.event.contains(engine, 'begin', _sqlite_begin_immediate):
        return

    sa.event.listen(engine, 'connect', _sqlite_connect)
    sa.event.listen(engine, 'begin', _sqlite_begin_immediate)
    sa.event.listen(engine, 'commit', _sqlite_end)
    sa.event.listen(engine, 'rollback', _sqlite_end)
    # oslo.db's engines have a 'begin' listener of their own that emits a
    # plain (deferred) BEGIN, and it runs before ours (SQLAlchemy ignores
    # ``insert=True`` for engine events): ours then finds the transaction
    # begun and does nothing.  A deferred transaction that read, then
    # wrote, failed at once with "database is locked" whenever another
    # connection had written in between (500s of the all-in-one API under
    # load).  So every BEGIN sent on this engine, whoever sends it, takes
    # the write lock up front: no need to know oslo.db's listener.
    sa.event.listen(engine, 'before_cursor_execute',
                    _sqlite_begin_to_immediate, retval=True)


def _sqlite_connect(dbapi_connection, record):
    # pysqlite must not begin transactions itself (it would begin them
    # deferred, before the first write): the 'begin' event does.  oslo.db
    # does the same on its engines; an engine made without it (alembic's
    # command line) needs it here.
    dbapi_connection.isolation_level = None
    dbapi_connection.execute('PRAGMA busy_timeout = %d'
                             % (SQLITE_BUSY_TIMEOUT * 1000))
    # A file database only; an in-memory one stays 'memory'.
    dbapi_connection.execute('PRAGMA journal_mode = WAL')


def _sqlite_begin_immediate(connection):
    # The mark oslo.db's listener sets and reads: whichever runs first
    # begins, the other sees the mark.  Were it renamed, both would begin
    # and every transaction would fail loudly ("cannot start a transaction
    # within a transaction"), never silently deferred.
    if 'in_transaction' not in connection.info:
        connection.exec_driver_sql('BEGIN IMMEDIATE')
        connection.info['in_transaction'] = True


_SQLITE_DEFERRED_BEGINS = frozenset(
    ['BEGIN', 'BEGIN TRANSACTION', 'BEGIN DEFERRED',
     'BEGIN DEFERRED TRANSACTION'])


def _sqlite_begin_to_immediate(connection, cursor, statement, parameters,
                               context, executemany):
    if statement.strip().upper() in _SQLITE_DEFERRED_BEGINS:
        statement = 'BEGIN IMMEDIATE'
    return statement, parameters


def _sqlite_end(connection):
    connection.info.pop('in_transaction', None)


def _tune_mysql(engine):
    """Talk utf8mb4 to MariaDB/MySQL, the character set of the tables.

    oslo.db asks for ``charset=utf8`` (utf8mb3) unless the connection URL
    names one, and over such a connection MariaDB refuses any character
    outside the Basic Multilingual Plane (an emoji in a name) with
    "Incorrect string value", and a filter holding one with "Illegal mix
    of collations".  The tables are utf8mb4 (the first revision), so the
    connection is too, whatever the URL says.
    """
    if engine.dialect.name not in ('mysql', 'mariadb'):
        return

    def connect(dbapi_connection, record):
        dbapi_connection.set_character_set('utf8mb4')

    sa.event.listen(engine, 'connect', connect)
    # oslo.db's test connection, made before this hook ran, waits in the
    # pool with the old character set: close it.
    engine.dispose()


def ensure_sqlite_directory(connection):
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


# What a database that cannot be reached raises.  oslo.db translates most
# such errors to DBConnectionError, but not all: PostgreSQL's "server
# closed the connection unexpectedly" while connecting comes through as
# SQLAlchemy's OperationalError.
UNREACHABLE = (db_exc.DBConnectionError, sa.exc.OperationalError)


@context_manager.reader
def ping(context):
    """Raise ``DBConnectionError`` if the database does not answer."""
    context.session.execute(sa.select(1))


@context_manager.writer
def create_policy(context, values):
    """Insert a backup policy; ``values`` are its column values.

    A name another policy of the project has raises PolicyNameExists.
    """
    _check_name_free(context, values['project_id'], values['name'])
    policy = Policy(**values)
    context.session.add(policy)
    _flush_named(context, values['name'])
    return policy


@context_manager.reader
def policy_named(context, project_id, name):
    """The id of the project's policy with this name, or None."""
    return context.session.execute(
        sa.select(Policy.id).where(Policy.project_id == project_id,
                                   Policy.name == name)).scalar()


@context_manager.reader
def list_policy_names(context):
    """``(id, project_id, name, created_at)`` of every policy."""
    return context.session.execute(sa.select(
        Policy.id, Policy.project_id, Policy.name, Policy.created_at)).all()


def _check_name_free(context, project_id, name, policy_id=None):
    existing = policy_named(context, project_id, name)
    if existing is not None and existing != policy_id:
        raise exception.PolicyNameExists(name=name, policy_id=existing)


def _flush_named(context, name):
    # The unique index decides a race between two requests for one name.
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry as exc:
        if 'name' not in (exc.columns or ()):
            raise
        raise exception.PolicyNameExists(name=name,
                                         policy_id='made at the same time')


@context_manager.reader
def get_policy(context, policy_id):
    policy = context.session.get(Policy, policy_id)
    if policy is None:
        raise exception.PolicyNotFound(policy_id=policy_id)
    return policy


@context_manager.writer
def lock_policy(context, policy_id):
    """The policy as it is now, locked until the transaction ends.

    ``SELECT ... FOR UPDATE`` on MariaDB and PostgreSQL; on SQLite the
    writer transaction began with ``BEGIN IMMEDIATE`` and holds the
    database's write lock already.  Whatever the session read before is
    read again (``populate_existing``): a change of a policy decides from
    this row, never from an earlier read.  Call it in
    :func:`writer_transaction`.
    """
    policy = context.session.execute(
        sa.select(Policy).where(Policy.id == policy_id).with_for_update()
        .execution_options(populate_existing=True)).scalar_one_or_none()
    if policy is None:
        raise exception.PolicyNotFound(policy_id=policy_id)
    return policy


@context_manager.writer
def create_execution(context, values):
    """Insert one execution; a second one for the same slot is refused."""
    execution = Execution(**values)
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
    execution = context.session.get(Execution, execution_id)
    if execution is None:
        raise exception.ExecutionNotFound(execution_id=execution_id)
    return execution


@context_manager.writer
def update_policy(context, policy_id, values):
    """Change a policy's columns; returns the policy as it is now.

    The row is locked first (:func:`lock_policy`), so that a policy
    deleted meanwhile raises PolicyNotFound rather than matching no row.
    """
    policy = lock_policy(context, policy_id)
    if 'name' in values and values['name'] != policy.name:
        _check_name_free(context, policy.project_id, values['name'],
                         policy_id)
    for name, value in values.items():
        setattr(policy, name, value)
    _flush_named(context, policy.name)
    return policy


@context_manager.writer
def delete_policy(context, policy_id):
    """Delete a policy; its executions stay, as history.

    Returns the policy as it was when deleted (its ``trust_id`` is the
    trust to delete); one deleted meanwhile raises PolicyNotFound.
    """
    policy = lock_policy(context, policy_id)
    table = Policy.__table__
    deleted = context.session.execute(
        sa.delete(table).where(table.c.id == policy_id)).rowcount
    if not deleted:
        raise exception.PolicyNotFound(policy_id=policy_id)
    context.session.expunge(policy)
    return policy


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
    table = Policy.__table__
    matched = context.session.execute(
        sa.update(table).where(table.c.id == values['policy_id'])
        .values(last_execution_id=values['id'],
                updated_at=timeutils.utcnow(True))).rowcount
    if not matched:
        raise exception.PolicyNotFound(policy_id=values['policy_id'])
    # The row is locked now: the execution is of the instance the policy
    # has now, not of the one an earlier read saw.
    values.update(context.session.execute(
        sa.select(table.c.project_id, table.c.instance_id)
        .where(table.c.id == values['policy_id'])).one()._asdict())
    return create_execution(context, values)


@context_manager.writer
def disable_policy(context, policy_id, reason):
    """Stop scheduling a policy, saying why (e.g. its instance is gone)."""
    context.session.execute(
        sa.update(Policy.__table__)
        .where(Policy.id == policy_id)
        .values(enabled=False, next_execution_time=None,
                paused_reason=reason, updated_at=timeutils.utcnow(True)))


# Lists, a page at a time.
#
# Pages are keyset-paginated on a stable order -- policies by (created_at,
# id), executions newest first by (scheduled_at, id) -- so a marker keeps
# working while rows are added.  Filters are SQL conditions, served by the
# indexes: deleting an instance's policies must not read every policy.

def _after_marker(session, model, marker, columns, descending,
                  project_id=None):
    row = session.get(model, marker)
    # Another project's item is no more a marker than an unknown id: its
    # existence and its place in the order are not this caller's to learn.
    if row is None or (project_id is not None
                       and row.project_id != project_id):
        raise exception.Invalid(
            reason='marker %s is not an item of this list.' % marker)
    values = tuple(getattr(row, column.key) for column in columns)
    key = sa.tuple_(*columns)
    literal = sa.tuple_(*[sa.literal(value, column.type)
                          for value, column in zip(values, columns)])
    return key < literal if descending else key > literal


@context_manager.reader
def list_policies(context, project_id=None, instance_id=None, enabled=None,
                  limit=None, marker=None, name=None, protection=None):
    """Policies (of one project), oldest first."""
    query = sa.select(Policy)
    if protection is not None:
        query = query.where(Policy.protection == protection)
    if project_id is not None:
        query = query.where(Policy.project_id == project_id)
    if instance_id is not None:
        query = query.where(Policy.instance_id == instance_id)
    if name is not None:
        query = query.where(Policy.name == name)
    if enabled is not None:
        query = query.where(Policy.enabled == sa.true() if enabled
                            else Policy.enabled == sa.false())
    columns = (Policy.created_at, Policy.id)
    if marker is not None:
        query = query.where(_after_marker(context.session, Policy, marker,
                                          columns, False, project_id))
    query = query.order_by(*columns)
    if limit:
        query = query.limit(limit)
    return list(context.session.scalars(query))


@context_manager.reader
def list_executions(context, project_id=None, policy_id=None,
                    instance_id=None, status=None, since=None, limit=None,
                    marker=None, held=None):
    """Executions (of one project), newest slot first."""
    query = sa.select(Execution)
    if held is not None:
        query = query.where(Execution.held_at.is_not(None) if held
                            else Execution.held_at.is_(None))
    for column, value in ((Execution.project_id, project_id),
                          (Execution.policy_id, policy_id),
                          (Execution.instance_id, instance_id),
                          (Execution.status, status)):
        if value is not None:
            query = query.where(column == value)
    if since is not None:
        query = query.where(Execution.scheduled_at >= since)
    columns = (Execution.scheduled_at, Execution.id)
    if marker is not None:
        query = query.where(_after_marker(context.session, Execution,
                                          marker, columns, True, project_id))
    query = query.order_by(*[column.desc() for column in columns])
    if limit:
        query = query.limit(limit)
    return list(context.session.scalars(query))
