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
"""SQLAlchemy models: policies, templates, executions, restores, services.

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


def _is_set(column):
    """The predicate of a partial index on PostgreSQL: ``column`` set.

    For an index whose queries only look for rows where its first column
    is set: a row with it NULL costs no entry, which spares an INSERT and
    a non-HOT UPDATE one index write (migration ``d1e5a7c3b920``).
    MariaDB/MySQL and SQLite index every row.
    """
    return sa.text('%s IS NOT NULL' % column)


class BackupPolicy(Base):
    """One schedule of backups for one database instance."""

    __tablename__ = 'backup_policy'
    __table_args__ = (
        # The engine's scan: enabled policies ordered by their due time.
        sa.Index('ix_backup_policy_enabled_next_execution_time',
                 'enabled', 'next_execution_time'),
        # A project's policies in the order the API lists them: a page is
        # a range of it (and project_id alone, its prefix).
        sa.Index('ix_backup_policy_project_id_created_at_id',
                 'project_id', 'created_at', 'id'),
        sa.Index('ix_backup_policy_instance_id', 'instance_id'),
        # A name says which policy of its project is meant.
        sa.Index('uniq_backup_policy0project_id0name', 'project_id', 'name',
                 unique=True),
        # An enabled policy without a due time would never run again.
        sa.CheckConstraint('NOT enabled OR next_execution_time IS NOT NULL',
                           name='ck_backup_policy_enabled_has_next_time'),
        # The engine's protection sweep: the policies whose state time
        # alone changes now (dbaas_scheduler/protection.py).
        sa.Index('ix_backup_policy_protection_check_at',
                 'protection_check_at',
                 postgresql_where=_is_set('protection_check_at')),
        # Listing and counting policies by protection state.
        sa.Index('ix_backup_policy_project_id_protection',
                 'project_id', 'protection'),
        # The coverage report: a project's policies grouped by instance.
        sa.Index('ix_backup_policy_project_id_backend_instance_id',
                 'project_id', 'backend', 'instance_id'),
        # The metrics' one pass over the policies, read from this index
        # alone (dbaas_scheduler/db/metrics.py).
        sa.Index('ix_backup_policy_metrics', 'enabled', 'protection',
                 'consecutive_failures', 'next_execution_time',
                 'last_success_at'),
        # The policies with verification on (few), for the metrics' age
        # of the newest verified backup.
        sa.Index('ix_backup_policy_verify_every', 'verify_every',
                 postgresql_where=_is_set('verify_every')),
        # The sweep of due verification slots (verify_schedule).
        sa.Index('ix_backup_policy_verify_next_at', 'verify_next_at',
                 postgresql_where=_is_set('verify_next_at')),
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
    # Seconds after its slot a backup may still start, and should have
    # finished; NULL: derived from the schedule (dbaas_scheduler/windows.py).
    start_window: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    completion_window: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer)
    # Periods in the policy's time zone when no backup starts, as texts
    # ("Fri 18:00-Mon 06:00", "2026-12-24"); NULL: none.
    exclusions: orm.Mapped[list | None] = orm.mapped_column(
        oslo_db_types.JsonEncodedList)

    keep_last: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    keep_daily: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    keep_weekly: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    keep_monthly: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    max_age_days: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    # Retention never deletes below this many successful backups.
    min_keep: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)

    next_execution_time: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    last_execution_id: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(36))

    # Freshness (dbaas_scheduler/protection.py).  ``rpo`` is what the
    # user gave (seconds; NULL: derived from the schedule), and
    # ``effective_rpo`` what applies (NULL: none, no protection state).
    rpo: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    effective_rpo: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    # The recovery point of the newest successful backup: when it started.
    last_success_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    protected_until: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    protection: orm.Mapped[str | None] = orm.mapped_column(sa.String(16))
    protection_changed_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    # When time alone changes the state next (NULL: it does not).
    protection_check_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    # p95 seconds of the recent successful runs: late start, duration.
    lateness_p95: orm.Mapped[float | None] = orm.mapped_column(sa.Float)
    duration_p95: orm.Mapped[float | None] = orm.mapped_column(sa.Float)
    # Pause on failure: after this many failed outcomes in a row (NULL:
    # never); the streak is counted here as outcomes are recorded.
    pause_after_failures: orm.Mapped[int | None] = orm.mapped_column(
        sa.Integer)
    consecutive_failures: orm.Mapped[int] = orm.mapped_column(
        sa.Integer, default=0, server_default='0')
    # Average slots a day of the schedule (dbaas_scheduler/coverage.py's
    # minimum frequency); NULL: not known (a once schedule, or not
    # computed since the column appeared).
    daily_runs: orm.Mapped[float | None] = orm.mapped_column(sa.Float)
    # Scheduled verification (worker/verification.py): every Nth
    # successful backup is restored into a scratch target and checked
    # (NULL: never); ``verify_check`` is the user's read-only SQL check
    # ({"sql": ..., "expected": ...}); ``verify_failing`` holds the policy
    # at_risk while its newest verification failed.
    verify_every: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    verify_check: orm.Mapped[dict | None] = orm.mapped_column(
        oslo_db_types.JsonEncodedDict)
    verify_failing: orm.Mapped[bool] = orm.mapped_column(
        sa.Boolean, default=False, server_default=sa.false())
    # Verification on a schedule of its own (exclusive with verify_every):
    # a cron expression in the policy's time zone, and its next slot in
    # UTC, advanced by compare-and-set by the engine recording the slot.
    verify_schedule: orm.Mapped[str | None] = orm.mapped_column(
        sa.String(255))
    verify_next_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))

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
        sa.Index('ix_backup_execution_owner_status', 'owner', 'status',
                 postgresql_where=_is_set('owner')),
        # The metrics' window: executions finished recently; and, from
        # the index alone, those of them whose strays were deleted lately.
        sa.Index('ix_backup_execution_finished_at_stray_deleted_at',
                 'finished_at', 'stray_deleted_at',
                 postgresql_where=_is_set('finished_at')),
        # The workers' expiry sweep: expiring backups whose grace is over.
        sa.Index('ix_backup_execution_backup_state_backup_delete_after',
                 'backup_state', 'backup_delete_after',
                 postgresql_where=_is_set('backup_state')),
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

    # The slot's windows, fixed when the execution is recorded: its backup
    # may start until start_deadline (else it ends EXPIRED), and should
    # have finished by completion_deadline.  NULL (recorded before the
    # windows existed): no window.
    start_deadline: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    completion_deadline: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))

    backup_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    # Backups deleted on this execution's account: by the retention rules
    # after it succeeded ([{"id": ..., "created_at": ...}, ...]), or as
    # extra backups tagged with its id (the same, with "reason":
    # "duplicate" or "orphan" and "deleted_at").
    deleted_backups: orm.Mapped[list | None] = orm.mapped_column(
        oslo_db_types.JsonEncodedList)
    # The latest deleted_at of its duplicate and orphan entries.
    stray_deleted_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    # A user's hold on backup_id: retention never deletes a held backup
    # (nor what it is built on).
    held_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    held_by: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    # What retention decided about backup_id: NULL (nothing), 'expiring'
    # (to delete after backup_delete_after), 'deleting' (claimed by one
    # deleter: no hold any more), 'deleted'.  Every change is a
    # compare-and-set on this column (db/retention.py).
    backup_state: orm.Mapped[str | None] = orm.mapped_column(sa.String(16))
    backup_delete_after: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))

    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    dispatched_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    started_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    finished_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    fault: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    # The verification of backup_id: when it ended, 'passed' or 'failed',
    # why, and how many seconds it took.
    verified_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    verify_result: orm.Mapped[str | None] = orm.mapped_column(sa.String(16))
    verify_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    verify_duration: orm.Mapped[float | None] = orm.mapped_column(sa.Float)


class BackupRestore(Base):
    """One restore of an execution's backup into a new or named target.

    Made by the API (``POST /v1/executions/{id}/restore``), run by a
    worker under a claim like an execution's (``owner``, ``claim_id``,
    ``lease_expires_at``): every write of the worker is conditional on its
    token.  No foreign keys: a restore stays as history when its policy
    or execution goes.
    """

    __tablename__ = 'backup_restore'
    __table_args__ = (
        sa.Index('ix_backup_restore_project_id_created_at',
                 'project_id', 'created_at'),
        # The sweep: restores waiting to be cast again, expired leases.
        sa.Index('ix_backup_restore_status_lease_expires_at',
                 'status', 'lease_expires_at'),
        # A policy's restore times (last, p95).
        sa.Index('ix_backup_restore_policy_id_finished_at',
                 'policy_id', 'finished_at'),
        # One verification per execution (its slot).
        sa.Index('uniq_backup_restore0verify_slot', 'verify_slot',
                 unique=True),
        # One verification per slot of a policy's verify_schedule.
        sa.Index('uniq_backup_restore0policy_id0verify_scheduled_at',
                 'policy_id', 'verify_scheduled_at', unique=True),
        # The concurrency slots a running verification holds:
        # [verify] max_concurrent region-wide and per project.
        sa.Index('uniq_backup_restore0region_slot', 'region_slot',
                 unique=True),
        sa.Index('uniq_backup_restore0project_id0project_slot',
                 'project_id', 'project_slot', unique=True),
    )

    id: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), primary_key=True, default=uuidutils.generate_uuid)
    # 'restore' (asked by a user) or 'verify' (a scheduled verification
    # into a scratch target, deleted after its checks).
    kind: orm.Mapped[str] = orm.mapped_column(
        sa.String(16), default=enums.RestoreKind.RESTORE,
        server_default=enums.RestoreKind.RESTORE)
    # A verification's execution id: at most one verification per slot.
    verify_slot: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    # The slot of the policy's verify_schedule it was recorded for (NULL:
    # verify_every); one verification per slot.
    verify_scheduled_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    # While a verification runs: the concurrency slots it holds.
    region_slot: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    project_slot: orm.Mapped[int | None] = orm.mapped_column(sa.Integer)
    # When its scratch target (target_id) was deleted; a finished
    # verification without it is the scratch reconciler's to finish.
    scratch_deleted_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    execution_id: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    policy_id: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    project_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    # The instance the backup was taken of, and the backup.
    instance_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    backend: orm.Mapped[str] = orm.mapped_column(sa.String(64))
    backup_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    # What the request asked for: target, name, flavor, volume size...
    params: orm.Mapped[dict | None] = orm.mapped_column(
        oslo_db_types.JsonEncodedDict)

    status: orm.Mapped[str] = orm.mapped_column(
        sa.String(16), default=enums.RestoreStatus.PENDING)
    status_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    fault: orm.Mapped[str | None] = orm.mapped_column(sa.Text)

    attempts: orm.Mapped[int] = orm.mapped_column(sa.Integer, default=0)
    owner: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))
    lease_expires_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))
    claim_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(36))

    # What the backup was restored into: a Trove instance id, the name of
    # a configured database, or a SQLite file's name; recorded as soon as
    # the backend made it, and never replaced.
    target_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))

    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    dispatched_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    started_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    finished_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    # Seconds from the first claim to the end: the measured restore time.
    duration: orm.Mapped[float | None] = orm.mapped_column(sa.Float)


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


class CoverageCount(Base):
    """How many instances of a project were in a coverage state.

    Written by each coverage report of the project (GET /v1/coverage),
    read by the metrics: listing every project's instances from the
    backend on each scrape would cost too much.
    """

    __tablename__ = 'coverage_count'
    __table_args__ = (
        sa.Index('ix_coverage_count_computed_at', 'computed_at'),
    )

    project_id: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    state: orm.Mapped[str] = orm.mapped_column(
        sa.String(32), primary_key=True)
    instances: orm.Mapped[int] = orm.mapped_column(sa.Integer)
    computed_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime)


class PolicyTemplate(Base):
    """A project's default backup policy: what new instances are given.

    ``policy`` holds the policy fields a template sets (schedule, time
    zone, retention, windows, RPO...); every instance enrolled gets a
    policy with them (dbaas_scheduler/objects/template.py).
    """

    __tablename__ = 'policy_template'
    __table_args__ = (
        sa.Index('uniq_policy_template0project_id0name', 'project_id',
                 'name', unique=True),
    )

    id: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), primary_key=True, default=uuidutils.generate_uuid)
    name: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    description: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
    project_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    user_id: orm.Mapped[str | None] = orm.mapped_column(sa.String(255))
    backend: orm.Mapped[str] = orm.mapped_column(sa.String(64))
    policy: orm.Mapped[dict] = orm.mapped_column(
        oslo_db_types.JsonEncodedDict)
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    updated_at: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime, onupdate=_utcnow)


class TemplateEnrolment(Base):
    """One instance enrolled by one template: the fence against twice.

    The primary key is ``(template_id, instance_id)``: a notification
    delivered again, or handled by a restarted engine, finds the row and
    creates nothing.  ``policy_id`` is chosen when the row is inserted,
    before the policy exists, so that an enrolment interrupted between
    the two creates that same policy (its primary key fences it) when it
    is tried again; ``policy_created_at`` is set once it exists.  The row
    stays when the user deletes the policy: an instance is enrolled once.
    """

    __tablename__ = 'template_enrolment'
    __table_args__ = (
        sa.Index('ix_template_enrolment_project_id_instance_id',
                 'project_id', 'instance_id'),
    )

    template_id: orm.Mapped[str] = orm.mapped_column(
        sa.String(36), primary_key=True)
    instance_id: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    project_id: orm.Mapped[str] = orm.mapped_column(sa.String(255))
    policy_id: orm.Mapped[str] = orm.mapped_column(sa.String(36))
    created_at: orm.Mapped[datetime.datetime] = orm.mapped_column(
        types.UTCDateTime, default=_utcnow)
    policy_created_at: orm.Mapped[datetime.datetime | None] = (
        orm.mapped_column(types.UTCDateTime))


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


class ProjectCapacity(Base):
    """What a project may start now: its backoff, and the claims' lock row.

    One row per project that a limit applied to, and one, ``project_id``
    ``'*'``, for the region: a worker's claim under ``[worker]
    max_running_per_project`` or ``max_running`` updates the rows of the
    projects it starts (and the region's) before it counts their RUNNING
    executions, so that two claims of one project never count at once
    (``db/capacity.py``).  ``backoff_until``: the backend said the project
    is over one of its own limits (Trove's 413), and no new backup of the
    project starts before then.
    """

    __tablename__ = 'project_capacity'
    __table_args__ = (
        # The metrics: the projects whose backoff has not ended yet.
        sa.Index('ix_project_capacity_backoff_until', 'backoff_until'),
    )

    project_id: orm.Mapped[str] = orm.mapped_column(
        sa.String(255), primary_key=True)
    # Bumped by every claim that locks the row: a real change, so that
    # two claims on two Galera nodes conflict at certification.
    claims: orm.Mapped[int] = orm.mapped_column(sa.Integer, default=0)
    backoff_until: orm.Mapped[datetime.datetime | None] = orm.mapped_column(
        types.UTCDateTime)
    backoff_reason: orm.Mapped[str | None] = orm.mapped_column(sa.Text)
