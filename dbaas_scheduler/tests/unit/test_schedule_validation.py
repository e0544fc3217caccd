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
"""Validation of schedules: each invalid input and the message it gets."""

import datetime

from oslotest import base

from dbaas_scheduler import exception
from dbaas_scheduler import schedule

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def _validate(schedule_type, expression, timezone='UTC', **kwargs):
    kwargs.setdefault('now', NOW)
    kwargs.setdefault('hash_key', 'b1946ac9-2d4f-4e3a-9a55-8f8a5c1e7d10')
    if schedule_type == 'interval':
        kwargs.setdefault('start_at', NOW)
    return schedule.validate_schedule(schedule_type, expression, timezone,
                                      **kwargs)


class TestMalformedCron(base.BaseTestCase):

    def _assert_invalid(self, expression, *fragments):
        error = self.assertRaises(exception.InvalidCronExpression, _validate,
                                  'cron', expression)
        for fragment in fragments:
            self.assertIn(fragment, str(error))
        return error

    def test_each_field_out_of_range(self):
        self._assert_invalid('61 * * * *', "minute field '61'", '0-59')
        self._assert_invalid('* 24 * * *', "hour field '24'", '0-23')
        self._assert_invalid('* * 32 * *', "day-of-month field '32'", '1-31')
        self._assert_invalid('* * * 13 *', "month field '13'", '1-12')
        self._assert_invalid('0 0 * * 8', "day-of-week field '8'", '0-7')

    def test_not_a_number(self):
        self._assert_invalid('a * * * *', "minute field 'a'")
        self._assert_invalid('0 x/2 * * *', "hour field 'x/2'")

    def test_reversed_range(self):
        # As in cronie, a range goes upwards; the message says how to wrap.
        self._assert_invalid('0 22-2 * * *', "hour field '22-2'",
                             'downwards', '22-23,0-2')
        self._assert_invalid('*/0 * * * *', "minute field '*/0'",
                             'step of 0')

    def test_wrong_number_of_fields(self):
        self._assert_invalid('* * *', '5 fields', 'got 3')
        self._assert_invalid('0 0 * * * *', '5 fields', 'got 6')
        self._assert_invalid('0 0 1 1 * 2030 x', 'got 7')
        self._assert_invalid('', 'got 0')

    def test_unknown_alias(self):
        self._assert_invalid('@reboot', 'unknown alias', '@daily')

    def test_random_is_refused(self):
        self._assert_invalid('R 2 * * *', 'random', 'use H')
        self._assert_invalid('0 R(1-3) * * *', "hour field 'R(1-3)'")

    def test_not_a_string(self):
        self._assert_invalid(None, 'must be a string')

    def test_message_names_the_expression(self):
        error = self._assert_invalid('61 * * * *')
        self.assertIn("'61 * * * *'", str(error))
        self.assertEqual('Invalid cron expression', str(error)[:23])


class TestNeverFires(base.BaseTestCase):

    def test_impossible_date(self):
        for expression in ('0 0 30 2 *', '0 0 31 4 *', '0 0 31 11 *'):
            error = self.assertRaises(exception.ScheduleNeverFires,
                                      _validate, 'cron', expression)
            self.assertIn('never runs', str(error))
            self.assertIn('no date matches', str(error))

    def test_leap_day_is_possible(self):
        self.assertIsNotNone(_validate('cron', '0 0 29 2 *'))

    def test_once_in_the_past(self):
        error = self.assertRaises(exception.ScheduleNeverFires, _validate,
                                  'once', '2020-01-01T00:00:00Z')
        self.assertIn('2020-01-01T00:00:00+00:00', str(error))
        self.assertIn('is not in the future', str(error))

    def test_once_after_end_at(self):
        error = self.assertRaises(
            exception.ScheduleNeverFires, _validate, 'once',
            '2027-06-01T00:00:00Z', end_at=NOW + datetime.timedelta(days=1))
        self.assertIn('after end_at', str(error))

    def test_once_before_start_at(self):
        error = self.assertRaises(
            exception.ScheduleNeverFires, _validate, 'once',
            '2027-06-01T00:00:00Z', start_at=NOW + datetime.timedelta(
                days=365))
        self.assertIn('before start_at', str(error))

    def test_end_at_before_first_run(self):
        error = self.assertRaises(
            exception.ScheduleNeverFires, _validate, 'cron', '0 0 1 1 *',
            end_at=NOW + datetime.timedelta(days=1))
        self.assertIn('no run falls before end_at', str(error))

    def test_end_at_passed(self):
        error = self.assertRaises(
            exception.ScheduleNeverFires, _validate, 'cron', '@daily',
            end_at=NOW - datetime.timedelta(days=1))
        self.assertIn('has passed', str(error))

    def test_end_before_start(self):
        error = self.assertRaises(
            exception.ScheduleNeverFires, _validate, 'cron', '@daily',
            start_at=NOW + datetime.timedelta(days=2),
            end_at=NOW + datetime.timedelta(days=1))
        self.assertIn('is not after start_at', str(error))


class TestTimeZone(base.BaseTestCase):

    def test_unknown_zone(self):
        error = self.assertRaises(exception.UnknownTimeZone, _validate,
                                  'cron', '@daily', 'Mars/Olympus_Mons')
        self.assertIn("Unknown time zone 'Mars/Olympus_Mons'", str(error))
        self.assertIn('IANA', str(error))

    def test_typo_gets_a_suggestion(self):
        error = self.assertRaises(exception.UnknownTimeZone, _validate,
                                  'cron', '@daily', 'Europe/Berln')
        self.assertIn('Did you mean "Europe/Berlin"', str(error))

    def test_not_a_zone_name(self):
        for name in ('', ' ', None, '../../etc/passwd', 'localtime', 'utc'):
            self.assertRaises(exception.UnknownTimeZone, _validate, 'cron',
                              '@daily', name)

    def test_zone_names_are_accepted(self):
        for name in ('UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires',
                     'Asia/Kolkata', 'Etc/GMT+5'):
            self.assertEqual(name, _validate('cron', '@daily', name).timezone)


class TestTooFrequent(base.BaseTestCase):

    def test_cron_closer_than_minimum(self):
        error = self.assertRaises(exception.ScheduleTooFrequent, _validate,
                                  'cron', '*/2 * * * *', min_interval=300)
        self.assertIn('every 120 seconds', str(error))
        self.assertIn('minimum of 300 seconds', str(error))

    def test_cron_gap_across_an_hour(self):
        error = self.assertRaises(exception.ScheduleTooFrequent, _validate,
                                  'cron', '0,59 3,4 * * *', min_interval=300)
        self.assertIn('every 60 seconds', str(error))

    def test_cron_at_the_minimum_is_allowed(self):
        self.assertIsNotNone(
            _validate('cron', '*/5 * * * *', min_interval=300))

    def test_hashed_cron_is_measured_after_hashing(self):
        self.assertRaises(exception.ScheduleTooFrequent, _validate, 'cron',
                          'H/2 * * * *', min_interval=300)
        self.assertIsNotNone(_validate('cron', 'H * * * *',
                                       min_interval=3600))

    def test_interval_closer_than_minimum(self):
        error = self.assertRaises(exception.ScheduleTooFrequent, _validate,
                                  'interval', '60', min_interval=300)
        self.assertIn('every 60 seconds', str(error))

    def test_once_has_no_frequency(self):
        self.assertIsNotNone(_validate('once', '2030-01-01T00:00:00Z',
                                       min_interval=10 ** 9))

    def test_no_minimum(self):
        self.assertIsNotNone(_validate('cron', '* * * * *'))


class TestIntervalAndOnceInput(base.BaseTestCase):

    def test_interval_not_a_number(self):
        for text, fragment in (('abc', 'not a whole number'),
                               ('1.5', 'not a whole number'),
                               ('0', 'greater than zero'),
                               ('0h', 'greater than zero'),
                               ('-60', 'no sign'),
                               ('+60', 'no sign'),
                               # Arabic-Indic digits, which int() accepts.
                               ('\u0661\u0662', 'ASCII digits only'),
                               ('1_000', 'not a whole number'),
                               ('6 h', 'space inside'),
                               ('60\n', 'not a whole number'),
                               ('6H', 'not a whole number'),
                               ('1w', 'not a whole number'),
                               ('999999999d', 'longer than 100 years')):
            error = self.assertRaises(exception.InvalidInterval, _validate,
                                      'interval', text)
            self.assertIn(fragment, str(error))
            self.assertIn('number of seconds', str(error))

    def test_interval_units(self):
        for text, seconds in (('3600', 3600), ('3600s', 3600),
                              ('90m', 5400), ('6h', 21600), ('1d', 86400),
                              (' 300 ', 300), ('0007', 7)):
            self.assertEqual(seconds, schedule.parse_interval(text), text)
            sched = _validate('interval', text)
            self.assertEqual(seconds, sched.interval.total_seconds())

    def test_once_not_a_time(self):
        error = self.assertRaises(exception.InvalidRunTime, _validate,
                                  'once', 'next tuesday')
        self.assertIn("Invalid run time 'next tuesday'", str(error))
        self.assertIn('ISO 8601', str(error))

    def test_unknown_type(self):
        error = self.assertRaises(exception.InvalidSchedule, _validate,
                                  'weekly', '1')
        self.assertIn('cron, interval, once', str(error))

    def test_all_are_invalid_input(self):
        # The API maps Invalid to 400; every schedule error must be one.
        for cls in (exception.InvalidCronExpression,
                    exception.InvalidInterval, exception.InvalidRunTime,
                    exception.UnknownTimeZone, exception.ScheduleNeverFires,
                    exception.ScheduleTooFrequent):
            self.assertTrue(issubclass(cls, exception.Invalid))
