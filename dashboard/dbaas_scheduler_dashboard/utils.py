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
"""Words and times for people: schedules, retention, lateness.

Every sentence is one translatable string with named placeholders, so
that translators can reorder it; nothing is built by concatenating
translated pieces.
"""

import datetime
import zoneinfo

from django.utils import formats
from django.utils import timezone as dj_timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

_MACROS = {
    '@yearly': '0 0 1 1 *', '@annually': '0 0 1 1 *',
    '@monthly': '0 0 1 * *', '@weekly': '0 0 * * 0',
    '@daily': '0 0 * * *', '@midnight': '0 0 * * *',
    '@hourly': '0 * * * *',
}


def _weekday(value):
    names = [_('Sunday'), _('Monday'), _('Tuesday'), _('Wednesday'),
             _('Thursday'), _('Friday'), _('Saturday'), _('Sunday')]
    try:
        return names[int(value)]
    except (ValueError, IndexError):
        return None


def _at(minute, hour):
    """"03:30", "a minute of each hour chosen by H", ... or None."""
    if minute.isdigit() and hour.isdigit():
        return _('%(hour)02d:%(minute)02d') % {'hour': int(hour),
                                               'minute': int(minute)}
    if minute.startswith('H') and hour.isdigit():
        return _('a minute of %(hour)02d:00-%(hour)02d:59 that H picks '
                 'for the policy') % {'hour': int(hour)}
    if minute.startswith('H') and hour.startswith('H'):
        return _('a time of day that H picks for the policy')
    return None


def describe_cron(expression):
    """A cron expression in words, or None when it has no simple reading."""
    fields = _MACROS.get(expression.strip().lower(), expression).split()
    if len(fields) != 5:
        return None
    minute, hour, day, month, weekday = fields
    if (minute.startswith('*/') and minute[2:].isdigit() and hour == '*'
            and day == month == weekday == '*'):
        count = int(minute[2:])
        return ngettext('Every minute', 'Every %(count)d minutes',
                        count) % {'count': count}
    if (minute.isdigit() and hour == '*' and day == month == weekday
            == '*'):
        return _('Every hour at minute %(minute)d') % {
            'minute': int(minute)}
    if (minute.startswith('H') and hour == '*' and day == month == weekday
            == '*'):
        return _('Every hour, at a minute H picks for the policy')
    at = _at(minute, hour)
    if at is None:
        return None
    if day == month == weekday == '*':
        return _('Every day at %(time)s') % {'time': at}
    if day == month == '*' and _weekday(weekday):
        return _('Every %(weekday)s at %(time)s') % {
            'weekday': _weekday(weekday), 'time': at}
    if day == month == '*' and weekday in ('1-5', 'MON-FRI', 'mon-fri'):
        return _('Every weekday (Monday to Friday) at %(time)s') % {
            'time': at}
    if day.isdigit() and month == weekday == '*':
        return _('On day %(day)d of every month at %(time)s') % {
            'day': int(day), 'time': at}
    return None


def _duration_words(seconds):
    for size, one, many in (
            (86400, 'Every day', 'Every %(count)d days'),
            (3600, 'Every hour', 'Every %(count)d hours'),
            (60, 'Every minute', 'Every %(count)d minutes')):
        if seconds % size == 0:
            count = seconds // size
            return ngettext(one, many, count) % {'count': count}
    return ngettext('Every second', 'Every %(count)d seconds',
                    seconds) % {'count': seconds}


def describe_schedule(policy):
    """The schedule of a policy (an object or a dict) in words."""
    get = (policy.get if isinstance(policy, dict)
           else lambda name: getattr(policy, name, None))
    kind = get('schedule_type') or 'cron'
    schedule = get('schedule') or ''
    if kind == 'interval':
        try:
            return _duration_words(int(schedule))
        except ValueError:
            pass
    elif kind == 'once':
        return _('Once, at %(time)s') % {'time': schedule}
    else:
        words = describe_cron(schedule)
        if words:
            return words
    return _('Cron: %(expression)s') % {'expression': schedule}


def describe_retention(policy):
    """"Keeps the last 3, 7 daily, 4 weekly backups", or a sentence."""
    get = (policy.get if isinstance(policy, dict)
           else lambda name: getattr(policy, name, None))
    parts = []
    for name, one, many in (
            ('keep_last', 'the last backup', 'the last %(count)d'),
            ('keep_daily', '%(count)d daily', '%(count)d daily'),
            ('keep_weekly', '%(count)d weekly', '%(count)d weekly'),
            ('keep_monthly', '%(count)d monthly', '%(count)d monthly')):
        count = get(name)
        if count:
            parts.append(ngettext(one, many, count) % {'count': count})
    max_age = get('max_age_days')
    if not parts and not max_age:
        return _('Keeps every backup: none is deleted by this policy.')
    if parts and max_age:
        return _('Keeps %(kept)s backups, and deletes those older than '
                 '%(days)d days.') % {'kept': _(', ').join(parts),
                                      'days': max_age}
    if parts:
        return _('Keeps %(kept)s backups; older ones are deleted.') % {
            'kept': _(', ').join(parts)}
    return ngettext('Deletes backups older than %(days)d day.',
                    'Deletes backups older than %(days)d days.',
                    max_age) % {'days': max_age}


def parse_time(value):
    """An aware datetime from the API's ISO 8601 text, or None."""
    if not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value.replace('Z', '+00:00'))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=datetime.timezone.utc)
    return parsed


def in_zone(value, zone_name):
    """The API time in another time zone, as text (the zone's own)."""
    when = parse_time(value)
    if when is None:
        return ''
    try:
        zone = zoneinfo.ZoneInfo(zone_name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = datetime.timezone.utc
    return when.astimezone(zone).strftime('%Y-%m-%d %H:%M %Z')


def user_time(value):
    """The API time in the time zone of the Horizon user's settings."""
    when = parse_time(value)
    if when is None:
        return ''
    return formats.date_format(dj_timezone.localtime(when),
                               'SHORT_DATETIME_FORMAT')


def seconds_between(start, end):
    start, end = parse_time(start), parse_time(end)
    if start is None or end is None:
        return None
    return max((end - start).total_seconds(), 0.0)


def duration_words(seconds):
    if seconds is None:
        return ''
    if seconds < 60:
        return _('%(seconds).1f s') % {'seconds': seconds}
    if seconds < 3600:
        return _('%(minutes)d min %(seconds)d s') % {
            'minutes': seconds // 60, 'seconds': seconds % 60}
    return _('%(hours)d h %(minutes)d min') % {
        'hours': seconds // 3600, 'minutes': seconds % 3600 // 60}
