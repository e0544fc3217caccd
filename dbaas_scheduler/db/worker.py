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

Each claim writes a new fencing token, ``claim_id``, and every change a
worker makes to an execution afterwards -- its backup id, a lease renewal,
a release, its final state -- is conditional on that token and on status
RUNNING.  A claim that was superseded (the lease expired and another
worker, or another thread of the same worker, claimed the execution) can
no longer record anything, and its holder learns so at its next write.
"""

import datetime
import types
import typing

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import capacity as db_capacity
from dbaas_scheduler.db import models
from dbaas_scheduler.db import protection as db_protection
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler import enums

_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__
_SERVICE = models.Service.__table__

_RUNNING = enums.ExecutionStatus.RUNNING

# The status reason of an execution taken over from a worker found dead.
TAKEN_OVER_REASON = 'taken over from a worker that stopped'


def _claim_values(owner, claim_id, lease, now):
    return dict(status=_RUNNING, owner=owner, claim_id=claim_id,
                lease_expires_at=lease, attempts=_EXECUTION.c.attempts + 1,
                next_attempt_at=None,
                started_at=sa.func.coalesce(_EXECUTION.c.started_at, now))


@db_api.retry_on_deadlock
@context_manager.writer
def claim_executions(context, execution_ids, owner, claim_id, now,
                     lease_seconds, limits=None):
    """Claim executions for ``owner`` with token ``claim_id``.

    Returns the ids claimed.  One conditional UPDATE for the whole list:
    an execution is claimable if it is PENDING or DISPATCHED (and its
    ``next_attempt_at``, if any, has come), or RUNNING with an expired
    lease (its worker died).  Anything else -- claimed by another worker,
    finished, a duplicate message -- is not touched and not returned.
    ``claim_id`` must be new (a UUID): the rows that carry it afterwards
    are exactly those this call claimed.

    ``limits`` (``db_capacity.Limits``), when active, first admits the
    executions whose project and region are below their limits and
    queues the others, in this transaction (``db_capacity.admit``).
    """
    execution_ids = _claim(context, execution_ids, owner, claim_id, now,
                           lease_seconds, limits)
    if not execution_ids:
        return []
    query = sa.select(_EXECUTION.c.id).where(
        _EXECUTION.c.id.in_(execution_ids),
        _EXECUTION.c.claim_id == claim_id)
    return list(context.session.execute(query).scalars())


class Claimed(typing.NamedTuple):
    """What :func:`claim_and_load` claimed, loaded in its transaction.

    ``ids`` the ids claimed, ``rows`` their ``[(execution, policy or
    None)]`` (as :func:`get_executions_and_policies`), ``overlaps`` as
    :func:`find_overlaps` answers for them.
    """

    ids: list
    rows: list
    overlaps: dict


@db_api.retry_on_deadlock
@context_manager.writer
def claim_and_load(context, execution_ids, owner, claim_id, now,
                   lease_seconds, limits=None):
    """:func:`claim_executions`, and what starting them needs, at once.

    The same conditional UPDATE under the new token ``claim_id``; then,
    in the same transaction, the rows that carry ``claim_id`` -- exactly
    the executions this claim took -- with their policies, and their
    overlaps.  One transaction (one connection check-out and its
    pre-ping, one commit) per message instead of three.  Returns a
    :class:`Claimed`.
    """
    session = context.session
    if session.get_bind().dialect.name == 'postgresql':
        # One statement: the UPDATE returns exactly the rows it claimed.
        execution_ids = _admitted(context, execution_ids, now, limits)
        if not execution_ids:
            return Claimed([], [], {})
        rows = _rows(session.execute(
            _CLAIM_AND_LOAD_POSTGRESQL, _claim_parameters(
                execution_ids, owner, claim_id, now, lease_seconds)))
    else:
        execution_ids = _claim(context, execution_ids, owner, claim_id,
                               now, lease_seconds, limits)
        if not execution_ids:
            return Claimed([], [], {})
        rows = _rows(session.execute(_LOAD_CLAIMED, {
            'ids': list(execution_ids), 'claim_id': claim_id}))
    if not rows:
        return Claimed([], [], {})
    executions = [execution for execution, _ in rows]
    return Claimed([execution.id for execution in executions], rows,
                   find_overlaps(context, executions,
                                 backends=_backends_loaded(rows)))


def _claim_statement(ids):
    """The claim's UPDATE, its values and conditions as bind parameters.

    Built once (a constant statement: SQLAlchemy memoizes its cache key
    and finds its compiled form at once) for ``ids``, the where clause
    that selects the ids offered.
    """
    now = sa.bindparam('now', type_=_EXECUTION.c.started_at.type)
    claimable = sa.and_(
        sa.or_(_EXECUTION.c.status.in_(enums.ExecutionStatus.WAITING),
               sa.and_(_EXECUTION.c.status == _RUNNING,
                       _EXECUTION.c.lease_expires_at < now)),
        sa.or_(_EXECUTION.c.next_attempt_at.is_(None),
               _EXECUTION.c.next_attempt_at <= now))
    values = _claim_values(
        sa.bindparam('owner', type_=_EXECUTION.c.owner.type),
        sa.bindparam('claim_id', type_=_EXECUTION.c.claim_id.type),
        sa.bindparam('lease', type_=_EXECUTION.c.lease_expires_at.type),
        now)
    # Why it waited (queued, resumed) no longer holds.
    values['status_reason'] = sa.case(
        (_EXECUTION.c.status_reason.like('queued:%'), None),
        (_EXECUTION.c.status_reason.like(
            db_scheduling.RESUMING_REASON + '%'), None),
        else_=_EXECUTION.c.status_reason)
    return sa.update(_EXECUTION).where(ids, claimable).values(**values)


# Every dialect: the ids as an expanding IN.
_CLAIM = _claim_statement(
    _EXECUTION.c.id.in_(sa.bindparam('ids', expanding=True)))

# PostgreSQL: the claim and the load of what it claimed (the rows it
# changed, with their policies) in one statement, the ids as one array.
_CLAIMED = _claim_statement(
    _EXECUTION.c.id == sa.any_(sa.bindparam(
        'ids', type_=postgresql.ARRAY(sa.String)))).returning(
    *_EXECUTION.c).cte('claimed')
_CLAIM_AND_LOAD_POSTGRESQL = (
    sa.select(*_CLAIMED.c, *_POLICY.c)
    .select_from(_CLAIMED.outerjoin(
        _POLICY, _POLICY.c.id == _CLAIMED.c.policy_id)))


def _claim_parameters(execution_ids, owner, claim_id, now, lease_seconds):
    return {'ids': list(execution_ids), 'owner': owner,
            'claim_id': claim_id, 'now': now,
            'lease': now + datetime.timedelta(seconds=lease_seconds)}


def _admitted(context, execution_ids, now, limits):
    """The ids offered that may be claimed (all, without active limits)."""
    if execution_ids and limits is not None and limits.active:
        return db_capacity.admit(context, execution_ids, limits, now)
    return execution_ids


def _claim(context, execution_ids, owner, claim_id, now, lease_seconds,
           limits):
    """The claim's UPDATE; the ids it was offered (after the limits)."""
    execution_ids = _admitted(context, execution_ids, now, limits)
    if not execution_ids:
        return []
    context.session.execute(_CLAIM, _claim_parameters(
        execution_ids, owner, claim_id, now, lease_seconds))
    return execution_ids


@db_api.retry_on_deadlock
@context_manager.writer
def take_over_execution(context, execution_id, old_claim_id, owner,
                        claim_id, now, lease_seconds):
    """Claim a RUNNING execution whose worker was found dead.

    Conditional on its claim still being ``old_claim_id`` (None for a
    claim made before claims had tokens): if its worker was not dead after
    all and wrote meanwhile, or someone else took it first, nothing
    changes and False is returned.  A worker that only seemed dead (a
    paused process) learns at its next write that it lost the claim.
    """
    lease = now + datetime.timedelta(seconds=lease_seconds)
    old = (_EXECUTION.c.claim_id.is_(None) if old_claim_id is None
           else _EXECUTION.c.claim_id == old_claim_id)
    values = _claim_values(owner, claim_id, lease, now)
    values['status_reason'] = TAKEN_OVER_REASON
    statement = (sa.update(_EXECUTION)
                 .where(_EXECUTION.c.id == execution_id, old,
                        still_running())
                 .values(**values))
    return context.session.execute(statement).rowcount == 1


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
    return _load(context, _EXECUTION.c.id.in_(execution_ids))


_EXECUTION_KEYS = tuple(column.key for column in _EXECUTION.c)
_POLICY_KEYS = tuple(column.key for column in _POLICY.c)
_SPLIT = len(_EXECUTION_KEYS)


def _load_statement(where):
    return (sa.select(*_EXECUTION.c, *_POLICY.c)
            .select_from(_EXECUTION.outerjoin(
                _POLICY, _POLICY.c.id == _EXECUTION.c.policy_id))
            .where(where))


# What a claim took: the ids offered that carry its claim id.
_LOAD_CLAIMED = _load_statement(sa.and_(
    _EXECUTION.c.id.in_(sa.bindparam('ids', expanding=True)),
    _EXECUTION.c.claim_id == sa.bindparam(
        'claim_id', type_=_EXECUTION.c.claim_id.type)))


def _load(context, where):
    """``[(execution, policy or None)]`` of the executions ``where``."""
    return _rows(context.session.execute(_load_statement(where)))


def _rows(result):
    """``[(execution, policy or None)]`` of rows of executions, policies."""
    namespace = types.SimpleNamespace
    found = []
    for row in result:
        execution = namespace(**dict(zip(_EXECUTION_KEYS, row[:_SPLIT])))
        policy_values = row[_SPLIT:]
        policy = (namespace(**dict(zip(_POLICY_KEYS, policy_values)))
                  if policy_values[0] is not None else None)
        found.append((execution, policy))
    return found


class Blocker(typing.NamedTuple):
    """Another execution of an instance that may be making a backup.

    ``heartbeat_at`` is its owner's last heartbeat (None: no owner, or no
    service row any more).
    """

    id: str
    policy_id: str
    status: str
    owner: typing.Optional[str]
    claim_id: typing.Optional[str]
    backup_id: typing.Optional[str]
    scheduled_at: datetime.datetime
    lease_expires_at: typing.Optional[datetime.datetime]
    heartbeat_at: typing.Optional[datetime.datetime]


def _backends_of(context, policy_ids):
    """``{policy id: backend}`` of the policies that still exist."""
    if not policy_ids:
        return {}
    query = sa.select(_POLICY.c.id, _POLICY.c.backend).where(
        _POLICY.c.id.in_(policy_ids))
    return dict(context.session.execute(query).all())


def _backends_loaded(rows):
    """``{policy id: backend}`` of the policies loaded with ``rows``.

    What :func:`_backends_of` would read, taken from the policies
    :func:`_load` just read in the same transaction: a query less per
    message.
    """
    return {policy.id: policy.backend for _, policy in rows
            if policy is not None}


def _same_instance(backend, other_backend):
    """Whether two backends name one instance; None is a deleted policy's.

    An execution whose policy was deleted may still be making a backup:
    it counts as the instance's at any backend (of its own project).
    """
    return backend is None or other_backend is None or \
        backend == other_backend


# The candidates of find_overlaps: one constant statement (its cache key
# memoized), the instances and projects as expanding IN lists.
_OVERLAPS = (
    # Blocker's fields first, in its order.
    sa.select(_EXECUTION.c.id, _EXECUTION.c.policy_id,
              _EXECUTION.c.status, _EXECUTION.c.owner,
              _EXECUTION.c.claim_id, _EXECUTION.c.backup_id,
              _EXECUTION.c.scheduled_at, _EXECUTION.c.lease_expires_at,
              _SERVICE.c.heartbeat_at,
              _EXECUTION.c.instance_id, _EXECUTION.c.project_id,
              _POLICY.c.backend)
    .select_from(_EXECUTION.outerjoin(
        _SERVICE, _SERVICE.c.id == _EXECUTION.c.owner).outerjoin(
        _POLICY, _POLICY.c.id == _EXECUTION.c.policy_id))
    .where(_EXECUTION.c.instance_id.in_(
        sa.bindparam('instances', expanding=True)),
        _EXECUTION.c.project_id.in_(
            sa.bindparam('projects', expanding=True)),
        sa.or_(_EXECUTION.c.status == _RUNNING,
               sa.and_(_EXECUTION.c.status.in_(
                   enums.ExecutionStatus.WAITING),
                   _EXECUTION.c.backup_id.is_not(None)))))


@context_manager.reader
def find_overlaps(context, executions, backends=None):
    """For each execution, the others of its instance that go first.

    An instance is ``(backend, project_id, instance_id)``: a policy of
    another project, or of another backend, that names the same string
    is another instance, and never holds this one up.  Candidates are the
    executions of the same instance that are RUNNING,
    or waiting to be resumed with a backup already started (the backup
    runs at the backend meanwhile).  One goes first if its backup was
    started (``backup_id`` set), or, among those not started yet, if its
    (scheduled_at, id) is smaller: two workers that claim executions of
    one instance at the same moment thus agree on which one runs.  Whether
    a candidate is really running (its owner alive, its backup not
    finished) is for the caller to find out.  One query for all
    ``executions``; returns ``{execution id: [Blocker]}``, started backups
    first.  ``backends``, ``{policy id: backend}`` of the executions'
    policies that exist, if the caller read them in this transaction
    (otherwise they are read here).
    """
    if not executions:
        return {}
    instances = {execution.instance_id for execution in executions}
    projects = {execution.project_id for execution in executions}
    parameters = {'instances': sorted(instances),
                  'projects': sorted(projects)}
    candidates = {}
    fields = len(Blocker._fields)
    for row in context.session.execute(_OVERLAPS, parameters).all():
        candidates.setdefault((row.project_id, row.instance_id), []).append(
            (row.backend, Blocker(*row[:fields])))
    if backends is None:
        backends = _backends_of(context, {execution.policy_id
                                          for execution in executions})
    overlaps = {}
    for execution in executions:
        mine = (execution.scheduled_at, execution.id)
        backend = backends.get(execution.policy_id)
        same = candidates.get((execution.project_id, execution.instance_id),
                              ())
        first = [other for other_backend, other in same
                 if other.id != execution.id
                 and _same_instance(backend, other_backend) and (
                     other.backup_id is not None
                     or (other.status == _RUNNING
                         and (other.scheduled_at, other.id) < mine))]
        if first:
            first.sort(key=lambda other: (other.backup_id is None,
                                          other.scheduled_at, other.id))
            overlaps[execution.id] = first
    return overlaps


def still_running():
    """``status = 'RUNNING'``, written so that no index can serve it.

    Next to a primary key condition, PostgreSQL's planner may prefer the
    ``(status, lease_expires_at)`` index when its statistics say few rows
    are RUNNING -- as they say right after a burst turned thousands of
    rows RUNNING -- and then walks every RUNNING row for each statement
    (3 ms per recorded backup id with 10,000 in flight, measured by
    ``python -m tools.benchmarks.worker``).  ``status`` is NOT NULL, so the
    COALESCE changes nothing but the plan: the row is found by its key.
    """
    return sa.func.coalesce(_EXECUTION.c.status, '') == _RUNNING


def _held(execution_id, claim_id):
    """The execution, while ``claim_id`` is its current, running claim."""
    return (_EXECUTION.c.id == execution_id,
            _EXECUTION.c.claim_id == claim_id, still_running())


@db_api.retry_on_deadlock
@context_manager.writer
def record_backup_id(context, execution_id, claim_id, backup_id):
    """Record the backend's backup id; False if the claim was superseded.

    A recorded backup id is never replaced: the execution's backup is the
    first one recorded, whatever happens to its claims afterwards.
    """
    statement = (sa.update(_EXECUTION)
                 .where(*_held(execution_id, claim_id),
                        _EXECUTION.c.backup_id.is_(None))
                 .values(backup_id=backup_id))
    return context.session.execute(statement).rowcount == 1


# PostgreSQL: every triple in one statement, whatever the batch's size
# (one SQL text, so one compiled statement), which says which rows it
# changed.  The conditions are record_backup_id's, row by row.
_RECORD_BACKUP_IDS_POSTGRESQL = sa.text(
    'UPDATE backup_execution SET backup_id = v.backup_id '
    'FROM unnest(CAST(:ids AS text[]), CAST(:claims AS text[]), '
    'CAST(:backups AS text[])) AS v(id, claim_id, backup_id) '
    'WHERE backup_execution.id = v.id '
    'AND backup_execution.claim_id = v.claim_id '
    "AND coalesce(backup_execution.status, '') = :running "
    'AND backup_execution.backup_id IS NULL '
    'RETURNING backup_execution.id').bindparams(running=_RUNNING)


@db_api.retry_on_deadlock
@context_manager.writer
def record_backup_ids(context, recorded):
    """Record many ``(execution id, claim id, backup id)`` at once.

    Returns the execution ids whose backup id was recorded (those whose
    claim still holds).  Each triple is recorded under the conditions of
    :func:`record_backup_id` (found by key, see ``still_running``).  On
    PostgreSQL one UPDATE over the arrays of the batch, which returns the
    rows it changed; elsewhere one compiled UPDATE run for every triple
    (which costs the worker less than one statement built for the whole
    batch, which SQLAlchemy would compile anew for each size).  A triple
    the UPDATE did not change is then read back: recorded already under
    the same claim, it counts as recorded, as it always did.
    """
    if not recorded:
        return set()
    wanted = {execution_id: (claim_id, backup_id)
              for execution_id, claim_id, backup_id in recorded}
    session = context.session
    if session.get_bind().dialect.name == 'postgresql':
        done = set(session.execute(_RECORD_BACKUP_IDS_POSTGRESQL, {
            'ids': [item[0] for item in recorded],
            'claims': [item[1] for item in recorded],
            'backups': [item[2] for item in recorded]}).scalars())
        unsure = [execution_id for execution_id in wanted
                  if execution_id not in done]
    else:
        statement = (sa.update(_EXECUTION)
                     .where(_EXECUTION.c.id == sa.bindparam('execution_id'),
                            _EXECUTION.c.claim_id == sa.bindparam('claim'),
                            still_running(),
                            _EXECUTION.c.backup_id.is_(None))
                     .values(backup_id=sa.bindparam('new_backup_id')))
        session.execute(statement, [
            {'execution_id': execution_id, 'claim': claim_id,
             'new_backup_id': backup_id}
            for execution_id, claim_id, backup_id in recorded])
        done = set()
        unsure = list(wanted)
    if unsure:
        query = sa.select(_EXECUTION.c.id, _EXECUTION.c.claim_id,
                          _EXECUTION.c.backup_id).where(
            _EXECUTION.c.id.in_(unsure))
        done.update(_recorded_before(session.execute(query).all(), wanted))
    return done


def _recorded_before(rows, wanted):
    """Ids of ``(id, claim_id, backup_id)`` rows already as ``wanted``.

    A row the UPDATE did not change, whose backup id was recorded before
    under the same claim, counts as recorded.
    """
    return {row[0] for row in rows if (row[1], row[2]) == wanted[row[0]]}


def _record_backup_ids_mysql(count):
    """MariaDB/MySQL: one UPDATE for ``count`` triples (its SQL text).

    The rows are found by key (``id IN``), each must still hold its own
    claim (``claim_id = CASE id ...``) and gets its own backup id (``SET
    backup_id = CASE id ...``): record_backup_id's conditions, row by row.
    """
    cases = ' '.join(['WHEN %s THEN %s'] * count)
    return ('UPDATE backup_execution SET backup_id = CASE id %s END '
            'WHERE id IN (%s) AND claim_id = CASE id %s END '
            "AND coalesce(status, '') = %%s AND backup_id IS NULL"
            % (cases, ', '.join(['%s'] * count), cases))


def _read_back_sql(count):
    return ('SELECT id, claim_id, backup_id FROM backup_execution '
            'WHERE id IN (%s)' % ', '.join(['%s'] * count))


class BackupIdWriter:
    """:func:`record_backup_ids` on a connection its one thread keeps.

    The backup-id recorder (``worker/recorder.py``) commits a few ids at a
    time, a thousand times a second in a burst.  Through the session each
    of those transactions checks a connection out of the pool, which
    oslo.db pings (``SELECT 1``), and on PostgreSQL begins it with a
    ``BEGIN`` of its own: four round trips for one statement.  This keeps
    one DB-API connection instead, and sends the same conditional UPDATE
    as :func:`record_backup_ids`:

    - PostgreSQL: in autocommit, the UPDATE ... RETURNING alone, one round
      trip (a single statement is its own transaction);
    - MariaDB/MySQL: one UPDATE for the whole batch, the read-back and the
      COMMIT, in one transaction (no RETURNING on UPDATE there).

    Anything else (SQLite) returns None: the caller uses
    :func:`record_backup_ids`.  On any error the connection is discarded
    and the error raised; the caller records the batch the usual way
    (whose conditions make a second try harmless) and the next batch
    opens a new connection.  Not thread-safe: one thread uses it.
    """

    def __init__(self):
        self._connection = None
        self._dialect = None
        # PostgreSQL: record_backup_ids' statement, compiled for the driver.
        self._update = None

    def record(self, recorded):
        """Like :func:`record_backup_ids`; None if not on this database."""
        if not recorded:
            return set()
        if self._connection is None:
            if self._dialect is None:
                engine = db_api.get_engine()
                self._dialect = engine.dialect.name
                if self._dialect == 'postgresql':
                    self._update = str(_RECORD_BACKUP_IDS_POSTGRESQL.compile(
                        dialect=engine.dialect))
            if self._dialect not in ('postgresql', 'mysql', 'mariadb'):
                return None
            # Checked out (and pinged) once, kept until close().
            self._connection = db_api.get_engine().raw_connection()
            if self._dialect == 'postgresql':
                self._connection.dbapi_connection.autocommit = True
        wanted = {execution_id: (claim_id, backup_id)
                  for execution_id, claim_id, backup_id in recorded}
        try:
            cursor = self._connection.cursor()
            try:
                if self._dialect == 'postgresql':
                    return self._postgresql(cursor, recorded, wanted)
                return self._mysql(cursor, recorded, wanted)
            finally:
                cursor.close()
        except Exception:
            self.discard()
            raise

    def _postgresql(self, cursor, recorded, wanted):
        cursor.execute(self._update, {
            'ids': [item[0] for item in recorded],
            'claims': [item[1] for item in recorded],
            'backups': [item[2] for item in recorded],
            'running': _RUNNING})
        done = {row[0] for row in cursor.fetchall()}
        unsure = [execution_id for execution_id in wanted
                  if execution_id not in done]
        if unsure:
            cursor.execute(_read_back_sql(len(unsure)), unsure)
            done.update(_recorded_before(cursor.fetchall(), wanted))
        return done

    def _mysql(self, cursor, recorded, wanted):
        connection = self._connection
        backups, claims, ids = [], [], []
        for execution_id, claim_id, backup_id in recorded:
            backups += (execution_id, backup_id)
            claims += (execution_id, claim_id)
            ids.append(execution_id)
        try:
            cursor.execute(_record_backup_ids_mysql(len(recorded)),
                           backups + ids + claims + [_RUNNING])
            cursor.execute(_read_back_sql(len(ids)), ids)
            done = _recorded_before(cursor.fetchall(), wanted)
            connection.commit()
        except Exception:
            connection.rollback()
            raise
        return done

    def discard(self):
        """Forget the connection (closed, not given back to the pool)."""
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.invalidate()
            except Exception:
                pass

    def close(self):
        """Give the connection back to the pool, as the pool lent it."""
        connection, self._connection = self._connection, None
        if connection is None:
            return
        try:
            if self._dialect == 'postgresql':
                connection.dbapi_connection.autocommit = False
            connection.close()
        except Exception:
            try:
                connection.invalidate()
            except Exception:
                pass


@db_api.retry_on_deadlock
@context_manager.writer
def release_execution(context, execution_id, claim_id, next_attempt_at,
                      reason):
    """Give an execution back, to be cast again at ``next_attempt_at``."""
    statement = (sa.update(_EXECUTION)
                 .where(*_held(execution_id, claim_id))
                 .values(status=enums.ExecutionStatus.PENDING, owner=None,
                         lease_expires_at=None, dispatched_at=None,
                         # It has not really started: [worker]
                         # backup_timeout counts from when it does.
                         started_at=None, next_attempt_at=next_attempt_at,
                         status_reason=reason))
    return context.session.execute(statement).rowcount == 1


@db_api.retry_on_deadlock
@context_manager.writer
def finish_execution(context, execution_id, claim_id, status, now,
                     reason=None, fault=None, reconcile=None):
    """RUNNING -> SUCCEEDED, FAILED, SKIPPED or EXPIRED; False if not.

    False if the claim is gone -- or, for EXPIRED, if a backup id is
    recorded: an execution whose backup was taken never expires (the same
    compare-and-set, under the same claim, as ``record_backup_id``, which
    in turn needs the execution RUNNING).  A ``reason`` replaces the
    status reason; without one, what the engine noted (e.g. coalesced
    missed runs) stays.  ``reconcile``, a
    ``db_reconciliation.InstanceToReconcile``, queues the execution's
    instance for reconciliation in the same transaction.  The outcome is
    counted on the policy in the same transaction too
    (``db_protection.record_outcome``): what it changed there, a
    ``db_protection.Outcome`` (a true value), is returned.
    """
    values = dict(status=status, finished_at=now, fault=fault,
                  lease_expires_at=None)
    if reason is not None:
        values['status_reason'] = reason
    conditions = _held(execution_id, claim_id)
    if status == enums.ExecutionStatus.EXPIRED:
        conditions += (_EXECUTION.c.backup_id.is_(None),)
    statement = (sa.update(_EXECUTION)
                 .where(*conditions).values(**values))
    if context.session.execute(statement).rowcount != 1:
        return False
    if reconcile is not None:
        db_reconciliation.schedule(context, reconcile)
    return db_protection.record_outcome(context, execution_id, status, now,
                                        fault=fault)


# The reasons of the entries of deleted_backups that are strays
# (worker.strays: DUPLICATE, ORPHAN), which mark stray_deleted_at.
STRAY_REASONS = ('duplicate', 'orphan')


@db_api.retry_on_deadlock
@context_manager.writer
def record_deleted_backups(context, execution_id, deleted_backups):
    """Add ``deleted_backups`` to the execution's list of deleted backups.

    Whoever deleted them -- retention after the execution succeeded, a
    worker deleting a backup it made after losing its claim, a
    reconciliation pass -- an entry is added once per backup id.  The row
    is locked while its list is read and written back.
    """
    row = context.session.execute(
        sa.select(_EXECUTION.c.deleted_backups,
                  _EXECUTION.c.stray_deleted_at)
        .where(_EXECUTION.c.id == execution_id)
        .with_for_update()).first()
    if row is None:
        return []
    current = list(row.deleted_backups or [])
    known = {entry.get('id') for entry in current}
    added = [entry for entry in deleted_backups
             if entry.get('id') not in known]
    if added:
        # The latest deletion of a stray, which the metrics find by the
        # index on (finished_at, stray_deleted_at).
        strays = [datetime.datetime.fromisoformat(entry['deleted_at'])
                  for entry in added
                  if entry.get('reason') in STRAY_REASONS
                  and entry.get('deleted_at')]
        if row.stray_deleted_at is not None:
            strays.append(row.stray_deleted_at)
        latest = max(strays, key=_aware, default=None)
        context.session.execute(
            sa.update(_EXECUTION).where(_EXECUTION.c.id == execution_id)
            .values(deleted_backups=current + added,
                    stray_deleted_at=latest))
    return added


def _aware(when):
    """A naive time as UTC, to compare it with aware ones."""
    return (when if when.tzinfo is not None
            else when.replace(tzinfo=datetime.timezone.utc))


@context_manager.reader
def list_backups_in_flight(context, owner):
    """``owner``'s RUNNING executions whose backup was started, with policy.

    Returns ``[(execution, policy or None)]``, plain rows as
    :func:`get_executions_and_policies` (a pass loads thousands: ORM
    instances were the largest cost of a pass); found through the
    ``(owner, status)`` index, without reading other workers' rows.
    """
    return _rows(context.session.execute(_IN_FLIGHT, {'owner': owner}))


_IN_FLIGHT = _load_statement(sa.and_(
    _EXECUTION.c.owner == sa.bindparam('owner', type_=_EXECUTION.c.owner.type),
    _EXECUTION.c.status == _RUNNING,
    _EXECUTION.c.backup_id.is_not(None)))


@context_manager.reader
def count_policy_backups(context, policy_id):
    """How many backups this policy's executions started."""
    query = sa.select(sa.func.count()).select_from(_EXECUTION).where(
        _EXECUTION.c.policy_id == policy_id,
        _EXECUTION.c.backup_id.is_not(None))
    return context.session.execute(query).scalar()


@context_manager.reader
def list_running_claims(context, owner):
    """``{execution id: claim id}`` of ``owner``'s RUNNING executions.

    Through the ``(owner, status)`` index.
    """
    query = sa.select(_EXECUTION.c.id, _EXECUTION.c.claim_id).where(
        _EXECUTION.c.owner == owner, _EXECUTION.c.status == _RUNNING)
    return {row.id: row.claim_id for row in context.session.execute(query)}
