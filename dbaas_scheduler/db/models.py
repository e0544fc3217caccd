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
"""SQLAlchemy models: policies, executions, reconciliations, services.

Every timestamp is an aware UTC datetime kept to the microsecond on every
backend (:class:`~dbaas_scheduler.db.types.UTCDateTime`).  The alembic
revisions under ``db/migration/versions`` must produce exactly these
tables; a functional test compares them on SQLite, MariaDB and PostgreSQL.
"""

import datetime

from oslo_db.sqlalchemy import types as oslo_db_types
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa
from sqlalchemy import orm

from dbaas_scheduler.db import types
from dbaas_scheduler import enums


def _utcnow():
    return timeutils.utcnow(with_timezone=True)


class Base(orm.DeclarativeBase):
    pass


class BackupPolicy(Base):
    """One schedule of backups for one database instance."""

    __tablename__ = 'backup_policy'
    __table_args__ = (
        # The engine's scan: enabled policies ordered by their due time.
        sa.Index('ix_backup_policy_enabled_next_execution_time',
                 'enabled', 'next_execution_time'),
        sa.Index('ix_backup_policy_project_id', 'project_id'),
        sa.Index('ix_backup_policy_instance_id', 'instance_id'),
        # A name says which policy of its project is meant.
        sa.Index('uniq_backup_policy0project_id0name', 'project_id', 'name',
                 unique=True),
        # An enabled policy without a due time would never run again.
        sa.CheckConstraint('NOT enabled OR next_execution_time IS NOT NULL',
                           name='ck_backup_policy_enabled_has_next_time'),
    )

    id: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), primary_key=True, default=uuidutils.generate_uuid)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    description: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    project_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    user_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    trust_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))

    instance_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    backend: orm.Mapped[str] = orm.mapped_column(
        sa.String(64), default='trove')
    backup_params: orm.Mapped[dict | None] = orm.mapped_column(
        oslo_db_types.JsonEncodedDict)

    schedule_type: orm.Mapped[str] = orm.mapped_column(sa.String(16))
    schedule: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    # A cron schedule with H fields, with their values for this policy
    # filled in: what the engine evaluates (NULL: evaluate ``schedule``).
    resolved_schedule: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    timezone: orm.Mapped[str] = orm.mapped_column(
        sa.String(64), default='UTC')
    start_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    end_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    remaining_runs: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)

    enabled: orm.Mapped[bool] = orm.mapped_column(sa.Boolean, default=True)
    paused_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    overlap_policy: orm.Mapped[str] = orm.mapped_column(
        sa.String(16), default=enums.OverlapPolicy.SKIP)
    # Seconds; NULL means [engine] catchup_window.
    catchup_window: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)

    keep_last: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    keep_daily: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    keep_weekly: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    keep_monthly: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    max_age_days: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)

    next_execution_time: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    last_execution_id: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36))

    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    updated_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime, onupdate=_utcnow)


class BackupExecution(Base):
    """One run of a policy: the unit of history and of idempotency.

    It has no foreign key to its policy: deleting a policy keeps its
    executions as history.
    """

    __tablename__ = 'backup_execution'
    __table_args__ = (
        # The fence against firing one slot twice.
        sa.UniqueConstraint(
            'policy_id', 'scheduled_at',
            name='uniq_backup_execution0policy_id0scheduled_at'),
        # Sweeps (waiting executions, expired leases) and status filters.
        sa.Index('ix_backup_execution_status_lease_expires_at',
                 'status', 'lease_expires_at'),
        # Overlap check: is another execution of this instance running?
        sa.Index('ix_backup_execution_instance_id_status',
                 'instance_id', 'status'),
        sa.Index('ix_backup_execution_project_id_created_at',
                 'project_id', 'created_at'),
        # A worker's own executions (in-flight backups, graceful stop),
        # found without scanning -- or on MariaDB locking -- the RUNNING
        # rows of other workers.
        sa.Index('ix_backup_execution_owner_status', 'owner', 'status'),
        # The metrics' window: executions finished recently.
        sa.Index('ix_backup_execution_finished_at', 'finished_at'),
    )

    id: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), primary_key=True, default=uuidutils.generate_uuid)
    policy_id: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    project_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    instance_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))

    scheduled_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime)
    trigger: orm.Mapped[str] = orm.mapped_column(
        sa.String(16), default=enums.ExecutionTrigger.SCHEDULE)
    status: orm.Mapped[str] = orm.mapped_column(
        sa.String(16), default=enums.ExecutionStatus.PENDING)
    status_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)

    attempts: orm.Mapped[int] = orm.mapped_column(sa.Integer, default=0)
    next_attempt_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    owner: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    lease_expires_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    # The fencing token of the current claim: new for every claim, and
    # every write a worker makes about the execution is conditional on it.
    claim_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))

    backup_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    # Backups deleted on this execution's account: by the retention rules
    # after it succeeded ([{"id": ..., "created_at": ...}, ...]), or as
    # extra backups tagged with its id (the same, with "reason":
    # "duplicate" or "orphan" and "deleted_at").
    deleted_backups: orm.Mapped[list | None] = orm.mapped_column(
        oslo_db_types.JsonEncodedList)

    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    dispatched_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    started_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    finished_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    fault: orm.Mapped[str | None] = orm.mapped_column(sa.Text)


class BackupReconciliation(Base):
    """An instance whose backups a worker's reconciliation pass lists.

    One row per instance with recently finished executions: ``due_at`` is
    when the next pass over it is due, ``until`` when the passes stop.
    Workers claim due rows with ``SKIP LOCKED`` and move ``due_at`` on.
    An instance is ``(backend, project_id, instance_id)``: another project
    naming the same id has an instance (and a row) of its own.
    """

    __tablename__ = 'backup_reconciliation'
    __table_args__ = (
        sa.Index('ix_backup_reconciliation_due_at', 'due_at'),
    )

    backend: orm.Mapped[str] = orm.mapped_column(
        sa.String(64), primary_key=True)
    project_id: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    instance_id: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    # The policy whose backend and credentials list the instance's backups.
    policy_id: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    due_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime)
    until: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime)


class TrustDeletion(Base):
    """A Keystone trust still to delete: Keystone did not confirm it.

    Recorded when deleting a policy (or undoing a creation) could not
    delete the policy's trust; engines claim due rows with ``SKIP LOCKED``,
    try again with the service user, and delete the row once Keystone
    confirms (or answers that the trust is gone).
    """

    __tablename__ = 'trust_deletion'
    __table_args__ = (
        sa.Index('ix_trust_deletion_due_at', 'due_at'),
    )

    trust_id: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    project_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime)
    due_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime)
    attempts: orm.Mapped[int] = orm.mapped_column(sa.Integer, default=0)
    last_error: orm.Mapped[str | None] = orm.mapped_column(sa.Text)


class Service(Base):
    """One running engine, worker or API process, for the cluster view.

    Each process registers its own row (several engines can share a host),
    and keeps ``heartbeat_at`` fresh; rows whose heartbeat is too old
    belong to dead processes and expire.
    """

    __tablename__ = 'service'
    __table_args__ = (
        sa.Index('ix_service_binary_heartbeat_at', 'binary', 'heartbeat_at'),
    )

    id: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), primary_key=True, default=uuidutils.generate_uuid)
    host: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    binary: orm.Mapped[str] = orm.mapped_column(sa.String(64))
    topic: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    pid: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    # servicegroup.ProcessIdentity of the process, as text: which process
    # on which boot of which host, so that a process started on the same
    # host can tell that this one is gone (worker/orphans.py).
    process_identity: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    started_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    heartbeat_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    # The process's own metrics (dbaas_scheduler.stats), as JSON, written
    # by each heartbeat; NULL for a process that has none.
    stats: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
