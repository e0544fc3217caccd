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
"""A slot's start and completion windows, and exclusion windows.  No I/O.

The rules (doc/source/user/windows.rst):

* **start window**: how long after its slot a backup may still start.  A
  policy's ``start_window`` (seconds), or by default half the time to the
  policy's next slot, at least :data:`START_FLOOR` and at most
  :data:`START_CEILING` (:data:`ONCE_START` for a one-off schedule);
* **completion window**: how long after its slot the backup should have
  finished.  A policy's ``completion_window``, or by default the time to
  the next slot, at least :data:`COMPLETION_FLOOR` and at most
  :data:`COMPLETION_CEILING` (:data:`ONCE_COMPLETION` for a one-off);
  never shorter than the start window;
* **exclusions**: periods, in the policy's time zone, when no backup may
  start -- weekly ranges (``Fri 18:00-Mon 06:00``), days (``Sat-Sun``),
  daily ranges, on some days or all (``Mon-Fri 09:00-17:00``,
  ``01:00-03:00``), dates (``2026-12-24``) and date ranges
  (``2026-12-24..2026-12-26``).  They are read in local wall-clock time,
  so they mean the same hours in summer and in winter.
"""

import datetime
import re

# Seconds.
MIN_WINDOW = 60
MAX_START_WINDOW = 7 * 86400
MAX_COMPLETION_WINDOW = 31 * 86400
START_FRACTION = 0.5
START_FLOOR = 60
START_CEILING = 8 * 3600
ONCE_START = 3600
COMPLETION_FLOOR = 3600
COMPLETION_CEILING = 7 * 86400
ONCE_COMPLETION = 86400

MAX_EXCLUSIONS = 20
MAX_EXCLUSION_LENGTH = 64

_DAYS = ('Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun')
_WEEK = 7 * 1440
_DAY = r'([A-Za-z]{3})'
_TIME = r'([0-9]{1,2}:[0-9]{2})'
_DATE = r'([0-9]{4}-[0-9]{2}-[0-9]{2})'
_FORMS = {
    'weekly': re.compile(r'^%s %s\s*-\s*%s %s$' % (
        _DAY, _TIME, _DAY, _TIME)),
    'days_daily': re.compile(r'^%s(?:\s*-\s*%s)? %s\s*-\s*%s$' % (
        _DAY, _DAY, _TIME, _TIME)),
    'daily': re.compile(r'^%s\s*-\s*%s$' % (_TIME, _TIME)),
    'days': re.compile(r'^%s(?:\s*-\s*%s)?$' % (_DAY, _DAY)),
    'dates': re.compile(r'^%s(?:\s*\.\.\s*%s)?$' % (_DATE, _DATE)),
}

FORMS_HELP = ("write a weekly range such as 'Fri 18:00-Mon 06:00', days "
              "such as 'Sat' or 'Sat-Sun', a daily range such as "
              "'01:00-03:00' (on some days only: 'Mon-Fri 09:00-17:00'), "
              "a date such as '2026-12-24' or a date range such as "
              "'2026-12-24..2026-12-26'")


class InvalidExclusion(ValueError):
    """An exclusion that cannot be read; the message says what to write."""


def _interval(sched, slot):
    following = sched.next_time(slot) if sched is not None else None
    if following is None:
        return None
    return (following - slot).total_seconds()


def default_start_window(interval):
    """The start window of a slot ``interval`` seconds before the next."""
    if interval is None:
        return ONCE_START
    return int(min(max(interval * START_FRACTION, START_FLOOR),
                   START_CEILING))


def default_completion_window(interval):
    """The completion window of a slot ``interval`` s before the next."""
    if interval is None:
        return ONCE_COMPLETION
    return int(min(max(interval, COMPLETION_FLOOR), COMPLETION_CEILING))


def windows_for(start_window, completion_window, interval):
    """``(start, completion)`` seconds: the policy's, or the defaults."""
    start = (start_window if start_window is not None
             else default_start_window(interval))
    completion = (completion_window if completion_window is not None
                  else default_completion_window(interval))
    return start, max(start, completion)


def slot_deadlines(start_window, completion_window, sched, slot,
                   interval=None):
    """``(start_deadline, completion_deadline)`` of the slot at ``slot``.

    ``interval`` (seconds to the next slot) saves computing it from
    ``sched`` when the caller knows it.
    """
    if interval is None and (start_window is None
                             or completion_window is None):
        interval = _interval(sched, slot)
    start, completion = windows_for(start_window, completion_window,
                                    interval)
    return (slot + datetime.timedelta(seconds=start),
            slot + datetime.timedelta(seconds=completion))


def manual_deadlines(start_window, completion_window, sched, now):
    """Deadlines of a manual run at ``now``: the schedule's usual gap."""
    interval = None
    if (start_window is None or completion_window is None) \
            and sched is not None:
        following = sched.next_time(now)
        if following is not None:
            interval = _interval(sched, following)
    return slot_deadlines(start_window, completion_window, None, now,
                          interval=interval)


def validate_windows(start_window, completion_window):
    """Raise ValueError, with what to change, for windows out of bounds."""
    for name, value, maximum in (
            ('start_window', start_window, MAX_START_WINDOW),
            ('completion_window', completion_window,
             MAX_COMPLETION_WINDOW)):
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) \
                or not MIN_WINDOW <= value <= maximum:
            raise ValueError(
                '%s must be a whole number of seconds from %d to %d, '
                'not %r.' % (name, MIN_WINDOW, maximum, value))
    if (start_window is not None and completion_window is not None
            and completion_window < start_window):
        raise ValueError(
            'completion_window (%d s) must not be shorter than '
            'start_window (%d s): both are counted from the slot.'
            % (completion_window, start_window))


# Exclusions.

def _day(text, whole):
    for index, name in enumerate(_DAYS):
        if name.lower() == text.lower():
            return index
    raise InvalidExclusion('exclusion %r: %r is not a day of the week '
                           '(write one of %s).' % (whole, text,
                                                   ', '.join(_DAYS)))


def _minutes(text, whole, end=False):
    hours, minutes = (int(part) for part in text.split(':'))
    if minutes > 59 or hours > 24 or (hours == 24 and (minutes or not end)):
        raise InvalidExclusion('exclusion %r: %r is not a time of day '
                               '(write HH:MM, from 00:00 to 23:59; 24:00 '
                               'may end a range).' % (whole, text))
    return hours * 60 + minutes


def _date(text, whole):
    try:
        return datetime.date.fromisoformat(text)
    except ValueError:
        raise InvalidExclusion('exclusion %r: %r is not a date (write '
                               'YYYY-MM-DD).' % (whole, text))


def _span(start, end, whole):
    """Minutes from ``start`` to ``end`` around the week; never 0."""
    length = (end - start) % _WEEK
    if length == 0:
        raise InvalidExclusion('exclusion %r is empty: it ends when it '
                               'starts.' % whole)
    return length


def _clock(minutes):
    return '%02d:%02d' % divmod(minutes, 60)


class Exclusion:
    """One exclusion window; ``text`` is its canonical spelling."""

    def __init__(self, text, spans=(), dates=None):
        self.text = text
        # (minute of the week it starts, length in minutes), Monday 00:00
        # being minute 0.
        self.spans = tuple(spans)
        # (first, last) local dates, both included.
        self.dates = dates

    def contains(self, local):
        """Whether the local wall time ``local`` (a datetime) is inside."""
        if self.dates is not None:
            return self.dates[0] <= local.date() <= self.dates[1]
        minute = (local.weekday() * 1440 + local.hour * 60 + local.minute
                  + (local.second + local.microsecond / 1e6) / 60.0)
        return any((minute - start) % _WEEK < length
                   for start, length in self.spans)

    def __repr__(self):
        return '<Exclusion %r>' % self.text


def parse_exclusion(text):
    """An :class:`Exclusion` from its text; InvalidExclusion if unreadable."""
    if not isinstance(text, str):
        raise InvalidExclusion('an exclusion must be a string, not %r.'
                               % (text,))
    whole = text.strip()
    if len(whole) > MAX_EXCLUSION_LENGTH:
        raise InvalidExclusion('exclusion %r is longer than %d characters.'
                               % (whole[:MAX_EXCLUSION_LENGTH] + '...',
                                  MAX_EXCLUSION_LENGTH))
    match = _FORMS['weekly'].match(whole)
    if match:
        first, start, last, end = match.groups()
        begin = _day(first, whole) * 1440 + _minutes(start, whole)
        finish = _day(last, whole) * 1440 + _minutes(end, whole, True)
        return Exclusion('%s %s-%s %s' % (
            _DAYS[begin // 1440], start.zfill(5), _DAYS[_day(last, whole)],
            end.zfill(5)), [(begin, _span(begin, finish, whole))])
    match = _FORMS['days_daily'].match(whole) or _FORMS['daily'].match(whole)
    if match:
        groups = match.groups()
        if len(groups) == 2:
            days, label = range(7), ''
            start, end = groups
        else:
            first, last, start, end = groups
            days, label = _day_range(first, last, whole)
            label += ' '
        begin, finish = _minutes(start, whole), _minutes(end, whole, True)
        length = (finish - begin) % 1440
        if length == 0:
            raise InvalidExclusion('exclusion %r is empty: it ends when '
                                   'it starts.' % whole)
        return Exclusion('%s%s-%s' % (label, _clock(begin), _clock(finish)),
                         [(day * 1440 + begin, length) for day in days])
    match = _FORMS['days'].match(whole)
    if match:
        days, label = _day_range(match.group(1), match.group(2), whole)
        return Exclusion(label, [(day * 1440, 1440) for day in days])
    match = _FORMS['dates'].match(whole)
    if match:
        first = _date(match.group(1), whole)
        last = _date(match.group(2), whole) if match.group(2) else first
        if last < first:
            raise InvalidExclusion('exclusion %r ends (%s) before it '
                                   'starts (%s).' % (whole, last, first))
        text = (first.isoformat() if last == first
                else '%s..%s' % (first.isoformat(), last.isoformat()))
        return Exclusion(text, dates=(first, last))
    raise InvalidExclusion('exclusion %r is not understood: %s.'
                           % (whole, FORMS_HELP))


def _day_range(first, last, whole):
    begin = _day(first, whole)
    if last is None:
        return [begin], _DAYS[begin]
    end = _day(last, whole)
    count = (end - begin) % 7 + 1
    return ([(begin + step) % 7 for step in range(count)],
            '%s-%s' % (_DAYS[begin], _DAYS[end]))


def parse_exclusions(texts):
    """The exclusions of a policy (a list of texts, or None)."""
    if texts is None:
        return ()
    if not isinstance(texts, (list, tuple)):
        raise InvalidExclusion('exclusions must be a list of strings.')
    if len(texts) > MAX_EXCLUSIONS:
        raise InvalidExclusion('a policy has at most %d exclusions, not %d.'
                               % (MAX_EXCLUSIONS, len(texts)))
    return tuple(parse_exclusion(text) for text in texts)


def excluded_by(exclusions, when, zone):
    """The first exclusion that the UTC time ``when`` falls in, or None."""
    if not exclusions:
        return None
    local = when.astimezone(zone)
    for exclusion in exclusions:
        if exclusion.contains(local):
            return exclusion
    return None
