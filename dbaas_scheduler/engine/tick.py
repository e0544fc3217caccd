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
"""The engine tick: claim due policies, advance them, record executions.

One tick is one database transaction ("The engine tick: exactly once" in
doc/source/contributor/exactly-once.rst):

1. lock a batch of due, enabled policies (``SKIP LOCKED``);
2. work out, for each, what its due slot becomes (:func:`plan_batch`, no
   I/O) -- a run, or a SKIPPED "missed" record when it is later than the
   catch-up window, a SKIPPED "excluded" one inside an exclusion window,
   an EXPIRED one past its start window -- and its next run time;
3. compare-and-set ``next_execution_time`` for the whole batch in one
   statement and insert the executions in one statement, the runs already
   DISPATCHED;
4. commit.  Only then are the new runs cast to the workers (by
   :mod:`dbaas_scheduler.dispatch`), and nothing is written after the
   cast unless it fails.

A crash before the commit changes nothing; after it, every execution is
recorded and the sweep casts again those no worker claimed.
"""

import dataclasses
import datetime
import functools
import json
import os
import typing

from oslo_db import api as oslo_db_api
from oslo_log import log as logging

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import protection as db_protection
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler import enums
from dbaas_scheduler import exception
from dbaas_scheduler import schedule
from dbaas_scheduler import windows

LOG = logging.getLogger(__name__)

MISSED = 'missed'
EXCLUDED = 'excluded'

# A backlog longer than this many slots is not walked slot by slot: the
# policy jumps to its next run after now and the backlog is recorded as
# missed (a 5-minute schedule reaches it after 34 days down).
MAX_BACKLOG_SLOTS = 10000


class ConcurrentUpdate(Exception):
    """A compare-and-set matched fewer policies than were claimed."""


@dataclasses.dataclass
class Plan:
    """What one tick writes: policy advances and new executions."""

    advances: list = dataclasses.field(default_factory=list)
    executions: list = dataclasses.field(default_factory=list)
    # Ids of the runs (recorded DISPATCHED), to cast after the commit.
    runs: list = dataclasses.field(default_factory=list)
    missed: int = 0
    finished: int = 0
    # The EXPIRED and excluded records, announced after the commit.
    expired: list = dataclasses.field(default_factory=list)
    excluded: int = 0
    # (policy_id, db_protection.Outcome) of each EXPIRED, to announce.
    outcomes: list = dataclasses.field(default_factory=list)


@dataclasses.dataclass
class TickResult:
    claimed: int
    runs: list
    missed: int
    finished: int
    # The batch was full: more policies may be due right now.
    full: bool
    expired: list = dataclasses.field(default_factory=list)
    excluded: int = 0
    # (policy_id, db_protection.Outcome) of each EXPIRED, to announce.
    outcomes: list = dataclasses.field(default_factory=list)


# One entry per distinct (schedule, time zone, bounds): 'H H * * *' in one
# zone resolves to 1,440 of them however many policies use it.
@functools.lru_cache(maxsize=8192)
def _parse(schedule_type, expression, timezone, start_at, end_at, hash_key):
    return schedule.parse_schedule(schedule_type, expression, timezone,
                                   start_at, end_at, hash_key)


def get_schedule(row):
    """The parsed schedule of a policy row, shared where possible.

    Policies that share expression, time zone and bounds share one parsed
    object.  A hashed cron schedule is read in its resolved form (its ``H``
    fields filled in when the policy was stored), which many policies
    share; only a row without one (written by an older release during an
    upgrade) is hashed here, per policy.
    """
    resolved = getattr(row, 'resolved_schedule', None)
    if resolved:
        return _parse(row.schedule_type, resolved, row.timezone,
                      row.start_at, row.end_at, None)
    hashed = schedule.needs_hash_key(row.schedule_type, row.schedule)
    return _parse(row.schedule_type, row.schedule, row.timezone,
                  row.start_at, row.end_at, row.id if hashed else None)


def find_latest_slot(sched, due, now):
    """Walk from ``due`` to the last slot at or before ``now``.

    Returns ``(latest, following, skipped)``: the most recent slot that has
    come, the first slot after ``now`` (None when the schedule has no more
    runs) and how many slots between ``due`` and ``latest`` were passed
    over.  In the usual case ``latest == due`` and this is one computation.
    """
    latest, following, passed = due, sched.next_time(due), 0
    while following is not None and following <= now:
        passed += 1
        if passed > MAX_BACKLOG_SLOTS:
            return latest, sched.next_time(now), passed
        latest, following = following, sched.next_time(following)
    return latest, following, passed


def _finished_reason(sched, remaining_runs):
    if remaining_runs == 0:
        return 'completed: no runs remaining'
    if sched.type == schedule.ONCE:
        return 'completed: the one-off run is done'
    return 'completed: no run before end_at (%s)' % sched.end_at.isoformat()


def new_execution_ids():
    """An endless supply of random (version 4) UUIDs, as strings.

    What uuid4() gives, read from the OS's random source 256 at a time: a
    tick needs one per due policy, and uuid4() per id (a system call, a
    UUID object, its formatting) was 5% of an engine's CPU in a burst.
    """
    while True:
        text = os.urandom(16 * 256).hex()
        for start in range(0, len(text), 32):
            part = text[start:start + 32]
            # Version 4 in the 13th digit; variant 10xx in the 17th.
            yield '%s-%s-4%s-%s%s-%s' % (
                part[:8], part[8:12], part[13:16],
                '89ab'[int(part[16], 16) & 3], part[17:20], part[20:])


@functools.lru_cache(maxsize=4096)
def _parse_exclusions(texts):
    if isinstance(texts, str):
        # As stored: a JSON list, decoded here once per distinct value
        # rather than once per row (see claim_due_policies).
        texts = json.loads(texts)
    return windows.parse_exclusions(list(texts) if texts else None)


def exclusions_key(row):
    """A policy's exclusions as a hashable key: stored text or a tuple."""
    texts = getattr(row, 'exclusions', None)
    if not texts:
        return ()
    return texts if isinstance(texts, str) else tuple(texts)


def get_exclusions(row, key=None):
    """The parsed exclusion windows of a policy row (cached by text)."""
    key = exclusions_key(row) if key is None else key
    if not key:
        return ()
    try:
        return _parse_exclusions(key)
    except (windows.InvalidExclusion, ValueError) as exc:
        # Validated when stored; a rule that changed since must not stop
        # the policy's backups.
        LOG.warning('Backup policy %s: its exclusions are ignored: %s',
                    row.id, exc)
        return ()


def _execution(row, scheduled_at, status, reason, now, execution_id,
               deadlines=(None, None)):
    # Positional: a named tuple built from keywords costs twice as much,
    # and a burst builds one per due policy.
    return db_scheduling.NewExecution(
        execution_id, row.id, row.project_id, row.instance_id,
        scheduled_at, enums.ExecutionTrigger.SCHEDULE, status, reason, 0,
        now,
        now if status == enums.ExecutionStatus.DISPATCHED else None,
        now if status in enums.ExecutionStatus.FINISHED else None,
        deadlines[0], deadlines[1])


@dataclasses.dataclass(frozen=True)
class SlotOutcome:
    """What a due slot becomes, the same for every policy that shares it.

    Policies share an outcome when they share the parsed schedule, the
    due time, the catch-up window, the start and completion windows and
    the exclusions: then everything but the ids and ``remaining_runs`` is
    the same, and a burst of 100,000 policies on a few schedules computes
    a handful of outcomes, not 100,000.
    """

    latest: datetime.datetime
    following: typing.Optional[datetime.datetime]
    passed: int
    # The latest slot is within the catch-up window.
    runs: bool
    excluded: typing.Optional[windows.Exclusion] = None
    deadlines: tuple = (None, None)
    # Its start window ended before now: EXPIRED, not run.
    expired: bool = False
    reason: typing.Optional[str] = None


def slot_outcome(sched, due, now, catchup_window, start_window,
                 completion_window, exclusions):
    """The :class:`SlotOutcome` of a slot due at ``due``, seen at ``now``."""
    latest, following, passed = find_latest_slot(sched, due, now)
    runs = now - latest <= datetime.timedelta(seconds=catchup_window)
    if not runs:
        return SlotOutcome(latest, following, passed, False)
    excluded = windows.excluded_by(exclusions, latest, sched.zone)
    if excluded is not None:
        return SlotOutcome(latest, following, passed, True, excluded,
                           reason='%s: %s' % (EXCLUDED, excluded.text))
    interval = (None if following is None
                else (following - latest).total_seconds())
    deadlines = windows.slot_deadlines(start_window, completion_window, None,
                                       latest, interval=interval)
    if now > deadlines[0]:
        return SlotOutcome(
            latest, following, passed, True, None, deadlines, True,
            'start window ended at %s, before the slot could be started'
            % deadlines[0].isoformat())
    reason = ('coalesced %d missed runs since %s' % (passed, due.isoformat())
              if passed else None)
    return SlotOutcome(latest, following, passed, True, None, deadlines,
                       False, reason)


def _schedule_or_error(row):
    try:
        return get_schedule(row)
    except exception.InvalidSchedule as exc:
        return exc


def plan_batch(rows, now, default_catchup_window):
    """Decide what each claimed policy's due slot becomes.  No I/O.

    For a policy due at ``due``:

    * the slots from ``due`` up to now coalesce: only the most recent one,
      ``latest``, can run;
    * it runs if ``now - latest`` is within the policy's catch-up window,
      else nothing runs.  A run is recorded DISPATCHED, stamped ``now``:
      it is cast right after the commit, and writing its status after
      the cast would be one more statement per run that can fail once
      the message is gone (doc/source/contributor/exactly-once.rst, "Row
      locks");
    * slots passed over without running are recorded as one SKIPPED
      execution at ``due`` with the reason ``missed`` -- never dropped
      silently;
    * a slot that would run but falls in one of the policy's exclusion
      windows is recorded SKIPPED with the reason ``excluded: <window>``
      (not moved: see doc/source/user/windows.rst); one whose start window
      has already ended (a catch-up window longer than the start window)
      is recorded EXPIRED.  A run carries its start and completion
      deadlines (``windows.slot_deadlines``);
    * a run uses up one of ``remaining_runs``; a policy with no runs left,
      or no run before ``end_at``, is disabled with the reason in
      ``paused_reason``.

    All of it but the ids and ``remaining_runs`` is worked out once per
    distinct schedule, due time and windows (:func:`slot_outcome`), and
    shared by the policies of the batch that have them in common.
    """
    plan = Plan()
    schedules = {}
    outcomes = {}
    new_id = new_execution_ids().__next__
    for row in rows:
        due = row.next_execution_time
        resolved = getattr(row, 'resolved_schedule', None)
        schedule_key = (row.schedule_type, resolved or row.schedule,
                        row.timezone, row.start_at, row.end_at)
        sched = schedules.get(schedule_key)
        if sched is None:
            sched = _schedule_or_error(row)
            # An unresolved hashed schedule is the policy's own.
            if resolved or not schedule.needs_hash_key(row.schedule_type,
                                                       row.schedule):
                schedules[schedule_key] = sched
        if isinstance(sched, exception.InvalidSchedule):
            # Stored before a rule changed, or a time zone left the tz
            # database: stop, and say why, rather than fail every tick.
            LOG.warning('Disabling backup policy %s: its schedule is no '
                        'longer valid: %s', row.id, sched)
            plan.advances.append(db_scheduling.PolicyAdvance(
                row.id, due, None, row.remaining_runs, False,
                'schedule error: %s' % sched, None))
            plan.finished += 1
            continue
        window = (row.catchup_window if row.catchup_window is not None
                  else default_catchup_window)
        start_window = getattr(row, 'start_window', None)
        completion_window = getattr(row, 'completion_window', None)
        texts = exclusions_key(row)
        # Per policy, so that one whose exclusions no longer parse is
        # named in the warning (the parsed ones are cached).
        exclusions = get_exclusions(row, texts) if texts else ()
        key = (sched.share_key, due, window, start_window,
               completion_window, texts)
        outcome = outcomes.get(key)
        if outcome is None:
            outcome = outcomes[key] = slot_outcome(
                sched, due, now, window, start_window, completion_window,
                exclusions)

        remaining = row.remaining_runs
        last_execution_id = None
        if outcome.passed or not outcome.runs:
            missed = _execution(row, due, enums.ExecutionStatus.SKIPPED,
                                MISSED, now, new_id())
            plan.executions.append(missed)
            last_execution_id = missed.id
            plan.missed += 1
        if outcome.excluded is not None:
            skipped = _execution(row, outcome.latest,
                                 enums.ExecutionStatus.SKIPPED,
                                 outcome.reason, now, new_id())
            plan.executions.append(skipped)
            plan.excluded += 1
            last_execution_id = skipped.id
        elif outcome.expired:
            expired = _execution(row, outcome.latest,
                                 enums.ExecutionStatus.EXPIRED,
                                 outcome.reason, now, new_id(),
                                 outcome.deadlines)
            plan.executions.append(expired)
            plan.expired.append(expired)
            last_execution_id = expired.id
        elif outcome.runs:
            run = _execution(row, outcome.latest,
                             enums.ExecutionStatus.DISPATCHED,
                             outcome.reason, now, new_id(),
                             outcome.deadlines)
            plan.executions.append(run)
            plan.runs.append(run.id)
            last_execution_id = run.id
            if remaining is not None:
                remaining = max(remaining - 1, 0)

        following = outcome.following
        enabled = following is not None and remaining != 0
        paused_reason = None
        if not enabled:
            paused_reason = _finished_reason(sched, remaining)
            plan.finished += 1
        plan.advances.append(db_scheduling.PolicyAdvance(
            row.id, due, following if enabled else None, remaining,
            enabled, paused_reason, last_execution_id))
    return plan


@oslo_db_api.wrap_db_retry(max_retries=5, retry_on_deadlock=True)
def run_tick(context, now, batch_size, default_catchup_window):
    """One tick in one transaction.  Returns a :class:`TickResult`.

    Raises :class:`ConcurrentUpdate` (and rolls back) if a policy changed
    between the claim and the compare-and-set, which only SQLite, without
    row locks, allows; the next tick takes the batch again.
    """
    with db_api.writer_transaction(context):
        rows = db_scheduling.claim_due_policies(context, now, batch_size)
        if not rows:
            return TickResult(0, [], 0, 0, False)
        plan = plan_batch(rows, now, default_catchup_window)
        matched, inserted = db_scheduling.record_tick(
            context, plan.advances, plan.executions, now)
        if matched != len(plan.advances):
            raise ConcurrentUpdate(
                '%d of %d claimed policies changed before they could be '
                'advanced' % (len(plan.advances) - matched,
                              len(plan.advances)))
        if 0 <= inserted < len(plan.executions):
            # MySQL may count a skipped row as found: this under-reports.
            LOG.warning('%d due slots already had their execution and '
                        'were not run again (a policy resumed or changed '
                        'by a host whose clock is behind this one?)',
                        len(plan.executions) - inserted)
        # An EXPIRED slot counts on its policy as a failed one (the streak,
        # the pause after failures, the protection state), in this
        # transaction: once, with the slot.  The claim locked the policy.
        outcomes = [(expired.policy_id, db_protection.record_outcome(
            context, expired.id, enums.ExecutionStatus.EXPIRED, now))
            for expired in plan.expired]
    return TickResult(len(rows), plan.runs, plan.missed, plan.finished,
                      len(rows) == batch_size, plan.expired, plan.excluded,
                      outcomes)
