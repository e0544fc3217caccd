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
"""Schedule maths: validate a backup schedule and compute its run times.

Pure functions without I/O.  Every datetime that goes in or comes out is
timezone-aware; results are in UTC.  Local time exists only in here.

Three kinds of schedule:

``cron``
    Five fields (minute hour day-of-month month day-of-week) with the
    meaning classic cron (cronie) gives them, one of the aliases in
    :data:`CRON_ALIASES`, and hashed ``H`` terms derived from the policy
    id, so that a thousand policies written ``H 2 * * *`` spread over the
    hour.  The grammar, the day-of-month/day-of-week rule and the hash are
    in :mod:`dbaas_scheduler.cron`.  Evaluated in the policy's local wall
    time.
``interval``
    A whole number of seconds between runs, or of minutes, hours or days
    with a unit (``90m``, ``6h``, ``1d``), anchored at ``start_at``.  It is
    absolute time: a daylight saving change does not shift it.
``once``
    One ISO 8601 date and time; without an offset it is local time in the
    policy's time zone.

Daylight saving rule for local times (cron, and ``once`` without offset):

* a local time that does not exist (spring forward) runs once, at the
  first valid instant after it -- the moment of the change;
* a local time that occurs twice (fall back) runs once, at its first
  occurrence.

The cron evaluator only finds the next matching *wall-clock* time, on
naive datetimes; this module maps each wall-clock time to an instant.
"""

import datetime
import functools
import re

from dbaas_scheduler import cron
from dbaas_scheduler import exception
from dbaas_scheduler import timezones

UTC = timezones.UTC

CRON = 'cron'
INTERVAL = 'interval'
ONCE = 'once'
SCHEDULE_TYPES = (CRON, INTERVAL, ONCE)

# Classic cron meanings; never hashed, so "@daily" is midnight for every
# policy.
CRON_ALIASES = cron.ALIASES

# How far one wall-clock step may have to be skipped because it maps to an
# instant already passed (the repeated hour of a fall-back change, at one
# candidate per minute).  Guards the loop; never reached by a valid zone.
_MAX_SKIPPED_CANDIDATES = 10000

# Span scanned when deciding whether a cron expression can fire on two
# consecutive days: 28 years repeat every weekday/leap-year combination.
_CONSECUTIVE_DAY_SCAN_YEARS = 28

# An interval: ASCII digits, then optionally one unit letter.
_INTERVAL = re.compile(r'([0-9]+)([smhd]?)')
_INTERVAL_UNITS = {'': 1, 's': 1, 'm': 60, 'h': 3600, 'd': 86400}
# Longer than this is surely a mistake (and would overflow a timedelta).
_MAX_INTERVAL_SECONDS = 100 * 366 * 86400
_ONE_MICROSECOND = datetime.timedelta(microseconds=1)
_ONE_DAY = datetime.timedelta(days=1)


def _require_aware(value, name):
    if value is None:
        return None
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError('%s must be timezone-aware, got %r' % (name, value))
    return value.astimezone(UTC)


class Schedule:
    """A parsed, valid schedule.  Build one with :func:`parse_schedule`."""

    type = None

    def __init__(self, expression, zone, start_at=None, end_at=None):
        self.expression = expression
        self.zone = zone
        self.start_at = _require_aware(start_at, 'start_at')
        self.end_at = _require_aware(end_at, 'end_at')

    @property
    def timezone(self):
        return self.zone.key

    @functools.cached_property
    def share_key(self):
        """Equal for schedules that always give the same run times.

        Lets a caller compute run times once for many policies -- those
        with the same expression, zone and bounds, and also hashed cron
        schedules whose ``H`` fields hashed to the same values.
        """
        return (self.type, self._times_key(), self.timezone, self.start_at,
                self.end_at)

    def _times_key(self):
        raise NotImplementedError

    def next_time(self, after):
        """The first run time strictly after ``after``, or None if none.

        Runs before ``start_at`` or after ``end_at`` do not count; a run
        exactly at ``start_at`` does.  A run past the end of the calendar
        (9999-12-31 UTC, or in the policy's time zone) is no run.
        """
        try:
            candidate = self._next_from_start(after)
        except OverflowError:
            return None
        if candidate is None:
            return None
        if self.end_at is not None and candidate > self.end_at:
            return None
        return candidate

    def _next_from_start(self, after):
        # next_time() without the end_at bound.
        after = _require_aware(after, 'after')
        if self.start_at is not None and after < self.start_at:
            after = self.start_at - _ONE_MICROSECOND
        return self._next_after(after)

    def min_gap_seconds(self):
        """The shortest gap between two runs, in seconds; None if one run.

        For cron schedules it is measured in local wall-clock time and is
        exact within a day; across days it is a lower bound.
        """
        raise NotImplementedError

    def _next_after(self, after):
        raise NotImplementedError

    def __repr__(self):
        return '<%s %r tz=%s>' % (type(self).__name__, self.expression,
                                  self.timezone)


class CronSchedule(Schedule):
    """A cron expression evaluated in local wall-clock time."""

    type = CRON

    def __init__(self, expression, zone, start_at=None, end_at=None,
                 hash_key=None):
        super().__init__(expression, zone, start_at, end_at)
        # Parsed once; immutable, so shared freely between threads.
        self.parsed = cron.parse(expression, hash_key)
        self.hash_key = hash_key if cron.is_hashed(expression) else None

    def _next_after(self, after):
        wall = after.astimezone(self.zone).replace(tzinfo=None)
        candidate = wall
        for _ in range(_MAX_SKIPPED_CANDIDATES):
            candidate = self.parsed.next_after(candidate)
            if candidate is None:
                # Nothing matches, ever: "0 0 30 2 *".
                return None
            instant = timezones.wall_time_to_utc(candidate, self.zone)
            if instant > after:
                return instant
        raise RuntimeError('no run of %r found after %s'
                           % (self.expression, after))

    def _times_key(self):
        return self.parsed.key

    def min_gap_seconds(self):
        minutes = self.parsed.minutes
        hours = self.parsed.hours
        gaps = [b - a for a, b in zip(minutes, minutes[1:])]
        span = minutes[-1] - minutes[0]
        gaps += [(h2 - h1) * 60 - span for h1, h2 in zip(hours, hours[1:])]
        overnight = (24 * 60 - (hours[-1] * 60 + minutes[-1])
                     + hours[0] * 60 + minutes[0])
        if not gaps or overnight < min(gaps):
            if not self._fires_on_consecutive_days():
                # Runs on two different days are at least a day apart.
                overnight += 24 * 60
            gaps.append(overnight)
        return min(gaps) * 60

    def _fires_on_consecutive_days(self):
        day = datetime.date(2000, 1, 1)
        stop = day.replace(year=day.year + _CONSECUTIVE_DAY_SCAN_YEARS)
        previous = False
        while day < stop:
            matches = self.parsed.day_matches(day.year, day.month, day.day)
            if matches and previous:
                return True
            previous = matches
            day += _ONE_DAY
        return False


class IntervalSchedule(Schedule):
    """Every N seconds of absolute time from ``start_at``."""

    type = INTERVAL

    def __init__(self, expression, zone, start_at=None, end_at=None):
        super().__init__(expression, zone, start_at, end_at)
        if self.start_at is None:
            raise exception.InvalidInterval(
                schedule=expression,
                reason='an interval schedule is counted from start_at, the '
                       'time of its first run, which is missing.')
        self.interval = datetime.timedelta(seconds=parse_interval(expression))

    def _next_after(self, after):
        if after < self.start_at:
            return self.start_at
        elapsed = (after - self.start_at) // self.interval
        return self.start_at + (elapsed + 1) * self.interval

    def _times_key(self):
        return self.interval

    def min_gap_seconds(self):
        return int(self.interval.total_seconds())


class OnceSchedule(Schedule):
    """A single run at one point in time."""

    type = ONCE

    def __init__(self, expression, zone, start_at=None, end_at=None):
        super().__init__(expression, zone, start_at, end_at)
        self.run_at = _parse_run_time(expression, zone)

    def _next_after(self, after):
        return self.run_at if self.run_at > after else None

    def _times_key(self):
        return self.run_at

    def min_gap_seconds(self):
        return None


def resolve_hashed_fields(schedule_type, expression, hash_key):
    """The cron expression with its ``H`` terms replaced by their values.

    ``H 2 * * *`` hashed with a policy id becomes e.g. ``37 2 * * *``: the
    same run times, but an expression many policies share, which lets the
    engine parse it once and compute run times once for all of them.  The
    other terms are kept as written.  Returns None for a schedule without
    ``H``.
    """
    if not needs_hash_key(schedule_type, expression):
        return None
    return cron.resolve(expression, hash_key)


def needs_hash_key(schedule_type, expression):
    """True if the schedule's run times depend on the policy id (``H``).

    Schedules for which it is False can be shared by every policy that has
    the same expression, time zone and bounds.
    """
    return (schedule_type == CRON and isinstance(expression, str)
            and cron.is_hashed(expression))


def parse_interval(expression):
    """Seconds of an interval schedule: ``3600``, ``90m``, ``6h``, ``1d``.

    ASCII digits and an optional unit only: no sign, no ``_``, no other
    digits, no space inside (spaces and tabs around it are ignored).
    """
    text = expression.strip(' \t') if isinstance(expression, str) else (
        str(expression) if isinstance(expression, int)
        and not isinstance(expression, bool) else None)
    match = _INTERVAL.fullmatch(text) if text is not None else None
    if match is None:
        raise exception.InvalidInterval(
            schedule=expression,
            reason='it is not a whole number with an optional unit (ASCII '
                   'digits only; no sign, separator or space inside).')
    seconds = int(match.group(1)) * _INTERVAL_UNITS[match.group(2)]
    if seconds <= 0:
        raise exception.InvalidInterval(
            schedule=expression, reason='it must be greater than zero.')
    if seconds > _MAX_INTERVAL_SECONDS:
        raise exception.InvalidInterval(
            schedule=expression, reason='it is longer than 100 years.')
    return seconds


def _parse_run_time(expression, zone):
    try:
        value = datetime.datetime.fromisoformat(str(expression).strip())
    except ValueError as exc:
        raise exception.InvalidRunTime(
            schedule=expression, reason='%s.' % str(exc).rstrip('.'))
    try:
        if value.tzinfo is None:
            return timezones.wall_time_to_utc(value, zone)
        return value.astimezone(UTC)
    except OverflowError:
        raise exception.InvalidRunTime(
            schedule=expression, reason='it is outside the calendar in UTC, '
            'which runs from 0001-01-01 to 9999-12-31.')


def parse_schedule(schedule_type, expression, timezone='UTC', start_at=None,
                   end_at=None, hash_key=None):
    """Parse a schedule; raise an InvalidSchedule subclass if it is malformed.

    :param schedule_type: one of :data:`SCHEDULE_TYPES`.
    :param expression: cron expression, interval seconds or ISO 8601 time.
    :param timezone: IANA time zone name of the policy.
    :param start_at: aware datetime before which nothing runs (the anchor of
        an interval schedule, which requires it).
    :param end_at: aware datetime after which nothing runs.
    :param hash_key: what ``H`` fields are hashed with: the policy id.
    :returns: a :class:`Schedule`.
    """
    zone = timezones.get_timezone(timezone)
    kinds = {CRON: CronSchedule, INTERVAL: IntervalSchedule,
             ONCE: OnceSchedule}
    if schedule_type in kinds:
        extra = {'hash_key': hash_key} if schedule_type == CRON else {}
        try:
            return kinds[schedule_type](expression, zone, start_at, end_at,
                                        **extra)
        except OverflowError:
            raise exception.InvalidSchedule(
                schedule=expression, reason='it reaches outside the '
                'calendar, which ends on 9999-12-31.')
    raise exception.InvalidSchedule(
        schedule=schedule_type,
        reason='the schedule type must be one of %s.' % ', '.join(
            SCHEDULE_TYPES))


def validate_schedule(schedule_type, expression, timezone='UTC', *, now,
                      start_at=None, end_at=None, hash_key=None,
                      min_interval=None):
    """Parse a schedule and check that a user may have it.

    On top of :func:`parse_schedule`, refuse a schedule that never runs
    after ``now`` (an impossible date, a past ``once`` time, an ``end_at``
    before the first run) and one whose runs can come closer together than
    ``min_interval`` seconds.

    :returns: the :class:`Schedule`.
    """
    schedule = parse_schedule(schedule_type, expression, timezone,
                              start_at, end_at, hash_key)
    if (schedule.start_at is not None and schedule.end_at is not None
            and schedule.end_at <= schedule.start_at):
        raise exception.ScheduleNeverFires(
            schedule=expression, reason='end_at (%s) is not after start_at '
            '(%s).' % (schedule.end_at.isoformat(),
                       schedule.start_at.isoformat()))
    if schedule.next_time(now) is None:
        raise exception.ScheduleNeverFires(
            schedule=expression, reason=_never_fires_reason(schedule, now))
    if min_interval:
        gap = schedule.min_gap_seconds()
        if gap is not None and gap < min_interval:
            raise exception.ScheduleTooFrequent(
                schedule=expression, gap=gap, minimum=min_interval)
    return schedule


def _never_fires_reason(schedule, now):
    if schedule.end_at is not None and schedule.end_at <= now:
        return 'end_at (%s) has passed.' % schedule.end_at.isoformat()
    if schedule.type == ONCE:
        if schedule.end_at is not None and schedule.run_at > schedule.end_at:
            return 'its time (%s) is after end_at (%s).' % (
                schedule.run_at.isoformat(), schedule.end_at.isoformat())
        if (schedule.start_at is not None
                and schedule.run_at < schedule.start_at):
            return 'its time (%s) is before start_at (%s).' % (
                schedule.run_at.isoformat(), schedule.start_at.isoformat())
        return 'its time (%s) is not in the future.' % (
            schedule.run_at.isoformat())
    try:
        unbounded = schedule._next_from_start(now)
    except OverflowError:
        return 'its next run would fall after the end of the calendar ' \
               '(9999-12-31).'
    if schedule.end_at is not None and unbounded is not None:
        return 'no run falls before end_at (%s).' % (
            schedule.end_at.isoformat())
    if unbounded is None and schedule.start_at is not None:
        try:
            fires_from_now = schedule._next_after(now) is not None
        except OverflowError:
            fires_from_now = False
        if fires_from_now:
            # It runs, but not after start_at: start_at is too late.
            return 'its next run would fall after the end of the ' \
                   'calendar (9999-12-31).'
    return ('no date matches its day-of-month, month and day-of-week '
            'fields.')


def next_verify_slot(expression, timezone, policy_id, after):
    """The slot of a policy's ``verify_schedule`` after ``after``, or None.

    None too when the expression no longer parses (it was checked when
    it was set; a time zone database change could still break it).
    """
    try:
        return parse_schedule(CRON, expression, timezone,
                              hash_key=policy_id).next_time(after)
    except exception.InvalidSchedule:
        return None


def next_time(schedule, after):
    """The first run of ``schedule`` strictly after ``after``, or None."""
    return schedule.next_time(after)


def next_times(schedule, after, count):
    """Up to ``count`` run times of ``schedule`` after ``after``, in UTC."""
    times = []
    current = after
    while len(times) < count:
        current = schedule.next_time(current)
        if current is None:
            break
        times.append(current)
    return times
