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
"""Planning a tick: slots, catch-up, coalescing, limits.  No database."""

import collections
import datetime
from unittest import mock
import uuid

import hypothesis
from oslotest import base

from dbaas_scheduler.engine import tick
from dbaas_scheduler import exception
from dbaas_scheduler import schedule
from dbaas_scheduler import windows

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 12, 0, 0, 250000, tzinfo=UTC)

Row = collections.namedtuple('Row', (
    'id', 'project_id', 'instance_id', 'schedule_type', 'schedule',
    'resolved_schedule', 'timezone', 'start_at', 'end_at', 'remaining_runs',
    'catchup_window', 'next_execution_time'))


def _row(schedule='0 * * * *', due=None, schedule_type='cron', **kwargs):
    values = dict(id=str(uuid.uuid4()), project_id='project',
                  instance_id='instance', schedule_type=schedule_type,
                  schedule=schedule, resolved_schedule=None,
                  timezone='UTC', start_at=None,
                  end_at=None, remaining_runs=None, catchup_window=None,
                  next_execution_time=due or NOW.replace(microsecond=0,
                                                         minute=0))
    values.update(kwargs)
    return Row(**values)


def _executions(plan):
    return [row._asdict() for row in plan.executions]


def _advances(plan):
    return [row._asdict() for row in plan.advances]


class TestPlanBatch(base.BaseTestCase):

    def test_on_time_slot_runs_and_advances(self):
        row = _row()
        plan = tick.plan_batch([row], NOW, 3600)
        [execution] = _executions(plan)
        self.assertEqual('DISPATCHED', execution['status'])
        self.assertEqual(NOW, execution['dispatched_at'])
        self.assertEqual(row.next_execution_time, execution['scheduled_at'])
        self.assertEqual('schedule', execution['trigger'])
        self.assertEqual(NOW, execution['created_at'])
        self.assertIsNone(execution['finished_at'])
        self.assertEqual([execution['id']], plan.runs)
        [advance] = _advances(plan)
        self.assertEqual(row.next_execution_time, advance['due'])
        self.assertEqual(NOW.replace(hour=13, minute=0, microsecond=0),
                         advance['next_execution_time'])
        self.assertTrue(advance['enabled'])
        self.assertEqual(execution['id'], advance['last_execution_id'])

    def test_backlog_coalesces_into_the_latest_slot(self):
        # Hourly, five hours behind, two-hour window: the 12:00 slot runs
        # and the four before it are one "missed" record.
        due = NOW.replace(hour=7, minute=0, microsecond=0)
        row = _row(due=due, catchup_window=7200)
        plan = tick.plan_batch([row], NOW, 3600)
        missed, run = _executions(plan)
        self.assertEqual(('SKIPPED', 'missed', due),
                         (missed['status'], missed['status_reason'],
                          missed['scheduled_at']))
        self.assertEqual(NOW, missed['finished_at'])
        self.assertIsNone(missed['dispatched_at'])
        self.assertEqual('DISPATCHED', run['status'])
        self.assertEqual(NOW.replace(minute=0, microsecond=0),
                         run['scheduled_at'])
        self.assertIn('coalesced 5 missed runs', run['status_reason'])
        [advance] = _advances(plan)
        self.assertEqual(NOW.replace(hour=13, minute=0, microsecond=0),
                         advance['next_execution_time'])
        self.assertEqual(run['id'], advance['last_execution_id'])
        self.assertEqual(1, plan.missed)

    def test_slot_later_than_the_window_is_recorded_missed(self):
        due = NOW - datetime.timedelta(hours=3)
        row = _row(schedule='0 9 * * *', due=due)
        plan = tick.plan_batch([row], NOW, 3600)
        [missed] = _executions(plan)
        self.assertEqual(('SKIPPED', 'missed'),
                         (missed['status'], missed['status_reason']))
        self.assertEqual([], plan.runs)
        [advance] = _advances(plan)
        self.assertEqual(datetime.datetime(2026, 11, 23, 9, tzinfo=UTC),
                         advance['next_execution_time'])
        self.assertEqual(missed['id'], advance['last_execution_id'])

    def test_policy_window_overrides_the_default(self):
        due = NOW - datetime.timedelta(minutes=30)
        late = _row(schedule='0 9 * * *', due=due, catchup_window=60)
        lenient = _row(schedule='0 9 * * *', due=due)
        plan = tick.plan_batch([late, lenient], NOW, 3600)
        statuses = {e['policy_id']: e['status'] for e in _executions(plan)}
        self.assertEqual({late.id: 'SKIPPED', lenient.id: 'DISPATCHED'},
                         statuses)

    def test_zero_window_still_runs_on_time(self):
        row = _row(due=NOW, catchup_window=0)
        self.assertEqual(1, len(tick.plan_batch([row], NOW, 3600).runs))

    def test_remaining_runs_count_down_and_disable(self):
        row = _row(remaining_runs=2)
        [advance] = _advances(tick.plan_batch([row], NOW, 3600))
        self.assertEqual((1, True),
                         (advance['remaining_runs'], advance['enabled']))
        last = _row(remaining_runs=1)
        [advance] = _advances(tick.plan_batch([last], NOW, 3600))
        self.assertEqual((0, False, None),
                         (advance['remaining_runs'], advance['enabled'],
                          advance['next_execution_time']))
        self.assertEqual('completed: no runs remaining',
                         advance['paused_reason'])

    def test_missed_slot_does_not_use_a_run(self):
        row = _row(schedule='0 9 * * *', due=NOW - datetime.timedelta(
            hours=3), remaining_runs=1)
        [advance] = _advances(tick.plan_batch([row], NOW, 3600))
        self.assertEqual((1, True),
                         (advance['remaining_runs'], advance['enabled']))

    def test_end_at_disables_after_the_last_run(self):
        row = _row(end_at=NOW + datetime.timedelta(minutes=30))
        plan = tick.plan_batch([row], NOW, 3600)
        self.assertEqual(1, len(plan.runs))
        [advance] = _advances(plan)
        self.assertFalse(advance['enabled'])
        self.assertIsNone(advance['next_execution_time'])
        self.assertIn('no run before end_at', advance['paused_reason'])
        self.assertEqual(1, plan.finished)

    def test_once_runs_once(self):
        due = NOW - datetime.timedelta(seconds=2)
        row = _row(schedule_type='once', schedule=due.isoformat(), due=due)
        plan = tick.plan_batch([row], NOW, 3600)
        self.assertEqual(1, len(plan.runs))
        [advance] = _advances(plan)
        self.assertFalse(advance['enabled'])
        self.assertEqual('completed: the one-off run is done',
                         advance['paused_reason'])

    def test_interval(self):
        start = NOW - datetime.timedelta(seconds=30)
        row = _row(schedule_type='interval', schedule='20', start_at=start,
                   due=start + datetime.timedelta(seconds=20))
        plan = tick.plan_batch([row], NOW, 3600)
        [execution] = _executions(plan)
        self.assertEqual(start + datetime.timedelta(seconds=20),
                         execution['scheduled_at'])
        [advance] = _advances(plan)
        self.assertEqual(start + datetime.timedelta(seconds=40),
                         advance['next_execution_time'])

    def test_invalid_schedule_disables_without_execution(self):
        row = _row(timezone='Nowhere/Atlantis')
        plan = tick.plan_batch([row], NOW, 3600)
        self.assertEqual([], plan.executions)
        [advance] = _advances(plan)
        self.assertFalse(advance['enabled'])
        self.assertIn('schedule error', advance['paused_reason'])
        self.assertIn('Nowhere/Atlantis', advance['paused_reason'])

    def test_policies_sharing_a_schedule_share_the_computation(self):
        rows = [_row(schedule='30 2 * * *', timezone='Europe/Berlin',
                     due=NOW - datetime.timedelta(seconds=1))
                for _ in range(50)]
        with mock.patch.object(tick, 'find_latest_slot',
                               wraps=tick.find_latest_slot) as find:
            plan = tick.plan_batch(rows, NOW, 3600)
        self.assertEqual(50, len(plan.runs))
        self.assertEqual(1, find.call_count)

    def test_hashed_policies_share_by_their_expansion(self):
        rows = [_row(schedule='H 2 * * *', due=NOW) for _ in range(200)]
        with mock.patch.object(tick, 'find_latest_slot',
                               wraps=tick.find_latest_slot) as find:
            tick.plan_batch(rows, NOW, 3600)
        # At most one computation per distinct hashed minute.
        self.assertLessEqual(find.call_count, 60)
        self.assertGreater(find.call_count, 20)

    def test_resolved_hashed_schedules_share_their_parse(self):
        rows = []
        for _ in range(500):
            row = _row(schedule='H H * * *')
            rows.append(row._replace(
                resolved_schedule=schedule.resolve_hashed_fields(
                    'cron', row.schedule, row.id)))
        tick._parse.cache_clear()
        plan = tick.plan_batch(rows, NOW, 3600)
        self.assertEqual(500, len(plan.advances))
        distinct = len({row.resolved_schedule for row in rows})
        self.assertEqual(distinct, tick._parse.cache_info().misses)
        self.assertLess(distinct, 500)


class TestFindLatestSlot(base.BaseTestCase):

    def test_long_backlog_jumps_ahead(self):
        sched = schedule.parse_schedule('cron', '* * * * *', 'UTC')
        due = NOW - datetime.timedelta(days=30)
        latest, following, passed = tick.find_latest_slot(sched, due, NOW)
        self.assertGreater(passed, tick.MAX_BACKLOG_SLOTS)
        self.assertEqual(NOW.replace(minute=1, second=0, microsecond=0),
                         following)
        self.assertLess(latest, NOW)


class TestExecutionIds(base.BaseTestCase):

    def test_random_version_4_uuids(self):
        source = tick.new_execution_ids()
        ids = [next(source) for _ in range(5000)]
        self.assertEqual(len(ids), len(set(ids)))
        variants = collections.Counter()
        for text in ids:
            parsed = uuid.UUID(text)
            self.assertEqual(text, str(parsed))
            self.assertEqual(4, parsed.version)
            self.assertEqual(uuid.RFC_4122, parsed.variant)
            variants[text[19]] += 1
        # The variant digit takes each of its four values.
        self.assertEqual(set('89ab'), set(variants))
        # Every hex digit appears in the random part.
        self.assertEqual(set('0123456789abcdef'),
                         set(''.join(text[:8] for text in ids)))


WindowRow = collections.namedtuple('WindowRow', Row._fields + (
    'start_window', 'completion_window', 'exclusions'))


def _window_row(start_window=None, completion_window=None, exclusions=None,
                **kwargs):
    return WindowRow(**_row(**kwargs)._asdict(), start_window=start_window,
                     completion_window=completion_window,
                     exclusions=exclusions)


class TestWindows(base.BaseTestCase):
    """Exclusion windows and start windows in the tick's plan."""

    def test_a_run_carries_its_deadlines(self):
        row = _window_row()
        [run] = _executions(tick.plan_batch([row], NOW, 3600))
        slot = row.next_execution_time
        # Hourly: half an hour to start, an hour to finish (the floor).
        self.assertEqual(slot + datetime.timedelta(minutes=30),
                         run['start_deadline'])
        self.assertEqual(slot + datetime.timedelta(hours=1),
                         run['completion_deadline'])

    def test_an_excluded_slot_is_skipped_not_moved(self):
        # Sunday 22 November 2026, 12:00 UTC is 13:00 in Berlin.
        row = _window_row(exclusions=['Sun 12:30-Sun 13:30'],
                          timezone='Europe/Berlin', remaining_runs=5)
        plan = tick.plan_batch([row], NOW, 3600)
        [skipped] = _executions(plan)
        self.assertEqual(('SKIPPED', 'excluded: Sun 12:30-Sun 13:30'),
                         (skipped['status'], skipped['status_reason']))
        self.assertEqual(row.next_execution_time, skipped['scheduled_at'])
        self.assertEqual(NOW, skipped['finished_at'])
        self.assertEqual([], plan.runs)
        self.assertEqual(1, plan.excluded)
        [advance] = _advances(plan)
        # Not a run: the count stays; the next slot is the usual one.
        self.assertEqual(5, advance['remaining_runs'])
        self.assertEqual(NOW.replace(hour=13, minute=0, microsecond=0),
                         advance['next_execution_time'])
        self.assertEqual(skipped['id'], advance['last_execution_id'])

    def test_the_same_wall_time_in_utc_is_not_excluded(self):
        row = _window_row(exclusions=['Sun 12:30-Sun 13:30'])
        plan = tick.plan_batch([row], NOW, 3600)
        self.assertEqual(1, len(plan.runs))

    def test_late_beyond_the_start_window_is_expired(self):
        # Ten minutes late, within the catch-up window (an hour) but not
        # within a two-minute start window.
        row = _window_row(start_window=120)
        now = row.next_execution_time + datetime.timedelta(minutes=10)
        plan = tick.plan_batch([row], now, 3600)
        [expired] = _executions(plan)
        self.assertEqual('EXPIRED', expired['status'])
        self.assertIn('start window ended at', expired['status_reason'])
        self.assertEqual(row.next_execution_time
                         + datetime.timedelta(seconds=120),
                         expired['start_deadline'])
        self.assertEqual([], plan.runs)
        self.assertEqual([expired['id']],
                         [execution.id for execution in plan.expired])

    def test_unreadable_exclusions_do_not_stop_backups(self):
        row = _window_row(exclusions=['whenever'])
        plan = tick.plan_batch([row], NOW, 3600)
        self.assertEqual(1, len(plan.runs))


def _plan_one_policy(row, now, default_catchup_window):
    """What one policy's due slot becomes, computed for it alone.

    The reference for :class:`TestSharedOutcomes`: every step per policy,
    nothing shared with another, its schedule parsed afresh.
    """
    hashed = schedule.needs_hash_key(row.schedule_type, row.schedule)
    try:
        sched = schedule.parse_schedule(
            row.schedule_type, row.resolved_schedule or row.schedule,
            row.timezone, row.start_at, row.end_at,
            row.id if hashed and not row.resolved_schedule else None)
    except exception.InvalidSchedule as exc:
        return [], ('disabled', 'schedule error: %s' % exc)
    due = row.next_execution_time
    latest, following, passed = tick.find_latest_slot(sched, due, now)
    window = (row.catchup_window if row.catchup_window is not None
              else default_catchup_window)
    runs = now - latest <= datetime.timedelta(seconds=window)
    records = []
    remaining = row.remaining_runs
    if passed or not runs:
        records.append(('SKIPPED', due, 'missed', None))
    try:
        exclusions = windows.parse_exclusions(row.exclusions)
    except windows.InvalidExclusion:
        exclusions = ()
    excluded = (windows.excluded_by(exclusions, latest, sched.zone)
                if runs else None)
    if excluded is not None:
        records.append(('SKIPPED', latest, 'excluded: %s' % excluded.text,
                        None))
    elif runs:
        interval = (None if following is None
                    else (following - latest).total_seconds())
        deadlines = windows.slot_deadlines(
            row.start_window, row.completion_window, None, latest,
            interval=interval)
        if now > deadlines[0]:
            records.append(('EXPIRED', latest, 'start window ended at %s, '
                            'before the slot could be started'
                            % deadlines[0].isoformat(), deadlines))
        else:
            records.append(('DISPATCHED', latest, (
                'coalesced %d missed runs since %s'
                % (passed, due.isoformat()) if passed else None),
                deadlines))
            if remaining is not None:
                remaining = max(remaining - 1, 0)
    enabled = following is not None and remaining != 0
    return records, (following if enabled else None, remaining, enabled)


# Instants around daylight saving changes: Europe's spring forward
# (29 March 2026, 01:00 UTC) and fall back (25 October, 01:00 UTC), New
# York's fall back (1 November, 06:00 UTC), Lord Howe's half hour.
_DST_NOWS = [datetime.datetime(2026, 3, 29, 0, 59, tzinfo=UTC),
             datetime.datetime(2026, 3, 29, 1, 30, 0, 1, tzinfo=UTC),
             datetime.datetime(2026, 10, 25, 0, 45, tzinfo=UTC),
             datetime.datetime(2026, 10, 25, 1, 5, tzinfo=UTC),
             datetime.datetime(2026, 11, 1, 6, 30, tzinfo=UTC),
             datetime.datetime(2026, 4, 5, 15, 10, tzinfo=UTC),
             NOW]
_SCHEDULES = [('cron', '30 2 * * *'), ('cron', '0 * * * *'),
              ('cron', 'H H * * *'), ('cron', 'H/15 * * * *'),
              ('cron', '*/20 1-3 * * *'), ('cron', '0 3 * * H'),
              ('interval', '90m'), ('cron', '61 * * * *')]
_TIMEZONES = ['UTC', 'Europe/Berlin', 'America/New_York',
              'Australia/Lord_Howe']


@hypothesis.strategies.composite
def _batches(draw):
    st = hypothesis.strategies

    def few(values):
        # Each batch draws from one or two of the values, so that its
        # policies share most of their settings and differ in a few.
        return st.sampled_from(draw(st.lists(
            st.sampled_from(values), min_size=1, max_size=2, unique=True)))

    now = draw(st.sampled_from(_DST_NOWS))
    policy_ids = [str(uuid.UUID(int=draw(st.integers(0, 2 ** 122)),
                                version=4)) for _ in range(2)]
    schedules, timezones = few(_SCHEDULES), few(_TIMEZONES)
    dues = few([0, 1, 1800, 3600, 3 * 3600 + 17, 86400, 9 * 86400])
    end_ats = few([None, now + datetime.timedelta(hours=2)])
    remaining, catchup = few([None, 1, 3]), few([None, 0, 600, 7200])
    start_windows, completion_windows = few([None, 60, 3600]), few(
        [None, 7200])
    exclusions = few([None, ('Sun 00:00-Sun 06:00',), ('02:00-03:00',),
                      ('2026-03-29',), ('whenever',)])
    rows = []
    for _ in range(draw(st.integers(1, 25))):
        schedule_type, text = draw(schedules)
        policy_id = draw(st.sampled_from(policy_ids))
        resolved = None
        if draw(st.booleans()) and schedule.needs_hash_key(schedule_type,
                                                           text):
            resolved = schedule.resolve_hashed_fields(schedule_type, text,
                                                      policy_id)
        rows.append(WindowRow(
            id=policy_id, project_id='project', instance_id='instance',
            schedule_type=schedule_type, schedule=text,
            resolved_schedule=resolved, timezone=draw(timezones),
            # An interval counts from start_at.
            start_at=(now - datetime.timedelta(days=20, seconds=7)
                      if schedule_type == 'interval' else None),
            end_at=draw(end_ats), remaining_runs=draw(remaining),
            catchup_window=draw(catchup),
            next_execution_time=now - datetime.timedelta(
                seconds=draw(dues)),
            start_window=draw(start_windows),
            completion_window=draw(completion_windows),
            exclusions=draw(exclusions)))
    return now, rows


class TestSharedOutcomes(base.BaseTestCase):
    """A batch's shared computation is what each policy would get alone."""

    @hypothesis.settings(max_examples=150, deadline=None,
                         suppress_health_check=[
                             hypothesis.HealthCheck.too_slow])
    @hypothesis.given(_batches(), hypothesis.strategies.sampled_from(
        [600, 3600, 2 * 86400]))
    def test_the_same_as_one_policy_at_a_time(self, batch, default_window):
        now, rows = batch
        with mock.patch.object(tick, 'LOG', autospec=True):
            plan = tick.plan_batch(rows, now, default_window)
        executions = iter(plan.executions)
        self.assertEqual(len(rows), len(plan.advances))
        for row, advance in zip(rows, plan.advances):
            records, expected = _plan_one_policy(row, now, default_window)
            got = [next(executions) for _ in records]
            self.assertEqual(
                records,
                [(execution.status, execution.scheduled_at,
                  execution.status_reason,
                  None if execution.status == 'SKIPPED' else
                  (execution.start_deadline, execution.completion_deadline))
                 for execution in got])
            for execution in got:
                self.assertEqual((row.id, now), (execution.policy_id,
                                                 execution.created_at))
            if expected[0] == 'disabled':
                self.assertEqual((None, False, expected[1]),
                                 (advance.next_execution_time,
                                  advance.enabled, advance.paused_reason))
                continue
            self.assertEqual(expected, (advance.next_execution_time,
                                        advance.remaining_runs,
                                        advance.enabled))
            self.assertEqual(got[-1].id if got else None,
                             advance.last_execution_id)
            self.assertEqual(row.next_execution_time, advance.due)
        self.assertIsNone(next(executions, None))
        self.assertEqual(
            [execution.id for execution in plan.executions
             if execution.status == 'DISPATCHED'], plan.runs)
