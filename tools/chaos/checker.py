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
execution, and no recorded backup of a SUCCEEDED execution gone.
"""

import collections
import datetime

from tools.benchmarks import reporting

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler import enums

MINUTE = datetime.timedelta(minutes=1)
STRAY_REASONS = ('duplicate', 'orphan')


def _posix(value):
    return value.timestamp()


class Verdict:
    """Everything the report says, computed from the final state."""

    def __init__(self, policies, executions, history):
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
        self._slots()
        self._backups()

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
                    and row.backup_id not in [r.id for r in retained]):
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
