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
"""Purging the execution history, a small batch at a time.

``dbaas-scheduler-manage execution purge`` and the engine's automatic
purge (``[engine] execution_purge_after_days``) call
:func:`purge_executions`.  It walks the finished executions older than a
time a batch at a time: a batch is read (no lock: a plain read at READ
COMMITTED, or MVCC on PostgreSQL), sorted into what must stay and what
may go, and what may go is deleted by id in a transaction of its own,
which is the only lock purging ever holds.  The walk follows the unique
key (policy, ``scheduled_at``), not the finish time, so that it needs no
index of its own: the whole purge reads the table once, along that key's
index, and each policy's executions oldest first -- an execution before
the later one of its policy that records its backup as deleted, so that
an interrupted purge never strands it.

An execution that may go is finished (``SUCCEEDED``, ``FAILED``,
``SKIPPED``), finished before the given time (created before it when it
has no ``finished_at``), and none of these:

``newest``
    the newest execution (by ``scheduled_at``) of its policy: what the
    policy's history shows last, however old;
``last_execution``
    its policy's ``last_execution_id``;
``kept_backup``
    a ``SUCCEEDED`` execution whose ``backup_id`` no execution of the
    instance records as deleted (``deleted_backups``).  Executions are
    the only record of which backups this service made and for which
    policy: retention deletes only backups one of the policy's
    executions recorded, and keeps whole the chains that hold a backup
    of a policy it does not know.  Purging such an execution would leave
    its backup at the backend for ever;
``deletion_record``
    an execution whose ``deleted_backups`` is the record that the backup
    of an execution that stays was deleted: without it, that execution
    would look as if its backup were kept, and would stay for ever.  It
    goes with, or after, the last execution it speaks for.

Each reason only ever moves to newer executions (a policy's newest
execution and ``last_execution_id`` change to new ones; a backup once
deleted stays deleted), so what a batch read as deletable stays
deletable until it is deleted a moment later.
"""

import dataclasses
import time

import sqlalchemy as sa

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums

_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__
FINISHED = enums.ExecutionStatus.FINISHED
SUCCEEDED = enums.ExecutionStatus.SUCCEEDED

# The reasons an old finished execution stays (the module's docstring).
KEPT_REASONS = ('newest', 'last_execution', 'kept_backup', 'deletion_record')

# Instances whose deleted backups one purge remembers between batches.
_DELETED_CACHE_SIZE = 10000


@dataclasses.dataclass
class PurgeResult:
    """What one :func:`purge_executions` call did (or, dry, would do)."""

    # Old finished executions looked at.
    scanned: int = 0
    deleted: int = 0
    kept: dict = dataclasses.field(
        default_factory=lambda: dict.fromkeys(KEPT_REASONS, 0))
    deleted_by_status: dict = dataclasses.field(default_factory=dict)
    batches: int = 0
    # Seconds of the longest delete transaction: the longest lock held.
    longest_batch: float = 0.0
    # Where the next call goes on from, (policy id, scheduled_at); None
    # once the walk is complete.
    marker: tuple | None = None

    @property
    def complete(self):
        return self.marker is None


def _select_candidates(session, before, marker, limit):
    old = sa.or_(_EXECUTION.c.finished_at < before,
                 sa.and_(_EXECUTION.c.finished_at.is_(None),
                         _EXECUTION.c.created_at < before))
    order = (_EXECUTION.c.policy_id, _EXECUTION.c.scheduled_at)
    query = (sa.select(_EXECUTION.c.id, _EXECUTION.c.policy_id,
                       _EXECUTION.c.instance_id, _EXECUTION.c.status,
                       _EXECUTION.c.scheduled_at, _EXECUTION.c.finished_at,
                       _EXECUTION.c.backup_id, _EXECUTION.c.deleted_backups)
             .where(_EXECUTION.c.status.in_(FINISHED), old)
             .order_by(*order).limit(limit))
    if marker is not None:
        policy_id, scheduled_at = marker
        # The unique key's index bounds the scan; the rest filters it.
        query = query.where(
            _EXECUTION.c.policy_id >= policy_id,
            sa.or_(_EXECUTION.c.policy_id > policy_id,
                   _EXECUTION.c.scheduled_at > scheduled_at))
    return session.execute(query).all()


def _newest_by_policy(session, policy_ids):
    query = (sa.select(_EXECUTION.c.policy_id,
                       sa.func.max(_EXECUTION.c.scheduled_at))
             .where(_EXECUTION.c.policy_id.in_(policy_ids))
             .group_by(_EXECUTION.c.policy_id))
    return dict(session.execute(query).all())


def _last_execution_ids(session, policy_ids):
    query = sa.select(_POLICY.c.last_execution_id).where(
        _POLICY.c.id.in_(policy_ids),
        _POLICY.c.last_execution_id.is_not(None))
    return set(session.scalars(query))


def _deleted_backups(session, instance_ids, cache):
    """``{instance id: ids of its backups recorded as deleted}``."""
    missing = [instance for instance in instance_ids if instance not in cache]
    if missing:
        if len(cache) + len(missing) > _DELETED_CACHE_SIZE:
            cache.clear()
        for instance in missing:
            cache[instance] = set()
        query = sa.select(_EXECUTION.c.instance_id,
                          _EXECUTION.c.deleted_backups).where(
            _EXECUTION.c.instance_id.in_(missing),
            _EXECUTION.c.deleted_backups.is_not(None))
        for instance, entries in session.execute(query):
            cache[instance].update(entry['id'] for entry in entries or ()
                                   if entry.get('id'))
    return cache


def _recorded_ids(row):
    return {entry['id'] for entry in row.deleted_backups or ()
            if entry.get('id')}


def _speakers_needed(session, rows, going):
    """Ids of rows whose deletion record an execution that stays needs."""
    records = {row.id: _recorded_ids(row) for row in rows
               if row.id in going and row.deleted_backups}
    records = {key: value for key, value in records.items() if value}
    if not records:
        return set()
    by_id = {row.id: row for row in rows}
    backup_ids = set().union(*records.values())
    instances = {by_id[key].instance_id for key in records}
    query = sa.select(_EXECUTION.c.id, _EXECUTION.c.instance_id,
                      _EXECUTION.c.backup_id).where(
        _EXECUTION.c.instance_id.in_(instances),
        _EXECUTION.c.backup_id.in_(backup_ids))
    staying = {}
    for execution_id, instance, backup_id in session.execute(query):
        if execution_id not in going:
            staying.setdefault(instance, set()).add(backup_id)
    return {key for key, backup_ids in records.items()
            if backup_ids & staying.get(by_id[key].instance_id, set())}


@context_manager.reader
def _plan_batch(context, before, marker, limit, cache):
    """``(rows, {id: reason}, ids to delete)`` of the next batch."""
    session = context.session
    rows = _select_candidates(session, before, marker, limit)
    if not rows:
        return rows, {}, set()
    policy_ids = {row.policy_id for row in rows}
    newest = _newest_by_policy(session, policy_ids)
    last = _last_execution_ids(session, policy_ids)
    with_backup = {row.instance_id for row in rows
                   if row.status == SUCCEEDED and row.backup_id}
    deleted = _deleted_backups(session, with_backup, cache)
    kept = {}
    for row in rows:
        if newest.get(row.policy_id) == row.scheduled_at:
            kept[row.id] = 'newest'
        elif row.id in last:
            kept[row.id] = 'last_execution'
        elif (row.status == SUCCEEDED and row.backup_id
              and row.backup_id not in deleted[row.instance_id]):
            kept[row.id] = 'kept_backup'
    going = {row.id for row in rows if row.id not in kept}
    for execution_id in _speakers_needed(session, rows, going):
        kept[execution_id] = 'deletion_record'
        going.discard(execution_id)
    return rows, kept, going


@context_manager.writer
def _delete_batch(context, execution_ids):
    return context.session.execute(
        sa.delete(_EXECUTION).where(_EXECUTION.c.id.in_(execution_ids),
                                    _EXECUTION.c.status.in_(FINISHED))
    ).rowcount


def purge_executions(context, before, batch_size=1000, dry_run=False,
                     marker=None, max_batches=None, on_batch=None):
    """Delete finished executions that finished before ``before``.

    A batch is ``batch_size`` old finished executions, read in the order
    of the unique key (policy, ``scheduled_at``) after ``marker``; what
    may go of it is deleted in one transaction.
    Stops at the end of the table, or after ``max_batches`` batches (the
    result's ``marker`` then says where to go on).  ``on_batch(rows)``
    is called with the rows deleted by each batch (or that a dry run
    would delete).  Returns a :class:`PurgeResult`.
    """
    result = PurgeResult()
    cache = {}
    while max_batches is None or result.batches < max_batches:
        rows, kept, going = _plan_batch(context, before, marker, batch_size,
                                        cache)
        if not rows:
            marker = None
            break
        result.batches += 1
        result.scanned += len(rows)
        for reason in kept.values():
            result.kept[reason] += 1
        gone = [row for row in rows if row.id in going]
        if gone and not dry_run:
            started = time.monotonic()
            result.deleted += _delete_batch(context, sorted(going))
            result.longest_batch = max(result.longest_batch,
                                       time.monotonic() - started)
        elif dry_run:
            result.deleted += len(gone)
        for row in gone:
            result.deleted_by_status[row.status] = (
                result.deleted_by_status.get(row.status, 0) + 1)
        if on_batch is not None and gone:
            on_batch(gone)
        marker = (rows[-1].policy_id, rows[-1].scheduled_at)
        if len(rows) < batch_size:
            marker = None
            break
    result.marker = marker
    return result
