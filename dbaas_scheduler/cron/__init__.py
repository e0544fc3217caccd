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
"""Five-field cron expressions: grammar, hashed ``H`` fields, next match.

Pure functions on naive wall-clock datetimes; :mod:`dbaas_scheduler.schedule`
maps them to instants in a time zone.  The meaning is classic cron's as
cronie (the cron of most Linux distributions) implements it, stated in
doc/source/user/schedules.rst:

* a field is a comma-separated list of terms: ``*``, ``N``, ``A-B`` with
  ``A <= B`` (so ``A-A`` is ``A``), each optionally followed by ``/STEP``;
  a range must go upwards, except that a day-of-week range may end at 0
  (``FRI-SUN`` is 5-7);
* a step that cannot select more than the first value of its range
  (``*/61`` in minutes, ``0-59/100``) is refused -- cronie only warns;
* the day is matched as cronie's job matcher does: if the day-of-month or
  the day-of-week field *starts with* ``*`` both must match (AND);
  otherwise either may (OR).  So ``0 0 */2 * 1`` runs on odd-numbered days
  that are Mondays, and ``0 0 1 * */1`` on the 1st only.

Extensions, none of which changes the meaning of anything cronie accepts:
``N/STEP`` (``N-max/STEP``), ``?`` for ``*`` in the day fields, ``L`` (last
day of the month) in day-of-month, ``D#N`` (the N-th weekday D of the
month) and ``LD``/``DL`` (its last weekday D) in day-of-week, and the
hashed ``H`` terms of :func:`hash_value`.  ``W``, cronie's random ``~``
and croniter's ``R`` are refused.

This module and :mod:`~dbaas_scheduler.cron.grammar` are the layer that
gives a text its meaning; an engine finds the next match from the parsed
value sets: :mod:`~dbaas_scheduler.cron.native` (the default) or
:mod:`~dbaas_scheduler.cron.croniter_engine`, chosen with
:func:`use_engine` (doc/source/contributor/schedules.rst).
"""

import calendar
import datetime

from dbaas_scheduler.cron import grammar
from dbaas_scheduler.cron import native

# The grammar's public names, as callers know them.
ALIASES = grammar.ALIASES
FIELDS = grammar.FIELDS
hash_value = grammar.hash_value
is_hashed = grammar.is_hashed
split_fields = grammar.split_fields


# The engines that find the next match; the layer here (grammar, H, the
# day rule) is the same for each.  croniter is imported on first use only.
ENGINES = ('native', 'croniter')
DEFAULT_ENGINE = native.NAME
_engine = native


def use_engine(name):
    """Choose the engine behind :meth:`CronExpression.next_after`.

    ``native`` (the default) walks the parsed value sets itself;
    ``croniter`` hands plain expressions to croniter
    (:mod:`dbaas_scheduler.cron.croniter_engine`).  Both give the same
    run times; the process-wide choice is ``[DEFAULT] cron_engine``.
    """
    global _engine
    if name == native.NAME:
        _engine = native
    elif name == 'croniter':
        from dbaas_scheduler.cron import croniter_engine
        _engine = croniter_engine
    else:
        raise ValueError('unknown cron engine %r; use one of %s'
                         % (name, ', '.join(ENGINES)))


def engine_name():
    """The name of the engine in use."""
    return _engine.NAME


# Field value sets are the same in most expressions ('*' in three fields
# of 'H H * * *'); an engine keeps thousands of parsed expressions, so they
# share one copy of each.  Bounded, as the API parses whatever it is sent.
_SHARED = {}
_MAX_SHARED = 20000


def _shared(value):
    if len(_SHARED) >= _MAX_SHARED:
        return _SHARED.get(value, value)
    return _SHARED.setdefault(value, value)


class CronExpression:
    """A parsed five-field cron expression.  Build one with :func:`parse`.

    Instances are immutable and hashable; two expressions that select the
    same minutes compare equal (``key``), whatever their spelling.
    """

    __slots__ = ('minutes', 'hours', 'days', 'last_day', 'months',
                 'weekdays', 'nth_weekdays', 'last_weekdays', 'days_and',
                 'resolved', 'key')

    def __init__(self, fields, days_and, resolved):
        minute, hour, dom, month, dow = fields
        self.minutes = _shared(tuple(sorted(minute.values)))
        self.hours = _shared(tuple(sorted(hour.values)))
        self.days = _shared(frozenset(dom.values))
        self.last_day = dom.last_day
        self.months = _shared(frozenset(month.values))
        # 7 is Sunday, as 0 is.
        self.weekdays = _shared(frozenset(day % 7 for day in dow.values))
        self.nth_weekdays = _shared(frozenset(dow.nth_weekdays))
        self.last_weekdays = _shared(frozenset(dow.last_weekdays))
        self.days_and = days_and
        self.resolved = resolved
        self.key = (self.minutes, self.hours,
                    _shared(tuple(sorted(self.days))), self.last_day,
                    _shared(tuple(sorted(self.months))),
                    _shared(tuple(sorted(self.weekdays))),
                    _shared(tuple(sorted(self.nth_weekdays))),
                    _shared(tuple(sorted(self.last_weekdays))), days_and)

    def __eq__(self, other):
        return isinstance(other, CronExpression) and self.key == other.key

    def __hash__(self):
        return hash(self.key)

    def __repr__(self):
        return '<CronExpression %r>' % self.resolved

    def day_matches(self, year, month, day):
        """True if the expression runs on this date (at some time)."""
        if month not in self.months:
            return False
        first_weekday, length = calendar.monthrange(year, month)
        return self.day_matches_weekday(day, (first_weekday + day) % 7,
                                        length)

    def day_matches_weekday(self, day, weekday, length):
        """:meth:`day_matches` for a day of a month already looked up.

        ``weekday`` counts from Sunday = 0; ``length`` is the month's.
        """
        # ``weekday`` counts from Sunday = 0, as cron does.
        in_month = day in self.days or (self.last_day and day == length)
        in_week = (weekday in self.weekdays
                   or (weekday, (day + 6) // 7) in self.nth_weekdays
                   or (weekday in self.last_weekdays and day + 7 > length))
        if self.days_and:
            return in_month and in_week
        return in_month or in_week

    def next_after(self, wall):
        """The first matching wall-clock minute strictly after ``wall``.

        ``wall`` is a naive datetime; returns a naive datetime, or None if
        nothing matches within 400 years (then nothing ever does).  The
        engine chosen with :func:`use_engine` finds it.
        """
        try:
            start = wall.replace(second=0, microsecond=0) + (
                datetime.timedelta(minutes=1))
        except OverflowError:
            # The last minute of year 9999: nothing comes after it.
            return None
        return _engine.next_after(self, start)


def parse(expression, hash_key=None):
    """Parse a cron expression or alias; raise InvalidCronExpression.

    :param hash_key: what ``H`` terms are hashed with (the policy id); an
        expression with ``H`` and no hash key raises ValueError.
    """
    texts = grammar.split_fields(expression)
    fields = [grammar.parse_field(text, index, expression, hash_key)
              for index, text in enumerate(texts)]
    # cronie's rule: the day fields combine with AND if either starts with
    # '*' (cron.c tests DOM_STAR/DOW_STAR, set by entry.c on the field's
    # first character), else with OR.  '?' is our spelling of '*' there.
    days_and = (texts[grammar.DAY_OF_MONTH][0] in '*?'
                or texts[grammar.DAY_OF_WEEK][0] in '*?')
    resolved = ' '.join(','.join(field.resolved) for field in fields)
    return CronExpression(fields, days_and, resolved)


def resolve(expression, hash_key):
    """The expression with each ``H`` term replaced by the values it selects.

    Returns None if it has no ``H``.  The result is plain cron with the same
    run times, and the same expression for every policy whose ``H`` terms
    hashed alike -- which lets the engine share one parsed schedule among
    them.
    """
    if not isinstance(expression, str) or not grammar.is_hashed(expression):
        return None
    return parse(expression, hash_key).resolved
