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
"""Cron, interval and once schedules: run times, aliases, H, bounds."""

import collections
import datetime
import hashlib
import random
import uuid

from oslotest import base

from dbaas_scheduler import cron
from dbaas_scheduler import exception
from dbaas_scheduler import schedule
from dbaas_scheduler import timezones

UTC = datetime.timezone.utc


def utc(text):
    """'2025-03-30 01:00' -> aware UTC datetime."""
    return datetime.datetime.fromisoformat(text).replace(tzinfo=UTC)


def runs(sched, after, count):
    return [t.strftime('%Y-%m-%d %H:%M') for t in
            schedule.next_times(sched, utc(after), count)]


class TestCronRunTimes(base.BaseTestCase):

    def test_every_alias_has_its_classic_meaning(self):
        # Given a hash key (as every policy has), aliases must still mean
        # midnight / the top of the hour, not a hashed minute.
        expected = {
            '@hourly': ['2025-01-15 11:00', '2025-01-15 12:00'],
            '@daily': ['2025-01-16 00:00', '2025-01-17 00:00'],
            '@midnight': ['2025-01-16 00:00', '2025-01-17 00:00'],
            # 2025-01-19 is a Sunday.
            '@weekly': ['2025-01-19 00:00', '2025-01-26 00:00'],
            '@monthly': ['2025-02-01 00:00', '2025-03-01 00:00'],
            '@yearly': ['2026-01-01 00:00', '2027-01-01 00:00'],
            '@annually': ['2026-01-01 00:00', '2027-01-01 00:00'],
        }
        self.assertEqual(set(schedule.CRON_ALIASES), set(expected))
        for alias, times in expected.items():
            sched = schedule.parse_schedule('cron', alias, 'UTC',
                                            hash_key=str(uuid.uuid4()))
            self.assertEqual(times, runs(sched, '2025-01-15 10:30', 2),
                             alias)

    def test_alias_is_case_and_space_insensitive(self):
        sched = schedule.parse_schedule('cron', '  @DAILY ', 'UTC')
        self.assertEqual(['2025-01-16 00:00'],
                         runs(sched, '2025-01-15 10:30', 1))

    def test_five_field_expression(self):
        sched = schedule.parse_schedule('cron', '15 2,14 * * 1-5', 'UTC')
        # 2025-01-17 is a Friday: the next run after its 14:15 is Monday.
        self.assertEqual(
            ['2025-01-17 14:15', '2025-01-20 02:15', '2025-01-20 14:15'],
            runs(sched, '2025-01-17 03:00', 3))

    def test_names_of_days_and_months(self):
        sched = schedule.parse_schedule('cron', '0 3 * MAR THU', 'UTC')
        self.assertEqual(['2025-03-06 03:00', '2025-03-13 03:00'],
                         runs(sched, '2025-01-01 00:00', 2))

    def test_result_is_strictly_after(self):
        sched = schedule.parse_schedule('cron', '30 2 * * *', 'UTC')
        self.assertEqual(['2025-01-16 02:30'],
                         runs(sched, '2025-01-15 02:30', 1))
        at_micro = utc('2025-01-15 02:29:59.999999')
        self.assertEqual(utc('2025-01-15 02:30'),
                         schedule.next_time(sched, at_micro))

    def test_leap_day(self):
        sched = schedule.parse_schedule('cron', '0 0 29 2 *', 'UTC')
        self.assertEqual(['2028-02-29 00:00', '2032-02-29 00:00'],
                         runs(sched, '2025-01-01 00:00', 2))

    def test_thirty_first_skips_short_months(self):
        sched = schedule.parse_schedule('cron', '0 0 31 * *', 'UTC')
        self.assertEqual(
            ['2025-01-31 00:00', '2025-03-31 00:00', '2025-05-31 00:00',
             '2025-07-31 00:00', '2025-08-31 00:00', '2025-10-31 00:00',
             '2025-12-31 00:00'],
            runs(sched, '2025-01-01 00:00', 7))

    def test_last_day_of_month(self):
        sched = schedule.parse_schedule('cron', '0 1 L * *', 'UTC')
        self.assertEqual(['2025-02-28 01:00', '2025-03-31 01:00'],
                         runs(sched, '2025-02-01 00:00', 2))

    def test_local_time_zone_is_stored_as_utc(self):
        sched = schedule.parse_schedule('cron', '0 9 * * *', 'Asia/Tokyo')
        first = schedule.next_time(sched, utc('2025-01-15 00:30'))
        self.assertEqual(utc('2025-01-16 00:00'), first)
        self.assertIs(UTC, first.tzinfo)
        self.assertEqual('Asia/Tokyo', sched.timezone)

    def test_after_in_another_zone(self):
        sched = schedule.parse_schedule('cron', '0 9 * * *', 'UTC')
        after = datetime.datetime(
            2025, 1, 15, 10, 0,
            tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
        # 10:00+02:00 is 08:00 UTC: the 09:00 UTC run of the same day.
        self.assertEqual(utc('2025-01-15 09:00'),
                         schedule.next_time(sched, after))

    def test_naive_datetimes_are_refused(self):
        sched = schedule.parse_schedule('cron', '@daily', 'UTC')
        self.assertRaises(ValueError, schedule.next_time, sched,
                          datetime.datetime(2025, 1, 1))
        self.assertRaises(ValueError, schedule.parse_schedule, 'cron',
                          '@daily', 'UTC',
                          start_at=datetime.datetime(2025, 1, 1))

    def test_next_times_count(self):
        sched = schedule.parse_schedule('cron', '@hourly', 'UTC')
        self.assertEqual([], schedule.next_times(sched, utc('2025-01-01'), 0))
        self.assertEqual(24, len(schedule.next_times(
            sched, utc('2025-01-01'), 24)))


class TestHashedCron(base.BaseTestCase):

    def test_h_spreads_a_thousand_policies(self):
        minutes = set()
        for _ in range(1000):
            sched = schedule.parse_schedule('cron', 'H 2 * * *', 'UTC',
                                            hash_key=str(uuid.uuid4()))
            run = schedule.next_time(sched, utc('2025-01-15 00:00'))
            self.assertEqual(2, run.hour)
            self.assertEqual(datetime.date(2025, 1, 15), run.date())
            minutes.add(run.minute)
        self.assertGreaterEqual(len(minutes), 40)

    def test_h_is_stable_for_one_policy(self):
        key = 'e4b4fd5e-2a36-4ad3-8a6c-5e3b06f4a0b1'
        first = schedule.parse_schedule('cron', 'H H * * *', 'UTC',
                                        hash_key=key)
        again = schedule.parse_schedule('cron', 'H H * * *', 'UTC',
                                        hash_key=key)
        after = utc('2025-01-15 00:00')
        self.assertEqual(schedule.next_times(first, after, 3),
                         schedule.next_times(again, after, 3))
        times = schedule.next_times(first, after, 3)
        self.assertEqual({datetime.timedelta(days=1)},
                         {b - a for a, b in zip(times, times[1:])})

    def test_h_with_range(self):
        for _ in range(50):
            sched = schedule.parse_schedule('cron', 'H(0-9) 3 * * *', 'UTC',
                                            hash_key=str(uuid.uuid4()))
            run = schedule.next_time(sched, utc('2025-01-15 00:00'))
            self.assertLess(run.minute, 10)

    def test_h_needs_the_policy_id(self):
        self.assertRaises(ValueError, schedule.parse_schedule, 'cron',
                          'H 2 * * *', 'UTC')

    def test_resolved_fields_give_the_same_runs(self):
        expressions = ('H 2 * * *', 'H H * * *', 'H(0-29)/10 H(1-4) * * 1-5',
                       '0 H * * H', 'H 1 L * *', 'H 4 * * 5#2',
                       'H H(0-5) H(1-28) */2 *')
        for expression in expressions:
            for _ in range(50):
                key = str(uuid.uuid4())
                resolved = schedule.resolve_hashed_fields('cron', expression,
                                                          key)
                self.assertNotIn('H', resolved)
                hashed = schedule.parse_schedule(
                    'cron', expression, 'Europe/Berlin', hash_key=key)
                plain = schedule.parse_schedule('cron', resolved,
                                                'Europe/Berlin')
                after = utc('2026-03-28 12:00')
                self.assertEqual(schedule.next_times(hashed, after, 10),
                                 schedule.next_times(plain, after, 10),
                                 (expression, key, resolved))

    def test_only_hashed_cron_is_resolved(self):
        self.assertIsNone(schedule.resolve_hashed_fields('cron', '@daily',
                                                         'k'))
        self.assertIsNone(schedule.resolve_hashed_fields('interval', '60',
                                                         'k'))
        # Unhashed fields stay as written (names, L, #).
        self.assertRegex(schedule.resolve_hashed_fields(
            'cron', 'H(0-1) 3 * MAR THU', 'k'), r'^[01] 3 \* MAR THU$')

    def test_thursday_is_not_hashed(self):
        sched = schedule.parse_schedule('cron', '0 1 * * THU', 'UTC')
        self.assertIsNone(sched.hash_key)


def _policy_ids(count, seed=14):
    # Random version-4 uuids, as policy ids are, from a fixed seed so that
    # the figures below are the same on every run.
    rng = random.Random(seed)
    return [str(uuid.UUID(int=rng.getrandbits(128), version=4))
            for _ in range(count)]


class TestHashRule(base.BaseTestCase):
    """H is exactly the documented rule, and spreads evenly."""

    def test_rule_as_documented(self):
        # The first 8 bytes of sha256("<policy id>:<field index>"), read
        # big-endian, reduced modulo the size of the range.
        policy = '5f2c9a34-8d1e-4b7a-9c3f-0e6d2b1a4c58'

        def h(index):
            digest = hashlib.sha256(
                ('%s:%d' % (policy, index)).encode()).hexdigest()
            return int(digest[:16], 16)

        self.assertEqual(
            '%d %d %d %d %d' % (h(0) % 60, h(1) % 24, 1 + h(2) % 28,
                                1 + h(3) % 12, h(4) % 7),
            cron.resolve('H H H H H', policy))
        self.assertEqual('%d 3 * * *' % (10 + h(0) % 20),
                         cron.resolve('H(10-29) 3 * * *', policy))
        offset = h(0) % 15
        self.assertEqual(
            '%s * * * *' % ','.join(str(m) for m in range(offset, 60, 15)),
            cron.resolve('H/15 * * * *', policy))
        offset = h(1) % 4
        self.assertEqual(
            '0 %s * * *' % ','.join(str(m) for m in range(offset, 12, 4)),
            cron.resolve('0 H(0-11)/4 * * *', policy))

    def test_fields_are_independent(self):
        # croniter derived the hour from the minute's hash shifted by one
        # bit: 240 (hour, minute) pairs instead of 1,440.
        ids = _policy_ids(2000)
        pairs = collections.Counter(
            cron.resolve('H H * * *', key) for key in ids)
        minutes_by_hour = collections.defaultdict(set)
        for expression in pairs:
            minute, hour = expression.split()[:2]
            minutes_by_hour[int(hour)].add(int(minute))
        # With independent fields, each hour holds most of the 60 minutes.
        self.assertGreater(min(len(m) for m in minutes_by_hour.values()),
                           35)

    def _spread(self, values, slots):
        counts = collections.Counter(values)
        mean = len(values) / slots
        return len(counts), max(counts.values()) / mean

    def test_h_h_is_uniform_over_the_day(self):
        ids = _policy_ids(100000)
        # The real path, on a sample: resolve() is hash_value() reduced.
        for key in ids[:500]:
            self.assertEqual('%d %d * * *' % (cron.hash_value(key, 0) % 60,
                                              cron.hash_value(key, 1) % 24),
                             cron.resolve('H H * * *', key))
            self.assertEqual(cron.resolve('H H * * *', key)[:-1] + '0',
                             cron.resolve('H H * * 0', key))
        slots = [(cron.hash_value(key, 1) % 24, cron.hash_value(key, 0) % 60)
                 for key in ids]
        distinct, busiest = self._spread(slots, 1440)
        self.assertGreaterEqual(distinct, 1400)
        self.assertLessEqual(busiest, 1.5)

    def test_steps_and_ranges_are_uniform(self):
        ids = _policy_ids(100000)
        for expression, slots in (('H/15 * * * *', 15),
                                  ('H(0-29) * * * *', 30),
                                  ('0 H/6 * * *', 6),
                                  ('0 0 H * *', 28),
                                  ('0 0 * * H', 7)):
            index = next(i for i, field in enumerate(expression.split())
                         if 'H' in field)
            for key in ids[:200]:
                # The sample's real first value is the one counted below.
                resolved = cron.resolve(expression, key).split()[index]
                low = {'H(0-29)': 0, 'H': (0, 0, 1, 1, 0)[index]}.get(
                    expression.split()[index], 0)
                self.assertEqual(
                    low + cron.hash_value(key, index) % slots,
                    int(resolved.split(',')[0]), (expression, key))
            distinct, busiest = self._spread(
                [cron.hash_value(key, index) % slots for key in ids], slots)
            self.assertEqual(slots, distinct, expression)
            self.assertLessEqual(busiest, 1.05, expression)

    def test_stable_values(self):
        # Pinned literally: a change here moves every hashed policy's
        # backups, which the hash promises never to do.
        self.assertEqual(4583053619626991100, cron.hash_value(
            '5f2c9a34-8d1e-4b7a-9c3f-0e6d2b1a4c58', 0))
        self.assertEqual('0 9 * * *', cron.resolve(
            'H H * * *', '5f2c9a34-8d1e-4b7a-9c3f-0e6d2b1a4c58'))
        self.assertEqual('32 8 * * *', cron.resolve(
            'H H * * *', '0d7e4c1b-2f3a-4e5d-8b6c-9a1f2e3d4c5b'))


class TestIntervalRunTimes(base.BaseTestCase):

    def test_anchored_at_start(self):
        sched = schedule.parse_schedule(
            'interval', '3600', 'UTC', start_at=utc('2025-01-15 10:17'))
        self.assertEqual(['2025-01-15 10:17', '2025-01-15 11:17'],
                         runs(sched, '2025-01-01 00:00', 2))
        self.assertEqual(['2025-01-15 13:17'],
                         runs(sched, '2025-01-15 12:17', 1))
        self.assertEqual(['2025-01-15 13:17'],
                         runs(sched, '2025-01-15 12:59', 1))

    def test_crossing_dst_keeps_absolute_spacing(self):
        # Daily from 02:30 CET on the day before Berlin springs forward:
        # every run is 24 real hours apart, so local time moves to 03:30.
        sched = schedule.parse_schedule(
            'interval', '86400', 'Europe/Berlin',
            start_at=utc('2025-03-29 01:30'))
        times = schedule.next_times(sched, utc('2025-03-29 00:00'), 3)
        self.assertEqual(
            ['2025-03-29 01:30', '2025-03-30 01:30', '2025-03-31 01:30'],
            [t.strftime('%Y-%m-%d %H:%M') for t in times])
        berlin = timezones.get_timezone('Europe/Berlin')
        self.assertEqual(['02:30', '03:30', '03:30'],
                         [t.astimezone(berlin).strftime('%H:%M')
                          for t in times])

    def test_interval_needs_an_anchor(self):
        error = self.assertRaises(exception.InvalidInterval,
                                  schedule.parse_schedule, 'interval', '60',
                                  'UTC')
        self.assertIn('start_at', str(error))


class TestOnceRunTimes(base.BaseTestCase):

    def test_with_offset(self):
        sched = schedule.parse_schedule('once', '2027-01-31T02:30:00+01:00',
                                        'UTC')
        self.assertEqual(utc('2027-01-31 01:30'),
                         schedule.next_time(sched, utc('2026-01-01')))
        self.assertIsNone(schedule.next_time(sched, utc('2027-01-31 01:30')))
        self.assertEqual(1, len(schedule.next_times(
            sched, utc('2026-01-01'), 5)))

    def test_z_suffix(self):
        sched = schedule.parse_schedule('once', '2027-01-31T02:30:00Z', 'UTC')
        self.assertEqual(utc('2027-01-31 02:30'), sched.run_at)

    def test_without_offset_is_local_time(self):
        sched = schedule.parse_schedule('once', '2027-07-01T09:00',
                                        'America/New_York')
        self.assertEqual(utc('2027-07-01 13:00'), sched.run_at)

    def test_local_time_in_gap_and_overlap(self):
        gap = schedule.parse_schedule('once', '2025-03-30T02:30',
                                      'Europe/Berlin')
        self.assertEqual(utc('2025-03-30 01:00'), gap.run_at)
        repeated = schedule.parse_schedule('once', '2025-10-26T02:30',
                                           'Europe/Berlin')
        self.assertEqual(utc('2025-10-26 00:30'), repeated.run_at)


class TestBounds(base.BaseTestCase):

    def test_start_at_is_inclusive(self):
        sched = schedule.parse_schedule(
            'cron', '@hourly', 'UTC', start_at=utc('2025-01-15 12:00'))
        self.assertEqual(['2025-01-15 12:00', '2025-01-15 13:00'],
                         runs(sched, '2025-01-01 00:00', 2))

    def test_start_at_between_runs(self):
        sched = schedule.parse_schedule(
            'cron', '@hourly', 'UTC', start_at=utc('2025-01-15 12:01'))
        self.assertEqual(['2025-01-15 13:00'],
                         runs(sched, '2025-01-01 00:00', 1))

    def test_end_at_is_inclusive(self):
        sched = schedule.parse_schedule(
            'cron', '@hourly', 'UTC', end_at=utc('2025-01-15 12:00'))
        self.assertEqual(['2025-01-15 11:00', '2025-01-15 12:00'],
                         runs(sched, '2025-01-15 10:30', 5))
        self.assertIsNone(schedule.next_time(sched, utc('2025-01-15 12:00')))

    def test_once_after_end(self):
        sched = schedule.parse_schedule(
            'once', '2027-01-01T00:00Z', 'UTC', end_at=utc('2026-12-31'))
        self.assertIsNone(schedule.next_time(sched, utc('2026-01-01')))


class TestMinimumGap(base.BaseTestCase):

    def _gap(self, expression):
        return schedule.parse_schedule('cron', expression, 'UTC',
                                       hash_key='p').min_gap_seconds()

    def test_cron_gaps(self):
        self.assertEqual(60, self._gap('* * * * *'))
        self.assertEqual(300, self._gap('*/5 * * * *'))
        self.assertEqual(3600, self._gap('@hourly'))
        self.assertEqual(86400, self._gap('@daily'))
        self.assertEqual(60, self._gap('0,1 3 * * *'))
        # Across an hour: 03:59 then 04:00.
        self.assertEqual(60, self._gap('0,59 3,4 * * *'))
        # Across midnight on consecutive days: 23:55 then 00:00.
        self.assertEqual(300, self._gap('0,55 0,23 * * *'))
        # Never on consecutive days: the gap within the hour decides.
        self.assertEqual(3300, self._gap('0,55 0,23 * * 1,3,5'))
        self.assertEqual(12 * 3600, self._gap('0 2,14 * * *'))

    def test_monthly_is_at_least_days_apart(self):
        self.assertGreaterEqual(self._gap('@monthly'), 2 * 86400)

    def test_interval_and_once(self):
        interval = schedule.parse_schedule('interval', '900', 'UTC',
                                           start_at=utc('2025-01-01'))
        self.assertEqual(900, interval.min_gap_seconds())
        once = schedule.parse_schedule('once', '2030-01-01T00:00Z', 'UTC')
        self.assertIsNone(once.min_gap_seconds())
