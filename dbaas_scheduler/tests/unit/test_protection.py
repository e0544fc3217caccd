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
"""The protection maths: state, when it next changes, default RPO."""

import datetime
import types

from dbaas_scheduler import exception
from dbaas_scheduler.objects import protection as protection_obj
from dbaas_scheduler import protection
from dbaas_scheduler import schedule
from dbaas_scheduler.tests import base

UTC = datetime.timezone.utc
T0 = datetime.datetime(2026, 11, 23, 1, 30, tzinfo=UTC)
HOUR = datetime.timedelta(hours=1)
DAY = 24 * 3600


class TestEvaluate(base.TestCase):

    def test_no_rpo_no_state(self):
        self.assertEqual((None, None),
                         protection.evaluate(T0, None, None, T0))

    def test_ok_until_the_latest_moment_a_backup_can_still_end(self):
        until = T0 + 36 * HOUR
        state, check_at = protection.evaluate(
            T0, until, 36 * 3600, T0 + 24 * HOUR, lateness=60,
            duration=600)
        self.assertEqual(protection.OK, state)
        # Ten minutes of duration and a tenth of 36 hours of headroom.
        self.assertEqual(until - datetime.timedelta(seconds=600)
                         - datetime.timedelta(hours=3.6), check_at)
        # At that moment, with nothing renewed, it is at risk.
        self.assertEqual(
            (protection.AT_RISK, until),
            protection.evaluate(check_at, until, 36 * 3600,
                                T0 + 24 * HOUR, 60, 600))

    def test_a_next_slot_that_ends_too_late_is_at_risk_now(self):
        until = T0 + 36 * HOUR
        # Slot at +33 h, 30 min late, 1 h long: ends after the 32.4 h
        # the headroom leaves.
        self.assertEqual(
            (protection.AT_RISK, until),
            protection.evaluate(T0, until, 36 * 3600, T0 + 33 * HOUR,
                                1800, 3600))

    def test_failing_or_nothing_to_come_is_at_risk(self):
        until = T0 + 36 * HOUR
        self.assertEqual(protection.AT_RISK, protection.evaluate(
            T0, until, 36 * 3600, T0 + HOUR, failing=True).state)
        self.assertEqual(protection.AT_RISK, protection.evaluate(
            T0, until, 36 * 3600, None).state)

    def test_breached_from_protected_until_on_and_for_good(self):
        until = T0 + 36 * HOUR
        self.assertEqual((protection.BREACHED, None), protection.evaluate(
            until, until, 36 * 3600, until + HOUR))

    def test_time_alone_only_moves_forward(self):
        until = T0 + 36 * HOUR
        order = {protection.OK: 0, protection.AT_RISK: 1,
                 protection.BREACHED: 2}
        seen = []
        now = T0
        while now <= until + HOUR:
            seen.append(order[protection.evaluate(
                now, until, 36 * 3600, T0 + 24 * HOUR, 30, 300).state])
            now += datetime.timedelta(minutes=7)
        self.assertEqual(sorted(seen), seen)
        self.assertEqual({0, 1, 2}, set(seen))

    def test_protected_until_counts_from_the_baseline_first(self):
        self.assertEqual(T0 + HOUR, protection.protected_until(
            None, T0, 3600))
        self.assertEqual(T0 + 2 * HOUR, protection.protected_until(
            T0 + HOUR, T0, 3600))
        self.assertIsNone(protection.protected_until(T0, T0, None))


class TestPercentiles(base.TestCase):

    def test_nearest_rank(self):
        self.assertEqual(0.0, protection.percentile([]))
        self.assertEqual(19.0, protection.percentile(range(1, 21)))
        self.assertEqual(7.0, protection.percentile([7]))

    def test_lateness_and_duration(self):
        samples = [(T0, T0 + datetime.timedelta(seconds=late),
                    T0 + datetime.timedelta(seconds=late + took))
                   for late, took in [(5, 100)] * 19 + [(90, 900)]]
        # A manual run started before its nominal time: 0 s late.
        samples.append((T0, T0 - datetime.timedelta(seconds=10),
                        T0 + datetime.timedelta(seconds=90)))
        samples.append((T0, None, None))
        # 21 runs: the 20th of each, sorted, is the p95 -- the one slow
        # run is not.
        self.assertEqual((5.0, 100.0),
                         protection.lateness_and_duration(samples))


class TestDefaultRpo(base.TestCase):

    def rpo(self, schedule_type, expression, timezone='UTC', now=T0):
        sched = schedule.parse_schedule(schedule_type, expression, timezone,
                                        start_at=now)
        return protection_obj.default_rpo(sched, now)

    def test_daily_is_a_day_and_a_half(self):
        self.assertEqual(int(1.5 * DAY), self.rpo('cron', '30 2 * * *'))

    def test_weekdays_count_the_weekend_gap(self):
        self.assertEqual(int(1.5 * 3 * DAY), self.rpo('cron', '0 2 * * 1-5'))

    def test_interval(self):
        self.assertEqual(5400, self.rpo('interval', '3600'))

    def test_daylight_saving_lengthens_the_day_it_ends(self):
        # 02:30 Berlin around 25 October 2026: that day has 25 hours.
        now = datetime.datetime(2026, 10, 20, tzinfo=UTC)
        self.assertEqual(int(1.5 * 25 * 3600),
                         self.rpo('cron', '30 1 * * *', 'Europe/Berlin',
                                  now))
        # New York's day of 4 November 2026 ends an hour later too.
        now = datetime.datetime(2026, 10, 30, tzinfo=UTC)
        self.assertEqual(int(1.5 * 25 * 3600),
                         self.rpo('cron', '0 0 * * *', 'America/New_York',
                                  now))

    def test_once_has_no_default(self):
        sched = schedule.parse_schedule('once', '2027-01-01T00:00:00Z')
        self.assertIsNone(protection_obj.default_rpo(sched, T0))
        self.assertEqual(600, protection_obj.effective_rpo(600, sched, T0))

    def test_check_rpo(self):
        protection_obj.check_rpo(None)
        protection_obj.check_rpo(60)
        for wrong in (59, True, 1.5, '3600', 10 ** 10):
            self.assertRaises(exception.Invalid, protection_obj.check_rpo,
                              wrong)


class TestCoverage(base.TestCase):

    def test_a_failed_slot_is_covered_or_leaves_a_gap(self):
        sched = schedule.parse_schedule('cron', '0 1 * * *', 'UTC')
        last = T0 - HOUR
        policy = types.SimpleNamespace(
            effective_rpo=int(1.5 * DAY), protection='ok',
            last_success_at=last,
            protected_until=last + datetime.timedelta(seconds=1.5 * DAY),
            lateness_p95=60.0, duration_p95=540.0)
        coverage = protection_obj.rpo_coverage(policy, sched, 3, T0)
        slots = coverage['slots']
        self.assertEqual(3, len(slots))
        first = slots[0]
        self.assertEqual(datetime.datetime(2026, 11, 24, 1, tzinfo=UTC),
                         first['scheduled_at'])
        self.assertEqual(first['scheduled_at'] + 10 * datetime.timedelta(
            minutes=1), first['expected_end'])
        # If it fails, the protection ends before the next one can renew
        # it: a gap from protected_until to that backup's end.
        self.assertEqual(
            {'from': policy.protected_until,
             'to': slots[1]['scheduled_at'] + 10 * datetime.timedelta(
                 minutes=1)},
            first['breach_if_fails'])
        # With a three-day RPO one failed night is covered.
        policy.effective_rpo = 3 * DAY
        policy.protected_until = last + datetime.timedelta(days=3)
        coverage = protection_obj.rpo_coverage(policy, sched, 3, T0)
        self.assertIsNone(coverage['slots'][0]['breach_if_fails'])

    def test_no_rpo_no_slots(self):
        policy = types.SimpleNamespace(
            effective_rpo=None, protection=None, last_success_at=None,
            protected_until=None, lateness_p95=None, duration_p95=None)
        sched = schedule.parse_schedule('cron', '0 1 * * *', 'UTC')
        self.assertEqual([], protection_obj.rpo_coverage(
            policy, sched, 3, T0)['slots'])
