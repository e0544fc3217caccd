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
"""Cron semantics against classic cron (cronie) and a brute-force oracle.

The expected runs of the table were worked out by hand from cronie's
documented rules (crontab(5)) and its job matcher: minute, hour and month
must match; the day matches when both day-of-month and day-of-week match if
either field starts with ``*``, and when either matches otherwise.  The
2025 calendar: 1 January is a Wednesday, 3 February and 3 March Mondays.
"""

import datetime

import hypothesis
from hypothesis import strategies as st
from oslotest import base

from dbaas_scheduler import cron
from dbaas_scheduler import exception
from dbaas_scheduler import schedule

UTC = datetime.timezone.utc
START = '2025-01-01 00:00'


def _runs(expression, after=START, count=4):
    sched = schedule.parse_schedule('cron', expression, 'UTC')
    start = datetime.datetime.fromisoformat(after).replace(tzinfo=UTC)
    return [t.strftime('%Y-%m-%d %H:%M')
            for t in schedule.next_times(sched, start, count)]


# expression -> the next runs after 2025-01-01 00:00 UTC, and why.
CRONIE_TABLE = {
    # a-a is a: daily at 02:00, not hourly.
    '0 2-2 * * *': ['2025-01-01 02:00', '2025-01-02 02:00',
                    '2025-01-03 02:00'],
    # Day-of-month starts with '*': AND.  Odd days that are Mondays.
    '0 0 */2 * 1': ['2025-01-13 00:00', '2025-01-27 00:00',
                    '2025-02-03 00:00', '2025-02-17 00:00'],
    # Day-of-week starts with '*': AND.  The 1st only.
    '0 0 1 * */1': ['2025-02-01 00:00', '2025-03-01 00:00',
                    '2025-04-01 00:00'],
    # crontab(5)'s own example: the 1st and 15th, plus every Friday.
    '30 4 1,15 * 5': ['2025-01-01 04:30', '2025-01-03 04:30',
                      '2025-01-10 04:30', '2025-01-15 04:30',
                      '2025-01-17 04:30'],
    # Both restricted: OR.  Days 1-7 or any Monday.
    '0 0 1-7 * 1': ['2025-01-02 00:00', '2025-01-03 00:00',
                    '2025-01-04 00:00', '2025-01-05 00:00',
                    '2025-01-06 00:00', '2025-01-07 00:00',
                    '2025-01-13 00:00'],
    # Starts with '1', not '*': restricted, so OR -- although it holds a
    # '*/10' (days 1, 11, 21, 31).
    '0 0 1,*/10 * 1': ['2025-01-06 00:00', '2025-01-11 00:00',
                       '2025-01-13 00:00', '2025-01-20 00:00',
                       '2025-01-21 00:00'],
    '0 0 13 * FRI': ['2025-01-03 00:00', '2025-01-10 00:00',
                     '2025-01-13 00:00', '2025-01-17 00:00'],
    '0 0 */10 * *': ['2025-01-11 00:00', '2025-01-21 00:00',
                     '2025-01-31 00:00', '2025-02-01 00:00'],
    # 7 is Sunday; 5-0 is 5-7 (Friday to Sunday); */2 steps through 0-7.
    '0 0 * * 7': ['2025-01-05 00:00', '2025-01-12 00:00'],
    '0 0 * * 5-0': ['2025-01-03 00:00', '2025-01-04 00:00',
                    '2025-01-05 00:00', '2025-01-10 00:00'],
    '0 0 * * fri-sun': ['2025-01-03 00:00', '2025-01-04 00:00',
                        '2025-01-05 00:00', '2025-01-10 00:00'],
    '0 0 * * */2': ['2025-01-02 00:00', '2025-01-04 00:00',
                    '2025-01-05 00:00', '2025-01-07 00:00'],
    '5 4 * * sun': ['2025-01-05 04:05', '2025-01-12 04:05'],
    '*/20 9-17/4 * * *': ['2025-01-01 09:00', '2025-01-01 09:20',
                          '2025-01-01 09:40', '2025-01-01 13:00'],
    '0 0 1 jan-mar/2 *': ['2025-03-01 00:00', '2026-01-01 00:00'],
    '59 23 31 12 *': ['2025-12-31 23:59', '2026-12-31 23:59'],
    '0 0 29 2 *': ['2028-02-29 00:00', '2032-02-29 00:00'],
    # Our extensions, under the same day rule.  '?' is '*'.
    '0 0 ? * MON': ['2025-01-06 00:00', '2025-01-13 00:00'],
    '0 12 L * *': ['2025-01-31 12:00', '2025-02-28 12:00',
                   '2025-03-31 12:00'],
    # Both restricted: the last day or any Monday.
    '0 0 L * 1': ['2025-01-06 00:00', '2025-01-13 00:00',
                  '2025-01-20 00:00', '2025-01-27 00:00',
                  '2025-01-31 00:00', '2025-02-03 00:00'],
    '0 0 * * MON#1': ['2025-01-06 00:00', '2025-02-03 00:00',
                      '2025-03-03 00:00'],
    # The 15th or the first Monday (the docs promised OR; it runs now).
    '0 0 15 * mon#1': ['2025-01-06 00:00', '2025-01-15 00:00',
                       '2025-02-03 00:00', '2025-02-15 00:00'],
    '0 0 * * L5': ['2025-01-31 00:00', '2025-02-28 00:00',
                   '2025-03-28 00:00'],
    '0 0 * * 5L': ['2025-01-31 00:00', '2025-02-28 00:00',
                   '2025-03-28 00:00'],
    '0 0 10/10 * *': ['2025-01-10 00:00', '2025-01-20 00:00',
                      '2025-01-30 00:00', '2025-02-10 00:00'],
}

# expression -> a fragment of the message it is refused with.
REFUSED = {
    '*/61 * * * *': 'step of 61, larger than the range 0-59',
    '0-59/100 * * * *': 'step of 100',
    '* */24 * * *': 'step of 24, larger than the range 0-23',
    '0 0 */31 * *': 'would select only 1',
    '0 0 * */12 *': 'step of 12',
    '0 0 * * */8': 'step of 8, larger than the range 0-7',
    '5-5/2 * * * *': 'would select only 5',
    '0 0 */0 * *': 'step of 0',
    '0 22-2 * * *': 'downwards',
    '0 0 * * 2-1': 'downwards',
    '0 0 15W * *': 'nearest weekday (W)',
    '0 0 LW * *': 'nearest weekday (W)',
    '0 ~ * * *': 'random value',
    '0 1~5 * * *': 'random value',
    'R * * * *': 'random value',
    '0 0 * * 1#6': 'must be 1 to 5',
    '0 0 * * 1#0': 'must be 1 to 5',
    '0 0 1-5#2 * *': "day-of-month field '1-5#2'",
    '0\u00a00 * * *': 'U+00A0 NO-BREAK SPACE',
    '0 0 * * *\n': 'U+000A',
    '0 0\u3000* * *': 'U+3000 IDEOGRAPHIC SPACE',
    '\u0661 0 * * *': 'U+0661 ARABIC-INDIC DIGIT ONE',
    '1,,2 * * * *': 'empty list item',
    '0 0 * ? *': "month field '?'",
    '0 0 ?/2 * *': "'?/2'",
    '0 0 L * L': "day-of-week field 'L'",
    '60 * * * *': "minute field '60'",
    '0 0 * * 8': "day-of-week field '8'",
    '0 0 * jan-foo *': "'foo'",
    '0 0 * * monday': "'monday'",
    '0 0 L-2 * *': "'L-2'",
}


class TestCronieSemantics(base.BaseTestCase):

    def test_table(self):
        for expression, expected in CRONIE_TABLE.items():
            self.assertEqual(expected,
                             _runs(expression, count=len(expected)),
                             expression)

    def test_refused_with_a_message(self):
        for expression, fragment in REFUSED.items():
            error = self.assertRaises(exception.InvalidCronExpression,
                                      cron.parse, expression)
            self.assertIn(fragment, str(error), expression)

    def test_largest_sensible_steps_are_accepted(self):
        self.assertEqual((0, 59), cron.parse('*/59 * * * *').minutes)
        self.assertEqual(frozenset({1, 31}),
                         cron.parse('0 0 */30 * *').days)
        self.assertEqual(frozenset({0}), cron.parse('0 0 * * */7').weekdays)

    def test_tabs_and_runs_of_spaces_separate_fields(self):
        self.assertEqual(cron.parse('30 2 * * *'),
                         cron.parse(' 30\t2  * \t*  * '))

    def test_aliases_are_cronie_s(self):
        for alias, expression in cron.ALIASES.items():
            self.assertEqual(cron.parse(expression), cron.parse(alias))
        self.assertEqual(cron.parse('0 0 * * 0'), cron.parse('@WEEKLY'))

    def test_never_runs(self):
        for expression in ('0 0 30 2 *', '0 0 31 4,6,9,11 *',
                           '0 0 31 2 */1'):
            self.assertEqual([], _runs(expression), expression)

    def test_end_of_time(self):
        parsed = cron.parse('* * * * *')
        self.assertIsNone(parsed.next_after(datetime.datetime.max))
        self.assertIsNone(cron.parse('0 0 1 1 *').next_after(
            datetime.datetime(9999, 6, 1)))

    def test_rare_match_is_found(self):
        # */28 is days 1 and 29; it starts with '*', so AND with Monday:
        # 1 February or 29 February falling on a Monday.
        self.assertEqual(['2027-02-01 00:00', '2038-02-01 00:00',
                          '2044-02-01 00:00', '2044-02-29 00:00'],
                         _runs('0 0 */28 2 1'))


# The oracle: a schedule is generated as sets (the stated meaning of each
# term), rendered as text, and the runs of the sets are found minute by
# minute on each day, by the stated rule, independently of cron.py.

_FIELD_RANGES = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))


@st.composite
def _plain_term(draw, index):
    low, high = _FIELD_RANGES[index]
    kind = draw(st.sampled_from(('star', 'value', 'range', 'from')))
    if kind == 'star':
        step = draw(st.sampled_from([1, 1, 2, 3, 5, high - low]))
        text = '*' if step == 1 else '*/%d' % step
        return text, set(range(low, high + 1, step))
    first = draw(st.integers(low, high))
    if kind == 'value':
        return str(first), {first}
    if kind == 'from':
        if first == high:
            return str(first), {first}
        step = draw(st.integers(1, high - first))
        return '%d/%d' % (first, step), set(range(first, high + 1, step))
    last = draw(st.integers(first, high))
    step = draw(st.integers(1, max(1, last - first)))
    text = '%d-%d' % (first, last) + ('/%d' % step if step > 1 else '')
    return text, set(range(first, last + 1, step))


@st.composite
def _day_term(draw, index):
    kind = draw(st.sampled_from(('plain', 'plain', 'plain', 'special')))
    if kind == 'plain':
        text, values = draw(_plain_term(index))
        return text, values, None
    if index == 2:
        return 'L', set(), ('last-day',)
    day = draw(st.integers(0, 7))
    if draw(st.booleans()):
        nth = draw(st.integers(1, 5))
        return '%d#%d' % (day, nth), set(), ('nth', day % 7, nth)
    return 'L%d' % day, set(), ('last-weekday', day % 7)


@st.composite
def _expression(draw):
    texts, sets, specials = [], [], []
    for index in range(5):
        count = draw(st.integers(1, 3))
        terms = [draw(_day_term(index) if index in (2, 4)
                      else _plain_term(index)) for _ in range(count)]
        texts.append(','.join(term[0] for term in terms))
        values = set()
        for term in terms:
            values |= term[1]
        sets.append(values)
        specials.append([term[2] for term in terms
                         if len(term) > 2 and term[2]])
    return ' '.join(texts), sets, specials


def _oracle_day(day, sets, specials, texts):
    dom_terms, dow_terms = specials[2], specials[4]
    length = ((day.replace(day=28) + datetime.timedelta(days=4)).replace(
        day=1) - datetime.timedelta(days=1)).day
    weekday = day.isoweekday() % 7
    in_month = day.day in sets[2] or (
        ('last-day',) in dom_terms and day.day == length)
    in_week = (weekday in sets[4] or weekday + 7 in sets[4]
               or ('nth', weekday, (day.day - 1) // 7 + 1) in dow_terms
               or (('last-weekday', weekday) in dow_terms
                   and day.day + 7 > length))
    if texts[2].startswith('*') or texts[4].startswith('*'):
        return in_month and in_week
    return in_month or in_week


def _oracle_next(start, sets, specials, texts, horizon_days):
    minute = start.replace(second=0, microsecond=0) + datetime.timedelta(
        minutes=1)
    day = minute.date()
    for _ in range(horizon_days):
        if day.month in sets[3] and _oracle_day(day, sets, specials, texts):
            moment = max(minute, datetime.datetime.combine(
                day, datetime.time()))
            while moment.date() == day:
                if moment.hour in sets[1] and moment.minute in sets[0]:
                    return moment
                moment += datetime.timedelta(minutes=1)
        day += datetime.timedelta(days=1)
    return None


class TestAgainstBruteForce(base.BaseTestCase):

    @hypothesis.settings(max_examples=300, deadline=None,
                         # test_schedule_croniter runs it again in a
                         # subclass (the croniter engine).
                         suppress_health_check=[
                             hypothesis.HealthCheck.too_slow,
                             hypothesis.HealthCheck.differing_executors])
    @hypothesis.given(_expression(),
                      st.datetimes(min_value=datetime.datetime(2000, 1, 1),
                                   max_value=datetime.datetime(2090, 1, 1)))
    def test_next_runs_match_the_stated_rule(self, generated, start):
        text, sets, specials = generated
        parsed = cron.parse(text)
        texts = text.split(' ')
        horizon = 8 * 366
        current = start
        for _ in range(3):
            expected = _oracle_next(current, sets, specials, texts, horizon)
            got = parsed.next_after(current)
            if expected is None:
                # Nothing within the horizon: ours must not invent one.
                self.assertTrue(
                    got is None or got.date() >= (
                        current + datetime.timedelta(days=horizon - 1)
                    ).date(), (text, current, got))
                return
            self.assertEqual(expected, got, (text, current))
            current = got
