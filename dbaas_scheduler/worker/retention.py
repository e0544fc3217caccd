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
"""Retention: which of a policy's backups to keep, restic-style.  No I/O.

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
"""

import dataclasses
import datetime

from dbaas_scheduler.backends import base

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
