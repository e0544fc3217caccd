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
"""The chaos run's verdict: per slot, executions, creates and backups kept.

A *slot* is one due time of one policy.  Every slot before the policy's
``next_execution_time`` when the load stopped must be covered by exactly
one execution: one at that slot, or a SKIPPED ``missed`` record of a
backlog the engine coalesced (which covers the slots up to the next
execution).  For each execution the fake Trove tells how many backups
were created with its tag and how many are still there.

The guarantee checked: no slot lost, no execution left non-terminal, no
execution with more than one retained backup (nor a retained backup that
is not its recorded one), every extra backup deleted *and* recorded on its
execution, and no recorded backup of a SUCCEEDED execution gone (but
those retention deleted and recorded).

Retention (policies with ``keep_last`` and a floor ``min_keep``, some
with a twin policy on their instance, and holds placed while retention
deletes): no held backup deleted; no deletion that left a policy below
its floor (at the moment of each deletion, the policy's backups that had
succeeded by then -- recorded SUCCEEDED, or complete at the backend,
which is what retention counts -- and were not deleted number at least
``min_keep``, or all of them); no retention deletion unrecorded; no
backup deleted while one built on it outlived it, nor a held one deleted
with its parent (chains, when the twin policies make incremental
backups);
and retention deleted something (a run whose retention never deletes
proves nothing).

With start windows: a slot is taken within its window or EXPIRED, never
both -- no EXPIRED execution has a recorded backup or keeps a backup at
the backend, and none was started (first claimed) after its window.
"""

import collections
import datetime

from tools.benchmarks import reporting

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler import enums

MINUTE = datetime.timedelta(minutes=1)
STRAY_REASONS = ('duplicate', 'orphan')
SCRATCH_PREFIX = backends.scratch_name('')


def _posix(value):
    return value.timestamp()


class Verdict:
    """Everything the report says, computed from the final state."""

    def __init__(self, policies, executions, history, retention=None,
                 build_seconds=0.0):
        """Judge the final state.

        ``policies``: {id: (first_due, next_execution_time at stop)};
        ``executions``: rows of backup_execution; ``history``: the fake
        Trove's ``BackupRecord`` list.
        """
        self.policies = policies
        self.executions = executions
        self.by_id = {row.id: row for row in executions}
        self.created = collections.defaultdict(list)
        for record in history:
            execution_id = backends.tagged_execution_id(record.description)
            if execution_id is not None:
                self.created[execution_id].append(record)
        self.figures = collections.OrderedDict()
        self.problems = collections.defaultdict(list)
        self.records = {record.id: record for record in history}
        self.retention = retention or {}
        self.build_seconds = build_seconds
        self._slots()
        self._backups()
        if self.retention:
            self._retention()
        self._windows()

    def _slots(self):
        per_policy = collections.defaultdict(list)
        per_slot = collections.Counter()
        for row in self.executions:
            per_policy[row.policy_id].append(row)
            per_slot[(row.policy_id, row.scheduled_at)] += 1
        expected = lost = 0
        for policy_id, (first_due, stop_due) in self.policies.items():
            rows = sorted(per_policy.get(policy_id, ()),
                          key=lambda row: row.scheduled_at)
            covered = set()
            for number, row in enumerate(rows):
                covered.add(row.scheduled_at)
                if (row.status == enums.ExecutionStatus.SKIPPED
                        and (row.status_reason or '').startswith('missed')):
                    end = (rows[number + 1].scheduled_at
                           if number + 1 < len(rows) else stop_due)
                    slot = row.scheduled_at + MINUTE
                    while slot < end:
                        covered.add(slot)
                        slot += MINUTE
            slot = first_due
            while slot < stop_due:
                expected += 1
                if slot not in covered:
                    lost += 1
                    self.problems['lost slots'].append(
                        '%s at %s' % (policy_id, slot.isoformat()))
                slot += MINUTE
        self.figures['slots due'] = expected
        self.figures['executions'] = len(self.executions)
        self.figures['slots with more than one execution'] = len(
            [key for key, count in per_slot.items() if count > 1])
        self.figures['slots lost'] = lost
        statuses = collections.Counter(row.status for row in self.executions)
        self.figures['executions by status'] = ', '.join(
            '%s %d' % item for item in sorted(statuses.items()))
        skips = collections.Counter(
            (row.status_reason or '').split(':')[0].split(' ')[0]
            for row in self.executions
            if row.status == enums.ExecutionStatus.SKIPPED)
        self.figures['SKIPPED by reason'] = ', '.join(
            '%s %d' % item for item in sorted(skips.items())) or '-'
        waiting = [row.id for row in self.executions
                   if row.status not in enums.ExecutionStatus.FINISHED]
        self.figures['executions left non-terminal'] = len(waiting)
        self.problems['non-terminal executions'] = waiting

    def _backups(self):
        creates = extra = deleted = recorded_deleted = 0
        more_than_one = []
        delete_seconds = []
        lateness = []
        reasons = collections.Counter()
        for execution_id, records in self.created.items():
            row = self.by_id.get(execution_id)
            if row is None:
                continue
            creates += len(records)
            retained = [r for r in records if r.deleted is None]
            recorded = {entry.get('id'): entry
                        for entry in row.deleted_backups or ()
                        if entry.get('reason') in STRAY_REASONS}
            for entry in recorded.values():
                reasons[entry['reason']] += 1
            if len(retained) > 1:
                more_than_one.append(execution_id)
            for record in records:
                if record.id == row.backup_id:
                    lateness.append(record.created
                                    - _posix(row.scheduled_at))
                    continue
                extra += 1
                if record.deleted is None:
                    self.problems['extra backups retained'].append(
                        '%s of %s (%s)' % (record.id, execution_id,
                                           row.status))
                    continue
                deleted += 1
                delete_seconds.append(record.deleted - record.created)
                if record.id in recorded:
                    recorded_deleted += 1
                else:
                    self.problems['deletions not recorded'].append(
                        '%s of %s' % (record.id, execution_id))
            if (row.status == enums.ExecutionStatus.SUCCEEDED
                    and row.backup_id not in [r.id for r in retained]
                    and getattr(row, 'backup_state', None) != 'deleted'):
                self.problems['succeeded without its backup'].append(
                    execution_id)
        self.problems['slots with more than one retained backup'] = (
            more_than_one)
        self.figures['backend creates'] = creates
        self.figures['duplicates created (extra backups)'] = extra
        self.figures['duplicates deleted'] = deleted
        self.figures['  of which recorded on their execution'] = (
            recorded_deleted)
        self.figures['  recorded reasons'] = ', '.join(
            '%s %d' % item for item in sorted(reasons.items())) or '-'
        self.figures['slots with more than one retained backup'] = len(
            more_than_one)
        self.figures['extra backups still retained'] = len(
            self.problems['extra backups retained'])
        self.figures['SUCCEEDED without their backup'] = len(
            self.problems['succeeded without its backup'])
        self.figures['time to delete a duplicate p50 / p99 / max'] = (
            reporting.spread(delete_seconds, digits=1))
        self.figures['lateness (create - slot) p50 / p99 / max'] = (
            reporting.spread(lateness, digits=1))

    def _retention(self):
        recorded = set()
        for row in self.executions:
            for entry in row.deleted_backups or ():
                if entry.get('reason') not in STRAY_REASONS:
                    recorded.add(entry.get('id'))
        held = deleted = 0
        per_policy = collections.defaultdict(list)
        for row in self.executions:
            if row.policy_id not in self.retention or not row.backup_id:
                continue
            record = self.records.get(row.backup_id)
            if record is None or row.status != enums.ExecutionStatus.SUCCEEDED:
                continue
            per_policy[row.policy_id].append((row, record))
            if row.held_at is not None:
                held += 1
                if record.deleted is not None:
                    self.problems['held backups deleted'].append(
                        '%s of %s' % (row.backup_id, row.id))
            if record.deleted is not None:
                deleted += 1
                if row.backup_id not in recorded:
                    self.problems['retention deletions not recorded'].append(
                        '%s of %s' % (row.backup_id, row.id))
        below = 0
        for policy_id, made in per_policy.items():
            floor = self.retention[policy_id]
            for row, record in made:
                if record.deleted is None:
                    continue
                at = record.deleted
                # Successful by then as retention sees it: recorded
                # SUCCEEDED, or complete at the backend (the fake Trove
                # completes a backup build_seconds after it stored it)
                # before the worker recorded it.
                succeeded = [r for other, r in made
                             if (other.finished_at is not None
                                 and _posix(other.finished_at) <= at)
                             or r.created + self.build_seconds <= at]
                alive = [r for r in succeeded
                         if r.deleted is None or r.deleted > at]
                if len(alive) < min(floor, len(succeeded)):
                    below += 1
                    self.problems['deletions below the floor'].append(
                        '%s of policy %s left %d of %d' % (
                            record.id, policy_id, len(alive), floor))
        # Chains: a backup deleted while one built on it outlived it, or
        # a held backup deleted with the one it is built on.
        children = collections.defaultdict(list)
        for record in self.records.values():
            if record.parent_id is not None:
                children[record.parent_id].append(record)
        held_ids = {row.backup_id for row in self.executions
                    if row.held_at is not None and row.backup_id}
        for record in self.records.values():
            if record.deleted is None:
                continue
            for child in children.get(record.id, ()):
                if (child.deleted is None or child.deleted > record.deleted
                        or child.id in held_ids):
                    self.problems['chain violations'].append(
                        '%s deleted, %s built on it' % (record.id, child.id))
        chained = sum(len(kids) for kids in children.values())
        swept = sum(1 for row in self.executions
                    for entry in row.deleted_backups or ()
                    if entry.get('reason') == 'retention')
        # A policy with more successes than its floor and one more (the
        # newest, whose success triggered the pass) had one to delete.
        eligible = sum(1 for policy_id, made in per_policy.items()
                       if len(made) > self.retention[policy_id] + 1)
        if eligible and not deleted:
            self.problems['no retention deletion'].append(
                'retention deleted nothing, though %d policies had more '
                'backups than their floor' % eligible)
        states = collections.Counter(
            getattr(row, 'backup_state', None) or '-'
            for row in self.executions if row.policy_id in self.retention)
        self.figures['retention policies'] = len(self.retention)
        self.figures['retention deletions (backends)'] = deleted
        self.figures['  of them by the expiry sweep'] = swept
        self.figures['incremental backups (built on another)'] = chained
        self.figures['chain violations'] = len(
            self.problems['chain violations'])
        self.figures['backup states at the end'] = ', '.join(
            '%s %d' % item for item in sorted(states.items()))
        self.figures['held backups'] = held
        self.figures['held backups deleted'] = len(
            self.problems['held backups deleted'])
        self.figures['deletions below the floor'] = below
        self.figures['retention deletions not recorded'] = len(
            self.problems['retention deletions not recorded'])

    def _windows(self):
        """Taken within the start window, or EXPIRED; never both."""
        expired = [row for row in self.executions
                   if row.status == enums.ExecutionStatus.EXPIRED]
        self.figures['EXPIRED'] = len(expired)
        by_reason = collections.Counter(
            'no worker claimed it' if 'before any worker' in (
                row.status_reason or '')
            else 'last attempt failed' if 'last attempt failed' in (
                row.status_reason or '')
            else 'worker found its window ended'
            if row.attempts else 'engine found its window ended'
            for row in expired)
        self.figures['  EXPIRED by how'] = ', '.join(
            '%s %d' % item for item in sorted(by_reason.items())) or '-'
        for row in expired:
            if row.backup_id is not None:
                self.problems['EXPIRED and taken'].append(
                    '%s (backup %s)' % (row.id, row.backup_id))
            kept = [record.id for record in self.created.get(row.id, ())
                    if record.deleted is None]
            if kept:
                self.problems['EXPIRED with a backup kept'].append(
                    '%s (%s)' % (row.id, ', '.join(kept)))
        late = []
        stored_late = 0
        for row in self.executions:
            if row.backup_id is None or row.start_deadline is None:
                continue
            # A first and only claim after the window must have expired
            # it; a later claim may rightly find, by its tag, a backup an
            # earlier one created in time.
            if row.attempts == 1 and row.started_at is not None and (
                    row.started_at > row.start_deadline):
                late.append('%s (claimed %s, window until %s)' % (
                    row.id, row.started_at.isoformat(),
                    row.start_deadline.isoformat()))
            for record in self.created.get(row.id, ()):
                if (record.id == row.backup_id
                        and record.created > _posix(row.start_deadline)):
                    stored_late += 1
        self.problems['taken after its start window'] = late
        self.figures['taken after its start window'] = len(late)
        # A create sent within the window can be stored after it (the
        # slow and late faults): a figure, not a problem.
        self.figures['  recorded backups stored after the deadline'] = (
            stored_late)

    def verifications(self, verifying, rows, at_backend):
        """Judge the scheduled verifications.

        ``verifying``: {policy id: verify_every}; ``rows``: the
        backup_restore rows of kind verify; ``at_backend``: the names of
        the scratch targets still at the backend.
        """
        per_slot = collections.Counter(row.verify_slot for row in rows)
        twice = sorted(slot for slot, count in per_slot.items() if count > 1)
        self.problems['slots verified more than once'] = twice
        self.problems['verifications not finished'] = [
            row.id for row in rows
            if row.status not in enums.RestoreStatus.FINISHED]
        left = scratch_left(rows, at_backend)
        self.problems['scratch targets left'] = left
        self.problems['verifications due, not recorded'] = (
            verifications_due(verifying, self.executions, rows))
        self._newest_verified_deleted(verifying)
        results = collections.Counter(
            row.verify_result or '-' for row in self.executions
            if row.verify_result is not None)
        reasons = collections.Counter(
            (row.status_reason or '-')[:60] for row in rows
            if row.status == enums.RestoreStatus.FAILED)
        durations = [row.duration for row in rows
                     if getattr(row, 'duration', None) is not None]
        self.figures['verifying policies'] = len(verifying)
        self.figures['verifications'] = len(rows)
        self.figures['  by status'] = ', '.join(
            '%s %d' % item for item in sorted(collections.Counter(
                row.status for row in rows).items())) or '-'
        self.figures['  executions by verify_result'] = ', '.join(
            '%s %d' % item for item in sorted(results.items())) or '-'
        self.figures['  failure reasons'] = '; '.join(
            '%s: %d' % item for item in reasons.most_common(3)) or '-'
        self.figures['  resumed (more than one attempt)'] = len(
            [row for row in rows if (row.attempts or 0) > 1])
        self.figures['  duration p50 / p99 / max'] = reporting.spread(
            durations, digits=1)
        self.figures['verification slots with more than one'] = len(twice)
        self.figures['verifications due and never recorded'] = len(
            self.problems['verifications due, not recorded'])
        self.figures['verifications not finished'] = len(
            self.problems['verifications not finished'])
        self.figures['scratch targets recorded / left'] = '%d / %d' % (
            len([row for row in rows if row.target_id]), len(left))
        self.figures['newest verified backup deleted'] = len(
            self.problems['newest verified backup deleted'])

    def _newest_verified_deleted(self, verifying):
        """No backup deleted while it was its policy's newest verified."""
        passed = collections.defaultdict(list)
        for row in self.executions:
            if (row.policy_id in verifying and row.verified_at is not None
                    and row.verify_result == enums.VerifyResult.PASSED):
                passed[row.policy_id].append(row)
        for policy_id, verified in passed.items():
            for row in verified:
                record = self.records.get(row.backup_id)
                if record is None or record.deleted is None:
                    continue
                # Verified by the time of the deletion, the newest backup.
                known = [other for other in verified
                         if _posix(other.verified_at) <= record.deleted]
                if not known:
                    continue
                newest = max(known, key=lambda other: other.finished_at)
                if newest.id == row.id:
                    self.problems['newest verified backup deleted'].append(
                        '%s of %s (policy %s)' % (row.backup_id, row.id,
                                                  policy_id))

    @property
    def holds(self):
        """The guarantee: nothing in :attr:`problems`."""
        return not any(self.problems.values())

    def write(self, report):
        report.section('Per slot')
        for key, value in self.figures.items():
            report.item(key, value)
        report.item('verdict', 'HOLDS' if self.holds else 'BROKEN')
        for kind, items in self.problems.items():
            if items:
                report.item(kind, '%d, e.g. %s' % (
                    len(items), '; '.join(items[:5])))


def strays_left(executions, history):
    """How many extra backups are still at the backend (draining)."""
    recorded = {row.id: row.backup_id for row in executions}
    left = 0
    for record in history:
        if record.deleted is not None:
            continue
        execution_id = backends.tagged_execution_id(record.description)
        if execution_id in recorded and record.id != recorded[execution_id]:
            left += 1
    return left


def scratch_names(names):
    """The names among ``names`` that are the service's scratch targets."""
    return [name for name in names
            if name and name.startswith(SCRATCH_PREFIX)]


def scratch_left(rows, at_backend):
    """Scratch targets left: recorded and not deleted, or at the backend.

    ``rows``: verifications; ``at_backend``: scratch names the backend
    still has.  A finished verification must have recorded its scratch
    target deleted (by its worker or the scratch reconciler); a scratch
    target still at the backend is left whatever its row says.
    """
    left = ['%s (%s)' % (row.target_id, row.id) for row in rows
            if row.target_id and row.scratch_deleted_at is None
            and row.status in enums.RestoreStatus.FINISHED]
    recorded = {row.target_id for row in rows}
    left += ['%s (at the backend%s)' % (
        name, '' if name in recorded else ', recorded nowhere')
        for name in at_backend]
    return left


def verifications_due(verifying, executions, rows):
    """The policies left with a verification due that was never recorded.

    The engine records one once ``verify_every`` backups succeeded since
    the execution of the policy's newest verification finished, and
    verifies the newest of them still retained.
    """
    by_id = {row.id: row for row in executions}
    slot_finished = {}
    for row in rows:
        execution = by_id.get(row.verify_slot)
        if execution is None or execution.finished_at is None:
            continue
        at = slot_finished.get(row.policy_id)
        if at is None or execution.finished_at > at:
            slot_finished[row.policy_id] = execution.finished_at
    successes = collections.defaultdict(list)
    for row in executions:
        if (row.policy_id in verifying and row.backup_id
                and row.status == enums.ExecutionStatus.SUCCEEDED):
            successes[row.policy_id].append(row)
    due = []
    for policy_id, every in verifying.items():
        since = slot_finished.get(policy_id)
        after = [row for row in successes[policy_id]
                 if since is None or row.finished_at > since]
        if len(after) >= every and any(
                getattr(row, 'backup_state', None) is None
                for row in after):
            due.append('%s (%d backups since its last verification)' % (
                policy_id, len(after)))
    return due
