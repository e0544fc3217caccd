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
"""Retention: which of a policy's backups to keep, restic-style; the deletes.

The rules (each optional, on the policy):

``keep_last N``
    the N newest backups;
``keep_daily N`` / ``keep_weekly N`` / ``keep_monthly N``
    the newest backup of each of the N most recent days / ISO weeks /
    months that have a backup, days counted in the policy's time zone;
``max_age_days N``
    every backup younger than N days.

A backup survives if any rule keeps it.  On top of the rules: only
completed backups this policy created are candidates (the caller passes
only those it created); the newest completed backup is never deleted; a
backup that a kept incremental backup builds on is kept too, since deleting
a parent deletes its children.  A policy without any rule keeps everything.

The decision (:func:`plan_retention`, :func:`plan_instance_retention`) is a
pure function, with no I/O.  :func:`apply_retention` acts on it after a
backup succeeded (the poller calls it once the execution's SUCCEEDED is
recorded under its claim): it lists the instance's backups, decides, and
deletes at the backend.
"""

import dataclasses
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base
from dbaas_scheduler.db import retention as db_retention
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import timezones
from dbaas_scheduler.worker import backend_calls

LOG = logging.getLogger(__name__)

_RULES = ('keep_last', 'keep_daily', 'keep_weekly', 'keep_monthly',
          'max_age_days')


@dataclasses.dataclass(frozen=True)
class RetentionRules:
    keep_last: int | None = None
    keep_daily: int | None = None
    keep_weekly: int | None = None
    keep_monthly: int | None = None
    max_age_days: int | None = None

    @classmethod
    def from_policy(cls, policy):
        return cls(**{rule: getattr(policy, rule) for rule in _RULES})

    @property
    def any(self):
        return any(getattr(self, rule) is not None for rule in _RULES)


@dataclasses.dataclass
class RetentionDecision:
    # Backup id -> why it is kept.
    keep: dict
    # Backups to delete, oldest first.
    delete: list


def _buckets(zone):
    """The bucket functions of the calendar rules, in the policy's zone."""
    def local(backup):
        return backup.created_at.astimezone(zone)
    return {
        'keep_daily': lambda b: local(b).date(),
        'keep_weekly': lambda b: local(b).isocalendar()[:2],
        'keep_monthly': lambda b: (local(b).year, local(b).month),
    }


def plan_retention(backups, rules, zone, now):
    """Decide which of ``backups`` to keep and which to delete.

    :param backups: the :class:`~dbaas_scheduler.backends.base.Backup` s
        this policy created, as the backend lists them now.
    :param rules: :class:`RetentionRules`.
    :param zone: the policy's ``ZoneInfo`` (for day, week and month).
    :param now: aware datetime, for ``max_age_days``.
    """
    candidates = sorted(
        (b for b in backups
         if b.status == base.BackupStatus.COMPLETED and b.created_at),
        key=lambda b: (b.created_at, b.id), reverse=True)
    keep = {}

    def kept(backup, reason):
        keep.setdefault(backup.id, []).append(reason)

    if not candidates:
        return RetentionDecision(keep, [])
    if not rules.any:
        for backup in candidates:
            kept(backup, 'no retention rule')
        return RetentionDecision(keep, [])

    kept(candidates[0], 'newest')
    for backup in candidates[:rules.keep_last or 0]:
        kept(backup, 'keep_last')
    for rule, bucket_of in _buckets(zone).items():
        limit = getattr(rules, rule)
        seen = set()
        for backup in candidates:
            if not limit or len(seen) >= limit:
                break
            bucket = bucket_of(backup)
            if bucket not in seen:
                seen.add(bucket)
                kept(backup, rule)
    if rules.max_age_days is not None:
        cutoff = now - datetime.timedelta(days=rules.max_age_days)
        for backup in candidates:
            if backup.created_at >= cutoff:
                kept(backup, 'max_age_days')

    # A kept incremental backup needs its whole chain of parents.
    by_id = {backup.id: backup for backup in candidates}
    for backup_id in list(keep):
        child, parent_id, chain = backup_id, by_id[backup_id].parent_id, set()
        while parent_id in by_id and parent_id not in chain:
            chain.add(parent_id)
            kept(by_id[parent_id], 'parent of %s' % child)
            child, parent_id = parent_id, by_id[parent_id].parent_id

    delete = [b for b in reversed(candidates) if b.id not in keep]
    return RetentionDecision(keep, delete)


@dataclasses.dataclass(frozen=True)
class PolicyRetention:
    """One policy of an instance, as retention needs it."""

    rules: RetentionRules
    zone: object


@dataclasses.dataclass
class InstanceDecision:
    # Backup id -> why it stays (only this policy's backups).
    keep: dict
    # This policy's backups to DELETE, oldest first; deleting one deletes
    # the backups built on it, which are not repeated here.
    delete: list
    # Backup id -> the id of the deleted backup it goes with.
    cascade: dict


def plan_instance_retention(backups, policy_id, owners, policies, now):
    """Retention of one policy, over the backup chains of its instance.

    Trove builds an incremental backup on the instance's latest backup,
    whoever made it, and deletes the backups built on a backup with it.
    So a policy may delete one of its backups only if no backup that must
    stay is built on it, directly or not -- one kept by any rule of any
    policy of the instance, one this service did not create, one of a
    deleted policy, one still in progress.  And a chain (a full backup and
    what is built on it) goes as a unit: when this policy keeps any backup
    of a chain, it keeps all of its own backups in that chain.

    :param backups: every backup of the instance, as the backend lists them.
    :param policy_id: the policy whose retention this is.
    :param owners: ``{backup id: policy id}`` of every backup this service
        created on the instance (deleted policies included).
    :param policies: ``{policy id: PolicyRetention}`` of the instance's
        policies.
    :param now: aware datetime, for ``max_age_days``.
    """
    by_id = {backup.id: backup for backup in backups}
    must_stay = {}

    def stay(backup_id, reason):
        must_stay.setdefault(backup_id, reason)

    for backup in backups:
        owner = owners.get(backup.id)
        if owner is None:
            stay(backup.id, 'not created by dbaas-scheduler')
        elif owner not in policies:
            stay(backup.id, 'created by a deleted policy')
        elif backup.status in base.BackupStatus.IN_PROGRESS:
            stay(backup.id, 'in progress')
    mine = {}
    for owner, retention in policies.items():
        decision = plan_retention(
            [b for b in backups if owners.get(b.id) == owner],
            retention.rules, retention.zone, now)
        for backup_id, reasons in decision.keep.items():
            if owner == policy_id:
                mine[backup_id] = list(reasons)
            else:
                stay(backup_id, 'kept by policy %s' % owner)

    def ancestors(backup_id):
        seen = []
        parent_id = by_id[backup_id].parent_id
        while parent_id in by_id and parent_id not in seen:
            seen.append(parent_id)
            parent_id = by_id[parent_id].parent_id
        return seen

    def root(backup_id):
        chain = ancestors(backup_id)
        return chain[-1] if chain else backup_id

    # Everything a backup that must stay is built on stays.
    for backup_id in list(must_stay):
        for parent_id in ancestors(backup_id):
            stay(parent_id, 'parent of %s' % backup_id)
    # A chain this policy keeps a backup of is kept whole.
    kept_roots = {root(backup_id): backup_id for backup_id in mine}
    candidates = sorted(
        (b for b in backups if owners.get(b.id) == policy_id
         and b.status == base.BackupStatus.COMPLETED and b.created_at),
        key=lambda b: (b.created_at, b.id))
    keep, delete = {}, []
    for backup in candidates:
        reasons = list(mine.get(backup.id, ()))
        if backup.id in must_stay:
            reasons.append(must_stay[backup.id])
        chain_of = kept_roots.get(root(backup.id))
        if not reasons and chain_of is not None:
            reasons.append('same chain as %s' % chain_of)
        if reasons:
            keep[backup.id] = reasons
        else:
            delete.append(backup)
    deleted = {backup.id for backup in delete}
    # What the backend deletes with them: whatever is built on them, ours
    # or another policy's (none of it must stay, or they would too).
    cascade = {}
    for backup in backups:
        gone_with = [a for a in ancestors(backup.id) if a in deleted]
        if gone_with:
            cascade[backup.id] = gone_with[-1]
    return InstanceDecision(
        keep, [b for b in delete if b.id not in cascade], cascade)


def apply_retention(conf, context, execution, policy, backend):
    """Delete what retention no longer keeps, over the instance's chains.

    The data retention reasons over (:func:`plan_instance_retention`):
    every backup of the instance, which of them this service made and for
    which policy, and the rules of every policy of the instance.  The ids
    deleted are recorded on ``execution``; returns those entries.
    """
    rules = RetentionRules.from_policy(policy)
    if not rules.any:
        return []
    try:
        backups = backend_calls.call(
            conf, 'Execution %s' % execution.id, backend.list_backups,
            policy)
        owners = db_retention.list_instance_backup_owners(
            context, policy.project_id, policy.instance_id)
        policies = {
            other.id: PolicyRetention(
                RetentionRules.from_policy(other),
                timezones.get_timezone(other.timezone))
            for other in db_retention.list_instance_policies(
                context, policy.backend, policy.project_id,
                policy.instance_id)}
        decision = plan_instance_retention(
            backups, policy.id, owners, policies,
            timeutils.utcnow(True))
    except Exception as exc:
        LOG.warning('Execution %s: retention of policy %s skipped this '
                    'time: %s', execution.id, policy.id, exc)
        return []
    LOG.debug('Execution %s: retention of policy %s over %d backups of '
              'instance %s keeps %s and deletes %s', execution.id,
              policy.id, len(backups), policy.instance_id, decision.keep,
              [backup.id for backup in decision.delete])
    deleted = []
    by_id = {backup.id: backup for backup in backups}
    for backup in decision.delete:
        try:
            backend_calls.call(conf, 'Execution %s' % execution.id,
                               backend.delete_backup, policy, backup.id)
        except base.BackendError as exc:
            LOG.warning('Execution %s: retention could not delete '
                        'backup %s: %s', execution.id, backup.id, exc)
            continue
        deleted.append({'id': backup.id,
                        'created_at': backup.created_at.isoformat()})
        # The backend deleted the backups built on it too.
        for child_id, parent_id in sorted(decision.cascade.items()):
            created_at = by_id[child_id].created_at
            if parent_id == backup.id:
                deleted.append({
                    'id': child_id, 'with': backup.id,
                    'created_at': created_at and created_at.isoformat()})
    if deleted:
        db_worker.record_deleted_backups(context, execution.id, deleted)
        LOG.info('Execution %s: retention of policy %s deleted %d '
                 'backups and keeps %d', execution.id, policy.id,
                 len(deleted), len(decision.keep))
    return deleted
