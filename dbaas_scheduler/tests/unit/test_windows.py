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
"""Start, completion and exclusion windows: the maths, time zones, DST."""

import datetime
import zoneinfo

from oslotest import base

from dbaas_scheduler import schedule
from dbaas_scheduler import windows

UTC = datetime.timezone.utc
BERLIN = zoneinfo.ZoneInfo('Europe/Berlin')
NEW_YORK = zoneinfo.ZoneInfo('America/New_York')
SYDNEY = zoneinfo.ZoneInfo('Australia/Sydney')


def _utc(*args):
    return datetime.datetime(*args, tzinfo=UTC)


def _local(zone, *args, fold=0):
    return datetime.datetime(*args, tzinfo=zone, fold=fold).astimezone(UTC)


class TestDefaultWindows(base.BaseTestCase):

    def test_half_the_interval_within_floor_and_ceiling(self):
        self.assertEqual(1800, windows.default_start_window(3600))
        # A minute schedule: never less than a minute.
        self.assertEqual(60, windows.default_start_window(60))
        # Daily: eight hours at most.
        self.assertEqual(8 * 3600, windows.default_start_window(86400))
        self.assertEqual(windows.ONCE_START,
                         windows.default_start_window(None))

    def test_completion_is_the_interval_within_bounds(self):
        self.assertEqual(3600, windows.default_completion_window(300))
        self.assertEqual(86400, windows.default_completion_window(86400))
        self.assertEqual(7 * 86400,
                         windows.default_completion_window(30 * 86400))
        self.assertEqual(windows.ONCE_COMPLETION,
                         windows.default_completion_window(None))

    def test_completion_never_shorter_than_start(self):
        self.assertEqual((7200, 7200), windows.windows_for(7200, 600, None))
        self.assertEqual((600, 3600), windows.windows_for(600, None, 300))

    def test_deadlines_follow_the_slot_to_the_next_one(self):
        # Weekdays at 02:30: Friday's slot is three days before Monday's.
        sched = schedule.parse_schedule('cron', '30 2 * * 1-5',
                                        'Europe/Berlin')
        friday = _local(BERLIN, 2026, 11, 27, 2, 30)
        start, completion = windows.slot_deadlines(None, None, sched,
                                                   friday)
        self.assertEqual(friday + datetime.timedelta(hours=8), start)
        self.assertEqual(friday + datetime.timedelta(days=3), completion)
        tuesday = _local(BERLIN, 2026, 11, 24, 2, 30)
        self.assertEqual(
            tuesday + datetime.timedelta(days=1),
            windows.slot_deadlines(None, None, sched, tuesday)[1])

    def test_the_policy_windows_win(self):
        sched = schedule.parse_schedule('cron', '0 * * * *')
        slot = _utc(2026, 11, 27, 10)
        self.assertEqual(
            (slot + datetime.timedelta(seconds=120),
             slot + datetime.timedelta(seconds=900)),
            windows.slot_deadlines(120, 900, sched, slot))

    def test_a_dst_night_counts_real_time(self):
        # The night Berlin falls back has 25 hours: the default completion
        # window of the daily slot before it is 25 hours of real time.
        sched = schedule.parse_schedule('cron', '30 1 * * *',
                                        'Europe/Berlin')
        slot = _local(BERLIN, 2026, 10, 25, 1, 30)
        self.assertEqual(slot + datetime.timedelta(hours=25),
                         windows.slot_deadlines(None, None, sched, slot)[1])

    def test_manual_run_uses_the_usual_gap(self):
        sched = schedule.parse_schedule('cron', '0 */6 * * *')
        now = _utc(2026, 11, 27, 5, 59)
        start, completion = windows.manual_deadlines(None, None, sched, now)
        self.assertEqual(now + datetime.timedelta(hours=3), start)
        self.assertEqual(now + datetime.timedelta(hours=6), completion)


class TestValidation(base.BaseTestCase):

    def test_bounds(self):
        windows.validate_windows(60, 60)
        windows.validate_windows(None, None)
        for start, completion in ((59, None), (None, 59), (True, None),
                                  (windows.MAX_START_WINDOW + 1, None),
                                  ('60', None), (3600, 1800)):
            self.assertRaises(ValueError, windows.validate_windows, start,
                              completion)

    def test_messages_say_what_to_change(self):
        exc = self.assertRaises(ValueError, windows.validate_windows,
                                3600, 1800)
        self.assertIn('must not be shorter than start_window', str(exc))
        exc = self.assertRaises(ValueError, windows.validate_windows, 5,
                                None)
        self.assertEqual('start_window must be a whole number of seconds '
                         'from 60 to 604800, not 5.', str(exc))


class TestParsing(base.BaseTestCase):

    def test_canonical_spelling(self):
        for given, canonical in (
                ('fri 18:00 - mon 6:00', 'Fri 18:00-Mon 06:00'),
                ('Sat-Sun', 'Sat-Sun'),
                ('sat', 'Sat'),
                ('mon-fri 09:00-17:00', 'Mon-Fri 09:00-17:00'),
                ('1:00-3:00', '01:00-03:00'),
                ('22:00-24:00', '22:00-24:00'),
                ('2026-12-24', '2026-12-24'),
                ('2026-12-24 .. 2026-12-26', '2026-12-24..2026-12-26')):
            self.assertEqual(canonical,
                             windows.parse_exclusion(given).text, given)

    def test_clear_errors(self):
        for given, message in (
                ('Fri 18:00-Mun 06:00', "'Mun' is not a day of the week"),
                ('Fri 25:00-Mon 06:00', "'25:00' is not a time of day"),
                ('Fri 18:00-Fri 18:00', 'is empty'),
                ('2026-02-30', "'2026-02-30' is not a date"),
                ('2026-12-26..2026-12-24', 'ends (2026-12-24) before it '
                                           'starts (2026-12-26)'),
                ('weekends', 'is not understood: write a weekly range'),
                ('24:00-01:00', "'24:00' is not a time of day")):
            exc = self.assertRaises(windows.InvalidExclusion,
                                    windows.parse_exclusion, given)
            self.assertIn(message, str(exc), given)

    def test_list_limits(self):
        self.assertEqual((), windows.parse_exclusions(None))
        self.assertRaises(windows.InvalidExclusion,
                          windows.parse_exclusions, 'Sat')
        self.assertRaises(windows.InvalidExclusion,
                          windows.parse_exclusions,
                          ['Sat'] * (windows.MAX_EXCLUSIONS + 1))
        self.assertRaises(windows.InvalidExclusion,
                          windows.parse_exclusion, 'Sat' + ' ' * 70 + 'x')


class TestExclusion(base.BaseTestCase):

    def excluded(self, texts, when, zone=UTC):
        found = windows.excluded_by(windows.parse_exclusions(texts), when,
                                    zone)
        return found.text if found else None

    def test_weekend_range_wraps_the_week(self):
        texts = ['Fri 18:00-Mon 06:00']
        # Friday 27 November 2026.
        self.assertIsNone(self.excluded(texts, _utc(2026, 11, 27, 17, 59)))
        self.assertEqual('Fri 18:00-Mon 06:00',
                         self.excluded(texts, _utc(2026, 11, 27, 18, 0)))
        self.assertTrue(self.excluded(texts, _utc(2026, 11, 29, 12)))
        self.assertTrue(self.excluded(texts, _utc(2026, 11, 30, 5, 59)))
        # The end is not inside.
        self.assertIsNone(self.excluded(texts, _utc(2026, 11, 30, 6, 0)))
        self.assertIsNone(self.excluded(texts, _utc(2026, 12, 2, 12)))

    def test_read_in_the_policy_time_zone(self):
        texts = ['Sat-Sun']
        # Friday 23:30 UTC is Saturday 00:30 in Berlin (winter, +01:00).
        friday_night = _utc(2026, 11, 27, 23, 30)
        self.assertIsNone(self.excluded(texts, friday_night))
        self.assertEqual('Sat-Sun',
                         self.excluded(texts, friday_night, BERLIN))
        # Sunday 23:30 UTC is Monday in Berlin: no longer excluded.
        self.assertIsNone(self.excluded(texts, _utc(2026, 11, 29, 23, 30),
                                        BERLIN))

    def test_daily_ranges_on_some_days_and_across_midnight(self):
        office = ['Mon-Fri 09:00-17:00']
        self.assertTrue(self.excluded(office, _utc(2026, 11, 27, 9)))
        self.assertIsNone(self.excluded(office, _utc(2026, 11, 28, 9)))
        night = ['22:00-02:00']
        self.assertTrue(self.excluded(night, _utc(2026, 11, 28, 23)))
        self.assertTrue(self.excluded(night, _utc(2026, 11, 29, 1, 59)))
        self.assertIsNone(self.excluded(night, _utc(2026, 11, 29, 2)))
        # Friday's night range ends on Saturday.
        friday_nights = ['Fri 22:00-02:00']
        self.assertTrue(self.excluded(friday_nights,
                                      _utc(2026, 11, 28, 1)))
        self.assertIsNone(self.excluded(friday_nights,
                                        _utc(2026, 11, 29, 1)))

    def test_dates_are_whole_local_days(self):
        texts = ['2026-12-24..2026-12-26']
        self.assertIsNone(self.excluded(
            texts, _local(NEW_YORK, 2026, 12, 23, 23, 59), NEW_YORK))
        self.assertTrue(self.excluded(
            texts, _local(NEW_YORK, 2026, 12, 24, 0, 0), NEW_YORK))
        # 27 December 03:00 UTC is still the 26th in New York.
        self.assertTrue(self.excluded(texts, _utc(2026, 12, 27, 3),
                                      NEW_YORK))
        self.assertIsNone(self.excluded(texts, _utc(2026, 12, 27, 5),
                                        NEW_YORK))

    def test_wall_clock_across_spring_forward(self):
        # Berlin, 29 March 2026: 02:00 jumps to 03:00.  A range of wall
        # times keeps meaning those hours on either side.
        texts = ['01:00-04:00']
        self.assertTrue(self.excluded(texts, _local(BERLIN, 2026, 3, 29,
                                                    1, 30), BERLIN))
        self.assertTrue(self.excluded(texts, _local(BERLIN, 2026, 3, 29,
                                                    3, 30), BERLIN))
        self.assertIsNone(self.excluded(texts, _local(BERLIN, 2026, 3, 29,
                                                      4, 0), BERLIN))
        # The winter hour 00:30 before it is 23:30 UTC; the summer 04:30
        # after it is 02:30 UTC.
        self.assertIsNone(self.excluded(texts, _utc(2026, 3, 28, 23, 30),
                                        BERLIN))
        self.assertIsNone(self.excluded(texts, _utc(2026, 3, 29, 2, 30),
                                        BERLIN))

    def test_wall_clock_across_fall_back(self):
        # New York, 1 November 2026: 01:00-02:00 happens twice; both are
        # inside a range that covers the wall time 01:30.
        texts = ['01:15-01:45']
        first = _local(NEW_YORK, 2026, 11, 1, 1, 30, fold=0)
        second = _local(NEW_YORK, 2026, 11, 1, 1, 30, fold=1)
        self.assertEqual(datetime.timedelta(hours=1), second - first)
        self.assertTrue(self.excluded(texts, first, NEW_YORK))
        self.assertTrue(self.excluded(texts, second, NEW_YORK))

    def test_southern_summer(self):
        # Sydney is on +11:00 in December: 01:00 local is 14:00 UTC the
        # day before.
        texts = ['Sun 00:00-Sun 06:00']
        self.assertTrue(self.excluded(texts, _utc(2026, 12, 5, 14),
                                      SYDNEY))
        self.assertIsNone(self.excluded(texts, _utc(2026, 12, 5, 14)))
