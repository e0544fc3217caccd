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
"""Every schedule test again, with croniter as the engine of next times.

The test modules of the schedule maths run on the default engine; each of
their test classes is subclassed here with ``[DEFAULT] cron_engine =
croniter``, so that both engines are held to the same table, brute-force
oracle, daylight saving rule and documented examples.
"""

import datetime
import inspect
import unittest

import croniter as croniter_library
from oslotest import base
import testscenarios

from dbaas_scheduler import cron
from dbaas_scheduler.cron import croniter_engine
from dbaas_scheduler import schedule
from dbaas_scheduler.tests.unit import test_schedule
from dbaas_scheduler.tests.unit import test_schedule_calendar
from dbaas_scheduler.tests.unit import test_schedule_cron
from dbaas_scheduler.tests.unit import test_schedule_docs
from dbaas_scheduler.tests.unit import test_schedule_dst
from dbaas_scheduler.tests.unit import test_schedule_validation

UTC = datetime.timezone.utc

load_tests = testscenarios.load_tests_apply_scenarios


class _Croniter:
    """Runs the test with the croniter engine, then restores the other."""

    def setUp(self):
        super().setUp()
        self.addCleanup(cron.use_engine, cron.engine_name())
        cron.use_engine('croniter')


def _with_croniter(module):
    for name, value in vars(module).items():
        if (inspect.isclass(value) and issubclass(value, unittest.TestCase)
                and value.__module__ == module.__name__):
            copy = type('%sCroniter' % name, (_Croniter, value), {})
            copy.__module__ = __name__
            globals()[copy.__name__] = copy


for _module in (test_schedule, test_schedule_calendar, test_schedule_cron,
                test_schedule_docs, test_schedule_dst,
                test_schedule_validation):
    _with_croniter(_module)


class TestCroniterEngine(_Croniter, base.BaseTestCase):

    def test_the_last_day_in_a_list(self):
        # Found by the brute-force test: croniter reads "2-31,L" as every
        # day, 1 January included.
        parsed = cron.parse('* * L,2/1 * *')
        self.assertEqual(datetime.datetime(2000, 1, 2, 0, 0),
                         parsed.next_after(datetime.datetime(2000, 1, 1)))
        self.assertEqual(datetime.datetime(2000, 1, 31, 0, 0),
                         cron.parse('0 0 3,L * *').next_after(
                             datetime.datetime(2000, 1, 4)))

    def test_engine_is_croniter(self):
        self.assertEqual('croniter', cron.engine_name())
        self.assertIs(croniter_engine, cron._engine)

    def test_plain_expressions_croniter_is_given(self):
        # H hashed into numbers, a-a as a, names and 7 normalised; cronie's
        # OR as two AND expressions; plain and special weekdays apart.
        def texts(expression, hash_key=None):
            return [part.text for part in croniter_engine.compiled(
                cron.parse(expression, hash_key))]

        key = 'policy-1'
        minute = cron.hash_value(key, 0) % 60
        hour = cron.hash_value(key, 1) % 24
        self.assertEqual(['%d %d * * *' % (minute, hour)],
                         texts('H H * * *', key))
        self.assertEqual(['0 2 * * *'], texts('0 2-2 * * *'))
        self.assertEqual(['0 0 1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31 '
                          '* 1'], texts('0 0 */2 * mon'))
        self.assertEqual(['0 0 1,15 * *', '0 0 * * 5'],
                         texts('0 0 1,15 * 5'))
        self.assertEqual(['0 0 * * 0,5,6'], texts('0 0 * * fri-sun'))
        self.assertEqual(['0 0 * * 1', '0 0 * * 3#2,L5'],
                         texts('0 0 * * 1,3#2,5L'))
        # Both restricted, one of them every day: every day.
        self.assertEqual(['0 0 * * *'], texts('0 0 1-31 * 1'))

    def test_split_weekday_field_matches_either(self):
        sched = schedule.parse_schedule('cron', '0 0 * * 1,3#2,5L', 'UTC')
        runs = schedule.next_times(
            sched, datetime.datetime(2025, 1, 1, tzinfo=UTC), 7)
        self.assertEqual(
            ['2025-01-06', '2025-01-08', '2025-01-13', '2025-01-20',
             '2025-01-27', '2025-01-31', '2025-02-03'],
            [run.date().isoformat() for run in runs])

    def test_croniter_is_the_library(self):
        # Not a copy of it: the installed distribution does the search.
        self.assertEqual(croniter_library.croniter,
                         type(croniter_engine.compiled(
                             cron.parse('0 0 * * *'))[0]._iterator))


class TestEngineSwitch(base.BaseTestCase):

    def test_unknown_engine_is_refused(self):
        self.assertRaisesRegex(ValueError, "unknown cron engine 'cronie'",
                               cron.use_engine, 'cronie')
        self.assertEqual(cron.DEFAULT_ENGINE, cron.engine_name())

    def test_default_is_native(self):
        self.assertEqual('native', cron.DEFAULT_ENGINE)
