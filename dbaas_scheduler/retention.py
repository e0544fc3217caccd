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
"""Retention maths: which backups to keep, pure functions with no I/O.

The rules (each optional, on the policy):

``keep_last N``
    the N newest backups;
``keep_daily N`` / ``keep_weekly N`` / ``keep_monthly N``
    the newest backup of each of the N most recent days / ISO weeks /
    months that have a backup, days counted in the policy's time zone;
``max_age_days N``
    every backup younger than N days;
``min_keep N``
    the floor: the N newest successful backups, whatever the other rules
    say (it deletes nothing by itself);
``verify_every N`` or ``verify_schedule`` (verification on)
    the newest backup whose scheduled verification passed, and what it
    is built on, whatever the other rules say (:func:`newest_verified`).

A backup survives if any rule keeps it.  On top of the rules: only
completed backups this policy created are candidates (the caller passes
only those it created); the newest completed backup is never deleted; a
held backup is never deleted; a backup that a kept or held incremental
backup builds on is kept too, since deleting a parent deletes its
children.  A policy without any rule keeps everything.

The worker (``worker/retention.py``) acts on these decisions; the
lifecycle preview (``objects/lifecycle.py``) runs them forward.
"""

import dataclasses
import datetime

from dbaas_scheduler.backends import base

_RULES = ('keep_last', 'keep_daily', 'keep_weekly', 'keep_monthly',
          'max_age_days', 'min_keep')
# The rules that delete: min_keep alone only keeps.
_DELETING_RULES = _RULES[:-1]


@dataclasses.dataclass(frozen=True)
class RetentionRules:
    keep_last: int | None = None
    keep_daily: int | None = None
    keep_weekly: int | None = None
    keep_monthly: int | None = None
    max_age_days: int | None = None
    min_keep: int | None = None

    @classmethod
    def from_policy(cls, policy):
        return cls(**{rule: getattr(policy, rule, None) for rule in _RULES})

    @property
    def any(self):
        return any(getattr(self, rule) is not None
                   for rule in _DELETING_RULES)


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
    # The floor: whatever the other rules say.
    for backup in candidates[:rules.min_keep or 0]:
        kept(backup, 'min_keep')
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
    # Verification is on (verify_every or verify_schedule): its newest
    # verified backup stays.
    verify: bool = False

    @classmethod
    def from_policy(cls, policy, zone):
        return cls(RetentionRules.from_policy(policy), zone,
                   getattr(policy, 'verify_every', None) is not None
                   or getattr(policy, 'verify_schedule', None) is not None)


def newest_verified(records, policies):
    """The backup ids retention keeps as their policy's newest verified.

    :param records: ``{backup id: record}`` with ``policy_id``,
        ``finished_at``, ``verify_result`` and ``backup_state`` (as
        ``db_retention.list_instance_backups`` returns them).
    :param policies: ``{policy id: PolicyRetention}``; only those with
        ``verify`` on keep one.
    """
    newest = {}
    for backup_id, record in records.items():
        retention = policies.get(record.policy_id)
        if (retention is None or not retention.verify
                or record.verify_result != 'passed'
                or record.backup_state == 'deleted'
                or record.finished_at is None):
            continue
        best = newest.get(record.policy_id)
        if best is None or (record.finished_at, backup_id) > best:
            newest[record.policy_id] = (record.finished_at, backup_id)
    return {backup_id for _, backup_id in newest.values()}


@dataclasses.dataclass
class InstanceDecision:
    # Backup id -> why it stays (only this policy's backups).
    keep: dict
    # This policy's backups to DELETE, oldest first; deleting one deletes
    # the backups built on it, which are not repeated here.
    delete: list
    # Backup id -> the id of the deleted backup it goes with.
    cascade: dict


def plan_instance_retention(backups, policy_id, owners, policies, now,
                            held=(), verified=()):
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
    :param held: the ids of the held backups: they stay, and so does
        everything they are built on.
    :param verified: the ids of the newest verified backups
        (:func:`newest_verified`): the same.
    """
    by_id = {backup.id: backup for backup in backups}
    must_stay = {}

    def stay(backup_id, reason):
        must_stay.setdefault(backup_id, reason)

    for backup in backups:
        owner = owners.get(backup.id)
        if backup.id in held:
            stay(backup.id, 'held')
        elif backup.id in verified:
            stay(backup.id, 'newest verified')
        elif owner is None:
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


@dataclasses.dataclass
class GracePlan:
    """What one retention pass does, the grace applied.

    ``expire``: backups to mark ``expiring`` now (deleted after the grace);
    ``delete``: backups ``expiring`` whose grace is over (or claimed by a
    deleter that died), to delete now; ``cancel``: backups ``expiring``
    that retention keeps after all.
    """

    expire: list
    delete: list
    cancel: list


def plan_grace(decision, states, now, grace):
    """Apply the grace to an :class:`InstanceDecision`.

    :param states: ``{backup id: (backup_state, backup_delete_after)}``
        as recorded (ids missing: nothing recorded).
    :param grace: a ``timedelta``; zero deletes in the same pass.
    """
    expire, delete = [], []
    for backup in decision.delete:
        state, after = states.get(backup.id, (None, None))
        if state is None:
            expire.append(backup)
            if not grace:
                delete.append(backup)
        elif state in ('expiring', 'deleting') and after is not None and (
                after <= now):
            delete.append(backup)
        elif state == 'deleting':
            # Claimed by another deleter: its business (or, once stale,
            # the claim's retry).
            delete.append(backup)
    cancel = [backup_id for backup_id in decision.keep
              if states.get(backup_id, (None, None))[0] == 'expiring']
    return GracePlan(expire, delete, cancel)


def plan_policy_deletion(backups, policy_id, owners, held=()):
    """Which backups of a policy being deleted go with it (on request).

    Every completed backup of the policy but those that must stay: held
    ones, and any backup that a backup which stays (held, another
    policy's or a deleted policy's, not made by this service, in
    progress) is built on.  Returns ``(delete, cascade)`` as
    :class:`InstanceDecision` has them.
    """
    by_id = {backup.id: backup for backup in backups}

    def ancestors(backup_id):
        seen = []
        parent_id = by_id[backup_id].parent_id
        while parent_id in by_id and parent_id not in seen:
            seen.append(parent_id)
            parent_id = by_id[parent_id].parent_id
        return seen

    stays = set()
    for backup in backups:
        if (backup.id in held or owners.get(backup.id) != policy_id
                or backup.status != base.BackupStatus.COMPLETED):
            stays.add(backup.id)
            stays.update(ancestors(backup.id))
    delete = sorted((b for b in backups
                     if b.id not in stays and b.created_at
                     and owners.get(b.id) == policy_id),
                    key=lambda b: (b.created_at, b.id))
    deleted = {backup.id for backup in delete}
    cascade = {}
    for backup in backups:
        gone_with = [a for a in ancestors(backup.id) if a in deleted]
        if gone_with:
            cascade[backup.id] = gone_with[-1]
    return [b for b in delete if b.id not in cascade], cascade
