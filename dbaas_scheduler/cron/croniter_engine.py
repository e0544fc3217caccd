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
"""The croniter engine: croniter finds the next match, cronie's meaning.

croniter is given only what it and cronie agree on.  The layer in
:mod:`dbaas_scheduler.cron` has already parsed the text with our grammar:
``H`` is hashed into plain numbers, ``a-a`` is ``a``, names, ``?``, ``7``
and ``DL`` are normalised, and every field is a set of values.  From those
sets this module writes one or more plain expressions, each evaluated
with croniter's ``day_or=False`` (day-of-month AND day-of-week), and
returns the earliest of their next matches:

* cronie's AND (either day field starts with ``*``): one expression,
  ``DOM DOW``;
* cronie's OR: ``DOM *`` and ``* DOW``, each on its own -- croniter's own
  ``day_or=True`` treats a field holding ``#`` or ``L`` as an AND;
* croniter refuses a day-of-week field that mixes plain weekdays with
  ``D#N`` or ``LD``, so such a field is split in two expressions too.
"""

import datetime
import threading

import croniter

from dbaas_scheduler.cron import grammar

NAME = 'croniter'

_ALL_MINUTES = tuple(range(60))
_ALL_HOURS = tuple(range(24))
_ALL_DAYS = frozenset(range(1, 32))
_ALL_MONTHS = frozenset(range(1, 13))
_ALL_WEEKDAYS = frozenset(range(7))
_STAR = '*'

# Compiled expressions by CronExpression.key: many policies share one.
# Bounded, as the API parses whatever it is sent.
_COMPILED = {}
_MAX_COMPILED = 20000


def _list(values, everything):
    if values == everything:
        return _STAR
    return ','.join(str(value) for value in sorted(values))


class _Part:
    """One plain expression and its croniter.

    One thread at a time may use it: croniter keeps the current time in
    the object.
    """

    __slots__ = ('text', '_iterator', '_lock')

    def __init__(self, text):
        self.text = text
        self._iterator = croniter.croniter(
            text, datetime.datetime(2000, 1, 1), day_or=False,
            max_years_between_matches=grammar.HORIZON_YEARS)
        self._lock = threading.Lock()

    def first_at_or_after(self, start):
        # croniter's next match is strictly after its start time.
        before = start - datetime.timedelta(minutes=1)
        try:
            with self._lock:
                return self._iterator.get_next(datetime.datetime,
                                               start_time=before)
        except (croniter.CroniterBadDateError, ValueError, OverflowError):
            # No match within the horizon, or the calendar ends first.
            return None


def _day_pairs(expression):
    # (day-of-month text, day-of-week text) pairs whose union is the
    # expression's days, each pair an AND.
    full_month = expression.days == _ALL_DAYS
    if full_month:
        doms = [_STAR]
    else:
        doms = [','.join(str(day) for day in sorted(expression.days))
                ] if expression.days else []
        # L on its own: croniter reads a list holding L ("2,L") as every
        # day of the month.
        if expression.last_day:
            doms.append('L')
    plain = expression.weekdays
    special = ['%d#%d' % pair for pair in sorted(expression.nth_weekdays)]
    special += ['L%d' % day for day in sorted(expression.last_weekdays)]
    full_week = plain == _ALL_WEEKDAYS
    dows = []
    if full_week:
        dows.append(_STAR)
    else:
        if plain:
            dows.append(_list(plain, _ALL_WEEKDAYS))
        if special:
            dows.append(','.join(special))
    if expression.days_and:
        return [(dom, dow) for dom in doms for dow in dows]
    # cronie's OR: either field may match.  A field that selects every day
    # makes every day match.
    if full_month or full_week:
        return [(_STAR, _STAR)]
    return [(dom, _STAR) for dom in doms] + [(_STAR, dow) for dow in dows]


def _compile(expression):
    minute = _list(expression.minutes, _ALL_MINUTES)
    hour = _list(expression.hours, _ALL_HOURS)
    month = _list(expression.months, _ALL_MONTHS)
    return tuple(_Part(' '.join((minute, hour, dom, month, dow)))
                 for dom, dow in _day_pairs(expression))


def compiled(expression):
    """The croniter parts of a parsed expression, compiled once."""
    parts = _COMPILED.get(expression.key)
    if parts is None:
        parts = _compile(expression)
        if len(_COMPILED) < _MAX_COMPILED:
            _COMPILED[expression.key] = parts
    return parts


def next_after(expression, start):
    """The first matching minute at or after ``start`` (a whole minute).

    Returns a naive datetime, or None if nothing matches within
    :data:`grammar.HORIZON_YEARS` (then nothing ever does).
    """
    found = [match for match in (part.first_at_or_after(start)
                                 for part in compiled(expression))
             if match is not None]
    return min(found) if found else None
