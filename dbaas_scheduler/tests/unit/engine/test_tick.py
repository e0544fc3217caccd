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

from oslotest import base

from dbaas_scheduler.engine import tick
from dbaas_scheduler import schedule

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
