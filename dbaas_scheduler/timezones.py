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
"""Times and time zones: a zone by IANA name, wall-clock time to UTC, and
the instants callers give (ISO 8601, UTC unless they say otherwise).

Only names of the tz database are zones here: the tz directory of a host
also holds files that are not (its own ``localtime``, ``posixrules``, the
``posix/`` and ``right/`` copies), which would make a policy's meaning
depend on the host that computes it.  An unknown name is refused with the
closest known names.
"""

import datetime
import difflib
import functools
import zoneinfo

from dbaas_scheduler import exception

UTC = datetime.timezone.utc

_ONE_SECOND = datetime.timedelta(seconds=1)


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

    Applies the daylight saving rule of ``schedule.py``: a repeated wall time
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


def parse_time(value, name):
    """An ISO 8601 time given by a caller; without an offset it is UTC."""
    if isinstance(value, datetime.datetime):
        parsed = value
    else:
        try:
            parsed = datetime.datetime.fromisoformat(value.strip())
        except (AttributeError, ValueError):
            raise exception.Invalid(
                reason='%s must be an ISO 8601 date and time such as '
                       '2027-01-31T02:30:00Z, not %r.' % (name, value))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    try:
        return parsed.astimezone(datetime.timezone.utc)
    except OverflowError:
        raise exception.Invalid(
            reason='%s (%s) is outside the calendar in UTC, which runs from '
                   '0001-01-01 to 9999-12-31.' % (name, value))
