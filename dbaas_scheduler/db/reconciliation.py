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
"""Database access of reconciliation: the queue of instances to reconcile.

One ``backup_reconciliation`` row per instance -- ``(backend, project_id,
instance_id)``, so that no project's passes act on another's -- whose
backups are to be listed again (see ``dbaas_scheduler.worker.reconciler``).
Finishing an execution queues its instance (an upsert that only ever
brings the next pass forward and pushes the end of the window out);
workers claim due rows with ``FOR UPDATE SKIP LOCKED`` and move their
``due_at`` on by a lease, which is also the token that tells them, when
they are done, whether the row changed meanwhile.
"""

import datetime
import typing

import sqlalchemy as sa
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models

_RECONCILIATION = models.BackupReconciliation.__table__
_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__


def _key():
    """The instance a row is for: ``(backend, project_id, instance_id)``."""
    columns = _RECONCILIATION.c
    return sa.tuple_(columns.backend, columns.project_id, columns.instance_id)


def _is(claimed):
    """The conditions that select ``claimed``'s row."""
    columns = _RECONCILIATION.c
    return (columns.backend == claimed.backend,
            columns.project_id == claimed.project_id,
            columns.instance_id == claimed.instance_id)


class InstanceToReconcile(typing.NamedTuple):
    """Reconcile ``instance_id`` from ``due_at`` on, until ``until``.

    What :func:`schedule` queues.  Its backups are listed through
    ``policy_id``'s backend and credentials; the instance is that
    policy's backend's and project's.
    """

    instance_id: str
    policy_id: str
    due_at: datetime.datetime
    until: datetime.datetime


class Claimed(typing.NamedTuple):
    """A queued instance a worker took; ``token`` is the due_at it wrote."""

    instance_id: str
    policy_id: str
    until: datetime.datetime
    token: datetime.datetime
    backend: str
    project_id: str


class TaggedExecution(typing.NamedTuple):
    """What reconciliation needs to know of an execution a backup names."""

    id: str
    project_id: str
    instance_id: str
    status: str
    backup_id: typing.Optional[str]


def _upsert(dialect_name):
    """The dialect's INSERT ... ON CONFLICT, its new row, least, greatest."""
    if dialect_name == 'postgresql':
        statement = postgresql.insert(_RECONCILIATION)
        return (statement, statement.excluded, sa.func.least,
                sa.func.greatest)
    if dialect_name in ('mysql', 'mariadb'):
        statement = mysql.insert(_RECONCILIATION)
        return (statement, statement.inserted, sa.func.least,
                sa.func.greatest)
    statement = sqlite.insert(_RECONCILIATION)
    # SQLite's min() and max() with two arguments are scalar functions.
    return statement, statement.excluded, sa.func.min, sa.func.max


@context_manager.writer
def schedule(context, item):
    """Queue ``item``, an :class:`InstanceToReconcile`; joins a transaction.

    The instance is the policy's ``(backend, project_id, instance_id)``;
    a policy deleted meanwhile leaves nothing to list its backups through,
    and nothing is queued.  An instance already queued keeps the earlier
    of the two due times and the later of the two ends; the policy is the
    latest one given.
    """
    owner = context.session.execute(
        sa.select(_POLICY.c.backend, _POLICY.c.project_id).where(
            _POLICY.c.id == item.policy_id)).first()
    if owner is None:
        return
    name = context.session.get_bind().dialect.name
    statement, new, least, greatest = _upsert(name)
    statement = statement.values(backend=owner.backend,
                                 project_id=owner.project_id,
                                 **item._asdict())
    columns = _RECONCILIATION.c
    changes = {'due_at': least(columns.due_at, new.due_at),
               'until': greatest(columns.until, new.until),
               'policy_id': new.policy_id}
    if name in ('mysql', 'mariadb'):
        statement = statement.on_duplicate_key_update(**changes)
    else:
        statement = statement.on_conflict_do_update(
            index_elements=[columns.backend, columns.project_id,
                            columns.instance_id], set_=changes)
    context.session.execute(statement)


@db_api.retry_on_deadlock
@context_manager.writer
def claim_due(context, now, limit, lease_seconds):
    """Take up to ``limit`` instances due at ``now``; ``[Claimed]``.

    ``SKIP LOCKED``: workers take disjoint sets.  The rows' ``due_at``
    becomes ``now + lease_seconds``: if the worker dies, they come due
    again then.
    """
    token = now + datetime.timedelta(seconds=lease_seconds)
    query = (sa.select(_RECONCILIATION.c.instance_id,
                       _RECONCILIATION.c.policy_id, _RECONCILIATION.c.until,
                       _RECONCILIATION.c.backend,
                       _RECONCILIATION.c.project_id)
             .where(_RECONCILIATION.c.due_at <= now)
             .order_by(_RECONCILIATION.c.due_at)
             .limit(limit)
             .with_for_update(skip_locked=True))
    rows = context.session.execute(query).all()
    if not rows:
        return []
    context.session.execute(
        sa.update(_RECONCILIATION)
        .where(_key().in_([(row.backend, row.project_id, row.instance_id)
                           for row in rows]))
        .values(due_at=token))
    return [Claimed(row.instance_id, row.policy_id, row.until, token,
                    row.backend, row.project_id)
            for row in rows]


@db_api.retry_on_deadlock
@context_manager.writer
def reschedule(context, claimed, due_at):
    """Next pass over a claimed instance at ``due_at``.

    Unless it was queued again meanwhile (its ``due_at`` is no longer the
    claim's token), which already brought the next pass forward.
    """
    context.session.execute(
        sa.update(_RECONCILIATION)
        .where(*_is(claimed),
               _RECONCILIATION.c.due_at == claimed.token)
        .values(due_at=due_at))


@db_api.retry_on_deadlock
@context_manager.writer
def finish(context, claimed, now, interval):
    """Done with a claimed instance: the next pass, or none after its window.

    A row queued again meanwhile is left as it is.
    """
    columns = _RECONCILIATION.c
    mine = (*_is(claimed), columns.due_at == claimed.token)
    context.session.execute(
        sa.delete(_RECONCILIATION).where(*mine, columns.until <= now))
    context.session.execute(
        sa.update(_RECONCILIATION).where(*mine, columns.until > now)
        .values(due_at=now + datetime.timedelta(seconds=interval)))


@db_api.retry_on_deadlock
@context_manager.writer
def forget(context, claimed):
    """Take a claimed instance off the queue (unless queued again)."""
    context.session.execute(
        sa.delete(_RECONCILIATION).where(
            *_is(claimed), _RECONCILIATION.c.due_at == claimed.token))


@context_manager.reader
def find_policy(context, claimed):
    """The policy to act through for a claimed instance, or None.

    Its ``policy_id`` if it still exists, else any policy of the instance
    -- of the same backend and project: never another project's
    credentials (the one that queued it may have been deleted since).
    """
    policy = models.BackupPolicy
    query = (sa.select(policy)
             .where(policy.backend == claimed.backend,
                    policy.project_id == claimed.project_id,
                    policy.instance_id == claimed.instance_id)
             .order_by(sa.case((models.BackupPolicy.id == claimed.policy_id,
                                0),
                               else_=1), models.BackupPolicy.id)
             .limit(1))
    return context.session.scalars(query).first()


@context_manager.reader
def get_tagged_executions(context, execution_ids):
    """``{id: TaggedExecution}`` of the given ids that are executions."""
    if not execution_ids:
        return {}
    query = sa.select(*[_EXECUTION.c[field]
                        for field in TaggedExecution._fields]).where(
        _EXECUTION.c.id.in_(list(execution_ids)))
    return {row.id: TaggedExecution(*row)
            for row in context.session.execute(query).all()}


@context_manager.reader
def count_queued(context):
    """How many instances are queued for reconciliation."""
    return context.session.execute(
        sa.select(sa.func.count()).select_from(_RECONCILIATION)).scalar()
