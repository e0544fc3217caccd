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
"""The native engine: next matching minute, walked day by day.

Works on the value sets :mod:`dbaas_scheduler.cron` parsed; it knows
nothing of the text.  The default engine, as it is about ten times faster
than :mod:`dbaas_scheduler.cron.croniter_engine` (doc/source/contributor/
schedules.rst gives the figures).
"""

import bisect
import calendar
import datetime

from dbaas_scheduler.cron import grammar

NAME = 'native'


def _first_time(expression, hour, minute):
    # The first (hour, minute) of a matching day at or after the given
    # one, or None.
    hours, minutes = expression.hours, expression.minutes
    index = bisect.bisect_left(hours, hour)
    if index < len(hours) and hours[index] == hour:
        position = bisect.bisect_left(minutes, minute)
        if position < len(minutes):
            return hour, minutes[position]
        index += 1
    if index < len(hours):
        return hours[index], minutes[0]
    return None


def next_after(expression, start):
    """The first matching minute at or after ``start`` (a whole minute).

    Returns a naive datetime, or None if nothing matches within
    :data:`grammar.HORIZON_YEARS` (then nothing ever does).
    """
    year, month, day = start.year, start.month, start.day
    hour, minute = start.hour, start.minute
    stop = min(year + grammar.HORIZON_YEARS, datetime.MAXYEAR + 1)
    months = expression.months
    day_matches = expression.day_matches_weekday
    while year < stop:
        if month in months:
            first_weekday, length = calendar.monthrange(year, month)
            while day <= length:
                if day_matches(day, (first_weekday + day) % 7, length):
                    found = _first_time(expression, hour, minute)
                    if found is not None:
                        return datetime.datetime(year, month, day, *found)
                day += 1
                hour = minute = 0
        day, hour, minute = 1, 0, 0
        month += 1
        if month > 12:
            month, year = 1, year + 1
    return None
