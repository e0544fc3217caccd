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
"""Schedules at the ends of the calendar: no run, or a clear error."""

import datetime
import zoneinfo

from oslotest import base

from dbaas_scheduler import exception
from dbaas_scheduler import schedule
from dbaas_scheduler import timezones

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
LAST = datetime.datetime.max.replace(tzinfo=UTC)
FIRST = datetime.datetime.min.replace(tzinfo=UTC)
KEY = 'b1946ac9-2d4f-4e3a-9a55-8f8a5c1e7d10'


class TestParseTime(base.BaseTestCase):

    def test_ends_of_the_calendar_in_utc(self):
        self.assertEqual(LAST, timezones.parse_time(
            '9999-12-31T23:59:59.999999Z', 'end_at'))
        self.assertEqual(FIRST, timezones.parse_time(
            '0001-01-01T00:00:00', 'start_at'))
        self.assertEqual(FIRST, timezones.parse_time(
            '0001-01-01T01:00:00+01:00', 'start_at'))

    def test_beyond_them_in_utc(self):
        for value in ('9999-12-31T23:59:59-00:01',
                      '0001-01-01T00:00:00+01:00',
                      '0001-01-01T00:59:59.999999+01:00'):
            error = self.assertRaises(exception.Invalid,
                                      timezones.parse_time, value, 'since')
            self.assertIn('since (%s) is outside the calendar in UTC'
                          % value, str(error))


class TestNoRunBeyondTheCalendar(base.BaseTestCase):

    def test_cron_after_its_last_run(self):
        sched = schedule.parse_schedule('cron', '59 23 31 12 *', 'UTC')
        last = datetime.datetime(9999, 12, 31, 23, 59, tzinfo=UTC)
        self.assertEqual(last, sched.next_time(last - datetime.timedelta(
            seconds=1)))
        self.assertIsNone(sched.next_time(last))
        self.assertIsNone(sched.next_time(LAST))

    def test_cron_in_a_zone_ahead_of_utc(self):
        sched = schedule.parse_schedule('cron', '0 12 * * *',
                                        'Pacific/Kiritimati')
        self.assertIsNone(sched.next_time(LAST))
        self.assertEqual(
            [datetime.datetime(9999, 12, 30, 22, 0, tzinfo=UTC)],
            schedule.next_times(sched, datetime.datetime(
                9999, 12, 30, 12, 0, tzinfo=UTC), 5))

    def test_cron_in_a_zone_behind_utc(self):
        # 23:00 on 9999-12-31 in New York is 10000-01-01 in UTC.
        sched = schedule.parse_schedule('cron', '0 23 * * *',
                                        'America/New_York')
        last = datetime.datetime(9999, 12, 31, 4, 0, tzinfo=UTC)
        self.assertEqual(last, sched.next_time(last - datetime.timedelta(
            hours=1)))
        self.assertIsNone(sched.next_time(last))

    def test_interval_past_the_end(self):
        sched = schedule.parse_schedule(
            'interval', str(100 * 365 * 86400), 'UTC',
            start_at=datetime.datetime(9950, 1, 1, tzinfo=UTC))
        self.assertEqual(sched.start_at, sched.next_time(NOW))
        self.assertIsNone(sched.next_time(sched.start_at))

    def test_interval_too_large_for_a_date(self):
        for seconds in (10 ** 15, 10 ** 30):
            self.assertRaises(exception.InvalidSchedule,
                              schedule.parse_schedule, 'interval',
                              str(seconds), 'UTC', start_at=NOW)

    def test_validation_says_why(self):
        error = self.assertRaises(
            exception.ScheduleNeverFires, schedule.validate_schedule,
            'cron', '@daily', 'UTC', now=NOW,
            start_at=datetime.datetime(9999, 12, 31, 0, 0, 1, tzinfo=UTC))
        self.assertIn('after the end of the calendar', str(error))
        # Never fires, or (where intervals are bounded) too long.
        self.assertRaises(
            exception.InvalidSchedule, schedule.validate_schedule,
            'interval', str(9000 * 366 * 86400), 'UTC', now=NOW,
            start_at=datetime.datetime(1000, 1, 1, tzinfo=UTC),
            hash_key=KEY)


class TestOnceAtTheEnds(base.BaseTestCase):

    def test_last_instant(self):
        sched = schedule.parse_schedule('once', '9999-12-31T23:59:59.999999',
                                        'UTC')
        self.assertEqual(LAST, sched.next_time(NOW))

    def test_local_times_outside_the_calendar_in_utc(self):
        for expression, zone in (('9999-12-31T23:00:00', 'America/New_York'),
                                 ('9999-12-31T23:00:00-05:00', 'UTC'),
                                 ('0001-01-01T00:00:00', 'Asia/Tokyo')):
            error = self.assertRaises(exception.InvalidRunTime,
                                      schedule.parse_schedule, 'once',
                                      expression, zone)
            self.assertIn('outside the calendar in UTC', str(error))

    def test_wall_time_near_the_end_in_a_zone_ahead(self):
        zone = zoneinfo.ZoneInfo('Pacific/Kiritimati')
        sched = schedule.parse_schedule('once', '9999-12-31T23:59:00',
                                        zone.key)
        self.assertEqual(datetime.datetime(9999, 12, 31, 9, 59, tzinfo=UTC),
                         sched.next_time(NOW))
