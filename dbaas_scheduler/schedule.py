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
    Five fields (minute hour day-of-month month day-of-week), one of the
    aliases in :data:`CRON_ALIASES`, and Jenkins-style ``H`` fields hashed
    with the policy id (croniter's ``hash_id``), so that a thousand
    policies written ``H 2 * * *`` spread over the hour.  Evaluated in the
    policy's local wall time.
``interval``
    A whole number of seconds between runs, anchored at ``start_at``.  It
    is absolute time: a daylight saving change does not shift it.
``once``
    One ISO 8601 date and time; without an offset it is local time in the
    policy's time zone.

Daylight saving rule for local times (cron, and ``once`` without offset):

* a local time that does not exist (spring forward) runs once, at the
  first valid instant after it -- the moment of the change;
* a local time that occurs twice (fall back) runs once, at its first
  occurrence.

croniter alone does not follow this rule with time zones (it returns a
daily 02:30 Europe/Berlin run twice on the fall-back day), so croniter is
only asked for the next matching *wall-clock* time, on naive datetimes, and
this module maps each wall-clock time to an instant.
"""

import datetime
import difflib
import functools
import re
import threading
import zoneinfo

from croniter import croniter

from dbaas_scheduler import exception

UTC = datetime.timezone.utc

CRON = 'cron'
INTERVAL = 'interval'
ONCE = 'once'
SCHEDULE_TYPES = (CRON, INTERVAL, ONCE)

# Classic cron meanings.  croniter turns these into hashed expressions when
# it is given a hash_id, which would move "@daily" away from midnight, so
# they are expanded here before croniter sees them.
CRON_ALIASES = {
    '@yearly': '0 0 1 1 *',
    '@annually': '0 0 1 1 *',
    '@monthly': '0 0 1 * *',
    '@weekly': '0 0 * * 0',
    '@daily': '0 0 * * *',
    '@midnight': '0 0 * * *',
    '@hourly': '0 * * * *',
}

_CRON_FIELDS = (
    ('minute', '0-59'),
    ('hour', '0-23'),
    ('day-of-month', '1-31 or L'),
    ('month', '1-12 or JAN-DEC'),
    ('day-of-week', '0-7 or SUN-SAT, 0 and 7 being Sunday'),
)

# How far one wall-clock step may have to be skipped because it maps to an
# instant already passed (the repeated hour of a fall-back change, at one
# candidate per minute).  Guards the loop; never reached by a valid zone.
_MAX_SKIPPED_CANDIDATES = 10000

# Span scanned when deciding whether a cron expression can fire on two
# consecutive days: 28 years repeat every weekday/leap-year combination.
_CONSECUTIVE_DAY_SCAN_YEARS = 28

# croniter's Jenkins-style tokens: H (hashed) and R (random), alone or
# followed by a range or a step; never part of a name such as THU or MAR.
_HASHED_FIELD = re.compile(r'(?<![A-Za-z])[Hh](?![A-Za-z])')
_RANDOM_FIELD = re.compile(r'(?<![A-Za-z])[Rr](?![A-Za-z])')

_ONE_SECOND = datetime.timedelta(seconds=1)
_ONE_MICROSECOND = datetime.timedelta(microseconds=1)


def _require_aware(value, name):
    if value is None:
        return None
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError('%s must be timezone-aware, got %r' % (name, value))
    return value.astimezone(UTC)


@functools.lru_cache(maxsize=1)
def _available_timezones():
    # Depending on the host, the tz directory also holds files that are not
    # IANA zone names (the host's own "localtime", "posixrules", the
    # "posix/" and "right/" copies); they would make a policy's meaning
    # depend on the host that computes it.
    return frozenset(
        name for name in zoneinfo.available_timezones()
        if name not in ('localtime', 'posixrules')
        and not name.startswith(('posix/', 'right/')))


def get_timezone(name):
    """Return the ``ZoneInfo`` for an IANA name, or raise UnknownTimeZone."""
    # Only names of the tz database: ZoneInfo() would also open files such
    # as "localtime" or "posixrules", which differ from host to host.
    if isinstance(name, str) and name in _available_timezones():
        return zoneinfo.ZoneInfo(name)
    close = []
    if isinstance(name, str) and name.strip():
        close = difflib.get_close_matches(
            name, sorted(_available_timezones()), n=3)
    suggestion = (' Did you mean %s?' % ', '.join('"%s"' % c for c in close)
                  if close else '')
    raise exception.UnknownTimeZone(
        schedule=name, timezone=name, suggestion=suggestion)


def wall_time_to_utc(wall, zone):
    """Map a naive local wall-clock time in ``zone`` to an aware UTC instant.

    Applies the daylight saving rule of this module: a repeated wall time
    maps to its first occurrence, a skipped one to the moment of the change
    (the first valid instant after it).
    """
    first = wall.replace(tzinfo=zone, fold=0)
    second = wall.replace(tzinfo=zone, fold=1)
    if first.utcoffset() == second.utcoffset():
        return first.astimezone(UTC)
    earliest = first.astimezone(UTC)
    if earliest.astimezone(zone).replace(tzinfo=None) == wall:
        # Repeated (fall back): fold=0 is the first occurrence.
        return earliest
    # Skipped (spring forward).  fold=1 applies the offset after the change
    # and fold=0 the one before; the change lies between the two instants.
    # Find the first whole second whose local time is at or past ``wall``;
    # zone data changes offsets on whole seconds.
    low, high = sorted((first.astimezone(UTC), second.astimezone(UTC)))
    low = low.replace(microsecond=0)
    steps = int((high - low) / _ONE_SECOND) + 1
    lo, hi = 0, steps
    while lo < hi:
        mid = (lo + hi) // 2
        candidate = low + mid * _ONE_SECOND
        if candidate.astimezone(zone).replace(tzinfo=None) >= wall:
            hi = mid
        else:
            lo = mid + 1
    return low + lo * _ONE_SECOND


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

    @property
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
        exactly at ``start_at`` does.
        """
        candidate = self._next_from_start(after)
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
        self.cron = _normalize_cron(expression)
        self.hash_key = hash_key if _is_hashed(self.cron) else None
        self._hash_id = (None if self.hash_key is None
                         else str(self.hash_key).encode('utf-8'))
        if _is_hashed(self.cron) and self._hash_id is None:
            raise ValueError('a cron expression with H fields needs a '
                             'hash_key (the policy id)')
        # One croniter, parsed once, for every computation: it works on
        # naive wall-clock times only.  It keeps its position between calls,
        # hence the lock.
        self._iterator = _make_croniter(self.cron, self._hash_id, expression)
        self._lock = threading.Lock()
        self.fields = self._iterator.expanded

    def _next_after(self, after):
        wall = after.astimezone(self.zone).replace(tzinfo=None)
        with self._lock:
            self._iterator.set_current(wall, force=True)
            for _ in range(_MAX_SKIPPED_CANDIDATES):
                try:
                    candidate = self._iterator.get_next(datetime.datetime)
                except ValueError:
                    # CroniterBadDateError: nothing matches within croniter's
                    # search horizon (50 years), e.g. "0 0 30 2 *".
                    return None
                instant = wall_time_to_utc(candidate, self.zone)
                if instant > after:
                    return instant
        raise RuntimeError('no run of %r found after %s' % (self.cron, after))

    def _times_key(self):
        return tuple(tuple(field) for field in self.fields)

    def min_gap_seconds(self):
        minutes = _field_values(self.fields[0], range(60))
        hours = _field_values(self.fields[1], range(24))
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
        days = ' '.join(['0', '0'] + self.cron.split()[2:])
        start = datetime.datetime(2000, 1, 1)
        stop = start.replace(year=start.year + _CONSECUTIVE_DAY_SCAN_YEARS)
        iterator = croniter(days, start - _ONE_SECOND, hash_id=self._hash_id)
        previous = None
        while True:
            day = iterator.get_next(datetime.datetime)
            if day >= stop:
                return False
            if previous is not None and day - previous == datetime.timedelta(
                    days=1):
                return True
            previous = day


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
        self.interval = datetime.timedelta(seconds=_parse_interval(expression))

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


def _normalize_cron(expression):
    if not isinstance(expression, str):
        raise exception.InvalidCronExpression(
            schedule=expression, reason='it must be a string.')
    text = ' '.join(expression.split())
    if text.startswith('@'):
        try:
            return CRON_ALIASES[text.lower()]
        except KeyError:
            raise exception.InvalidCronExpression(
                schedule=expression,
                reason='unknown alias; use one of %s.' % ', '.join(
                    sorted(CRON_ALIASES)))
    fields = text.split(' ') if text else []
    if len(fields) != 5:
        raise exception.InvalidCronExpression(
            schedule=expression,
            reason='a cron expression has 5 fields (minute hour '
                   'day-of-month month day-of-week), got %d.' % len(fields))
    for (name, _allowed), field in zip(_CRON_FIELDS, fields):
        if _RANDOM_FIELD.search(field):
            raise exception.InvalidCronExpression(
                schedule=expression,
                reason='the %s field %r asks for a random value (R), which '
                       'is not supported; use H to spread runs over the '
                       'range in a way that stays the same for a policy.'
                       % (name, field))
    return text


def _is_hashed(cron):
    return bool(_HASHED_FIELD.search(cron))


def resolve_hashed_fields(schedule_type, expression, hash_key):
    """The cron expression with its ``H`` fields replaced by their values.

    ``H 2 * * *`` hashed with a policy id becomes e.g. ``37 2 * * *``: the
    same run times, but an expression many policies share, which is
    cheaper to parse and lets the engine compute run times once for all of
    them.  Each hashed field is expanded by croniter with the same hash id
    and position as in the whole expression; the other fields are kept as
    written.  Returns None for a schedule without ``H``.
    """
    if not needs_hash_key(schedule_type, expression):
        return None
    fields = _normalize_cron(expression).split(' ')
    hash_id = str(hash_key).encode('utf-8')
    resolved = []
    for index, field in enumerate(fields):
        if not _is_hashed(field):
            resolved.append(field)
            continue
        probe = ['*'] * 5
        probe[index] = field
        values = croniter.expand(' '.join(probe), hash_id=hash_id)[0][index]
        resolved.append(','.join(str(value) for value in values))
    return ' '.join(resolved)


def needs_hash_key(schedule_type, expression):
    """True if the schedule's run times depend on the policy id (``H``).

    Schedules for which it is False can be shared by every policy that has
    the same expression, time zone and bounds.
    """
    return (schedule_type == CRON and isinstance(expression, str)
            and _is_hashed(expression))


def _make_croniter(cron, hash_id, original):
    try:
        return croniter(cron, datetime.datetime(2000, 1, 1), hash_id=hash_id)
    except ValueError as exc:
        raise exception.InvalidCronExpression(
            schedule=original, reason=_diagnose_cron(cron, exc))


def _diagnose_cron(cron, error):
    """Name the first field croniter rejects, with its allowed range."""
    fields = cron.split(' ')
    for index, field in enumerate(fields):
        name, allowed = _CRON_FIELDS[index]
        probe = ['*'] * 5
        probe[index] = field
        try:
            croniter.expand(' '.join(probe), hash_id=b'validation')
        except ValueError:
            return 'the %s field %r is not valid (allowed: %s).' % (
                name, field, allowed)
    return '%s.' % str(error).rstrip('.')


def _field_values(values, full_range):
    if values == ['*']:
        return list(full_range)
    return sorted(set(int(v) for v in values))


def _parse_interval(expression):
    text = str(expression).strip()
    try:
        seconds = int(text)
    except ValueError:
        raise exception.InvalidInterval(
            schedule=expression, reason='it is not a whole number.')
    if seconds <= 0:
        raise exception.InvalidInterval(
            schedule=expression, reason='it must be greater than zero.')
    return seconds


def _parse_run_time(expression, zone):
    try:
        value = datetime.datetime.fromisoformat(str(expression).strip())
    except ValueError as exc:
        raise exception.InvalidRunTime(
            schedule=expression, reason='%s.' % str(exc).rstrip('.'))
    if value.tzinfo is None:
        return wall_time_to_utc(value, zone)
    return value.astimezone(UTC)


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
    zone = get_timezone(timezone)
    if schedule_type == CRON:
        return CronSchedule(expression, zone, start_at, end_at, hash_key)
    if schedule_type == INTERVAL:
        return IntervalSchedule(expression, zone, start_at, end_at)
    if schedule_type == ONCE:
        return OnceSchedule(expression, zone, start_at, end_at)
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
    if (schedule.end_at is not None
            and schedule._next_from_start(now) is not None):
        return 'no run falls before end_at (%s).' % (
            schedule.end_at.isoformat())
    return ('no date matches its day-of-month, month and day-of-week '
            'fields.')


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
