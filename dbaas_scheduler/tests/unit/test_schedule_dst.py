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
"""The daylight saving rule of schedule.py, pinned on real transitions.

A local time that does not exist (spring forward) runs once, at the first
valid instant after it; a local time that occurs twice (fall back) runs
once, at its first occurrence.  Expected times are written in UTC, worked
out by hand from the zone's offsets on each side of the change.
"""

import datetime

from oslotest import base
import testscenarios

from dbaas_scheduler import schedule
from dbaas_scheduler import timezones

UTC = datetime.timezone.utc

load_tests = testscenarios.load_tests_apply_scenarios


def _utc(text):
    return datetime.datetime.fromisoformat(text).replace(tzinfo=UTC)


# (zone, cron, start in UTC, the next runs in UTC)
_CASES = {
    # Europe/Berlin 2025: 03-30 02:00 CET -> 03:00 CEST (01:00 UTC);
    # 10-26 03:00 CEST -> 02:00 CET (01:00 UTC).
    'berlin_spring_daily_0230': (
        'Europe/Berlin', '30 2 * * *', '2025-03-28 12:00',
        ['2025-03-29 01:30', '2025-03-30 01:00', '2025-03-31 00:30']),
    'berlin_fall_daily_0230': (
        'Europe/Berlin', '30 2 * * *', '2025-10-24 12:00',
        ['2025-10-25 00:30', '2025-10-26 00:30', '2025-10-27 01:30']),
    'berlin_spring_hourly': (
        'Europe/Berlin', '0 * * * *', '2025-03-29 22:30',
        ['2025-03-29 23:00', '2025-03-30 00:00', '2025-03-30 01:00',
         '2025-03-30 02:00']),
    'berlin_fall_hourly': (
        'Europe/Berlin', '0 * * * *', '2025-10-25 22:30',
        ['2025-10-25 23:00', '2025-10-26 00:00', '2025-10-26 02:00',
         '2025-10-26 03:00']),
    'berlin_spring_midnight': (
        'Europe/Berlin', '0 0 * * *', '2025-03-28 12:00',
        ['2025-03-28 23:00', '2025-03-29 23:00', '2025-03-30 22:00']),
    'berlin_fall_midnight': (
        'Europe/Berlin', '0 0 * * *', '2025-10-24 12:00',
        ['2025-10-24 22:00', '2025-10-25 22:00', '2025-10-26 23:00']),
    # America/New_York 2025: 03-09 02:00 EST -> 03:00 EDT (07:00 UTC);
    # 11-02 02:00 EDT -> 01:00 EST (06:00 UTC): 01:xx happens twice.
    'new_york_spring_daily_0230': (
        'America/New_York', '30 2 * * *', '2025-03-07 12:00',
        ['2025-03-08 07:30', '2025-03-09 07:00', '2025-03-10 06:30']),
    'new_york_fall_daily_0230': (
        'America/New_York', '30 2 * * *', '2025-10-31 12:00',
        ['2025-11-01 06:30', '2025-11-02 07:30', '2025-11-03 07:30']),
    'new_york_fall_daily_0130': (
        'America/New_York', '30 1 * * *', '2025-10-31 12:00',
        ['2025-11-01 05:30', '2025-11-02 05:30', '2025-11-03 06:30']),
    'new_york_spring_hourly': (
        'America/New_York', '0 * * * *', '2025-03-09 05:30',
        ['2025-03-09 06:00', '2025-03-09 07:00', '2025-03-09 08:00']),
    'new_york_fall_hourly': (
        'America/New_York', '0 * * * *', '2025-11-02 03:30',
        ['2025-11-02 04:00', '2025-11-02 05:00', '2025-11-02 07:00',
         '2025-11-02 08:00']),
    'new_york_spring_midnight': (
        'America/New_York', '0 0 * * *', '2025-03-08 00:00',
        ['2025-03-08 05:00', '2025-03-09 05:00', '2025-03-10 04:00']),
    'new_york_fall_midnight': (
        'America/New_York', '0 0 * * *', '2025-11-01 00:00',
        ['2025-11-01 04:00', '2025-11-02 04:00', '2025-11-03 05:00']),
    # Australia/Sydney 2025: 04-06 03:00 AEDT -> 02:00 AEST (04-05 16:00
    # UTC): 02:xx happens twice; 10-05 02:00 AEST -> 03:00 AEDT (10-04
    # 16:00 UTC).
    'sydney_fall_daily_0230': (
        'Australia/Sydney', '30 2 * * *', '2025-04-04 00:00',
        ['2025-04-04 15:30', '2025-04-05 15:30', '2025-04-06 16:30']),
    'sydney_spring_daily_0230': (
        'Australia/Sydney', '30 2 * * *', '2025-10-03 00:00',
        ['2025-10-03 16:30', '2025-10-04 16:00', '2025-10-05 15:30']),
    'sydney_fall_hourly': (
        'Australia/Sydney', '0 * * * *', '2025-04-05 13:30',
        ['2025-04-05 14:00', '2025-04-05 15:00', '2025-04-05 17:00',
         '2025-04-05 18:00']),
    'sydney_spring_hourly': (
        'Australia/Sydney', '0 * * * *', '2025-10-04 14:30',
        ['2025-10-04 15:00', '2025-10-04 16:00', '2025-10-04 17:00']),
    'sydney_fall_midnight': (
        'Australia/Sydney', '0 0 * * *', '2025-04-04 00:00',
        ['2025-04-04 13:00', '2025-04-05 13:00', '2025-04-06 14:00']),
    'sydney_spring_midnight': (
        'Australia/Sydney', '0 0 * * *', '2025-10-03 00:00',
        ['2025-10-03 14:00', '2025-10-04 14:00', '2025-10-05 13:00']),
    # America/Santiago changes at midnight: 2024-09-08 00:00 -04 does not
    # exist (01:00 -03, 04:00 UTC); on 2024-04-06, 23:xx happens twice.
    'santiago_spring_midnight': (
        'America/Santiago', '0 0 * * *', '2024-09-06 12:00',
        ['2024-09-07 04:00', '2024-09-08 04:00', '2024-09-09 03:00']),
    'santiago_fall_daily_2330': (
        'America/Santiago', '30 23 * * *', '2024-04-05 12:00',
        ['2024-04-06 02:30', '2024-04-07 02:30', '2024-04-08 03:30']),
}


class TestDaylightSavingRule(base.BaseTestCase):

    scenarios = [(name, {'case': case}) for name, case in _CASES.items()]

    def test_runs(self):
        zone, cron, start, expected = self.case
        sched = schedule.parse_schedule('cron', cron, zone)
        got = schedule.next_times(sched, _utc(start), len(expected))
        self.assertEqual(expected,
                         [t.strftime('%Y-%m-%d %H:%M') for t in got])

    def test_no_duplicates_and_increasing(self):
        zone, cron, start, expected = self.case
        sched = schedule.parse_schedule('cron', cron, zone)
        got = schedule.next_times(sched, _utc(start), 48)
        self.assertEqual(sorted(set(got)), got)


class TestEachLocalTimeRunsOnce(base.BaseTestCase):
    """Over whole years, a daily schedule runs exactly once per local day."""

    scenarios = [
        ('%s_%s' % (zone.split('/')[-1].lower(), cron.replace(' ', '_')),
         {'zone': zone, 'cron': cron})
        for zone in ('Europe/Berlin', 'America/New_York', 'Australia/Sydney',
                     'America/Santiago', 'Australia/Lord_Howe')
        for cron in ('30 2 * * *', '0 0 * * *', '30 1 * * *', '0 3 * * *')
    ]

    def test_one_run_per_local_day(self):
        sched = schedule.parse_schedule('cron', self.cron, self.zone)
        zone = timezones.get_timezone(self.zone)
        got = schedule.next_times(sched, _utc('2024-01-01 00:00'), 2 * 366)
        local_days = [t.astimezone(zone).date() for t in got]
        # Every local day, DST change days included, exactly once.
        first = local_days[0]
        self.assertEqual(
            [first + datetime.timedelta(days=n) for n in range(len(got))],
            local_days)


class TestWallTimeToUTC(base.BaseTestCase):

    def test_ordinary_time(self):
        berlin = timezones.get_timezone('Europe/Berlin')
        self.assertEqual(
            _utc('2025-01-15 11:00'),
            timezones.wall_time_to_utc(datetime.datetime(2025, 1, 15, 12),
                                       berlin))

    def test_skipped_time_maps_to_the_change(self):
        berlin = timezones.get_timezone('Europe/Berlin')
        for minute in (0, 1, 30, 59):
            self.assertEqual(
                _utc('2025-03-30 01:00'),
                timezones.wall_time_to_utc(
                    datetime.datetime(2025, 3, 30, 2, minute), berlin))

    def test_repeated_time_maps_to_first_occurrence(self):
        berlin = timezones.get_timezone('Europe/Berlin')
        self.assertEqual(
            _utc('2025-10-26 00:15'),
            timezones.wall_time_to_utc(datetime.datetime(2025, 10, 26, 2, 15),
                                       berlin))

    def test_half_hour_change(self):
        # Lord Howe Island moves by 30 minutes: 2025-10-05 02:00 -> 02:30.
        lord_howe = timezones.get_timezone('Australia/Lord_Howe')
        self.assertEqual(
            _utc('2025-10-04 15:30'),
            timezones.wall_time_to_utc(datetime.datetime(2025, 10, 5, 2, 10),
                                       lord_howe))

    def test_croniter_alone_would_run_twice(self):
        # The reason this module maps wall times itself: pin the fall-back
        # day, where a daily 02:30 must run once.
        sched = schedule.parse_schedule('cron', '30 2 * * *', 'Europe/Berlin')
        got = schedule.next_times(sched, _utc('2025-10-25 12:00'), 2)
        self.assertEqual([_utc('2025-10-26 00:30'), _utc('2025-10-27 01:30')],
                         got)
