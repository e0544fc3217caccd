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
"""The grammar of a cron expression: fields, terms, ``H``.

Parses one field's text into the values it selects; the meaning is
stated in :mod:`dbaas_scheduler.cron`.
"""

import hashlib
import re
import unicodedata

from dbaas_scheduler import exception

ALIASES = {
    '@yearly': '0 0 1 1 *',
    '@annually': '0 0 1 1 *',
    '@monthly': '0 0 1 * *',
    '@weekly': '0 0 * * 0',
    '@daily': '0 0 * * *',
    '@midnight': '0 0 * * *',
    '@hourly': '0 * * * *',
}

MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK = range(5)

_MONTH_NAMES = ('jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug',
                'sep', 'oct', 'nov', 'dec')
_DAY_NAMES = ('sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat')


class _Field:
    def __init__(self, name, low, high, allowed, names=None, hash_low=None,
                 hash_high=None):
        self.name = name
        self.low = low
        self.high = high
        self.allowed = allowed
        # Name -> value: 'jan' -> 1, 'sun' -> 0.
        self.names = names or {}
        # The range a bare H picks from: every value that exists in every
        # month (day-of-month) and each weekday once (day-of-week).
        self.hash_low = low if hash_low is None else hash_low
        self.hash_high = high if hash_high is None else hash_high


FIELDS = (
    _Field('minute', 0, 59, '0-59'),
    _Field('hour', 0, 23, '0-23'),
    _Field('day-of-month', 1, 31, '1-31, L', hash_high=28),
    _Field('month', 1, 12, '1-12 or JAN-DEC',
           names={n: i + 1 for i, n in enumerate(_MONTH_NAMES)}),
    _Field('day-of-week', 0, 7, '0-7 or SUN-SAT (0 and 7 are Sunday), '
           'D#N, LD', names={n: i for i, n in enumerate(_DAY_NAMES)},
           hash_high=6),
)

# How far ahead a match is looked for.  The Gregorian calendar repeats
# every 400 years (146,097 days, a whole number of weeks), so an
# expression with no match in 401 years has none at all.
HORIZON_YEARS = 401

_VALUE = r'(?:[0-9]+|[A-Za-z]{3})'
_RANGE_TERM = re.compile(
    r'^(?:(?P<star>[*?])|(?P<first>%s)(?:-(?P<last>%s))?)'
    r'(?:/(?P<step>[0-9]+))?$' % (_VALUE, _VALUE))
_HASH_TERM = re.compile(
    r'^[Hh](?:\((?P<first>[0-9]+)-(?P<last>[0-9]+)\))?'
    r'(?:/(?P<step>[0-9]+))?$')
_NTH_TERM = re.compile(r'^(?P<day>%s)#(?P<nth>[0-9]+)$' % _VALUE)
_LAST_DAY_TERM = re.compile(r'^(?:[Ll](?P<a>%s)|(?P<b>%s)[Ll])$'
                            % (_VALUE, _VALUE))
_FIELD_SEPARATOR = re.compile(r'[ \t]+')
_HASHED = re.compile(r'(?<![A-Za-z])[Hh](?![A-Za-z])')


def _invalid(expression, reason):
    return exception.InvalidCronExpression(schedule=expression,
                                           reason=reason)


def hash_value(hash_key, field_index):
    """The 64-bit number ``H`` uses for one field of one policy.

    The first 8 bytes, big-endian, of the SHA-256 of the UTF-8 text
    ``"<hash key>:<field index>"`` (the hash key is the policy id; field
    index 0 is the minute, 4 the day of week).  Each field has its own
    hash, so the fields are independent of one another.  This is part of
    the documented meaning of ``H``: it must never change.
    """
    text = '%s:%d' % (hash_key, field_index)
    digest = hashlib.sha256(text.encode('utf-8')).digest()
    return int.from_bytes(digest[:8], 'big')


def is_hashed(text):
    """True if a cron expression (or one field) has an ``H`` term."""
    return bool(_HASHED.search(text))


def split_fields(expression):
    """The five fields of a cron expression (an alias is expanded).

    Fields are separated by ASCII spaces and tabs; any other character that
    is not printable ASCII is refused, so that a no-break space pasted from
    a document does not pass for a separator.
    """
    if not isinstance(expression, str):
        raise _invalid(expression, 'it must be a string.')
    for char in expression:
        if char not in ' \t' and not ('!' <= char <= '~'):
            raise _invalid(expression, 'it contains %s, which is not '
                           'allowed; fields are separated by ASCII spaces '
                           'or tabs.' % _describe(char))
    text = expression.strip(' \t')
    if text.startswith('@'):
        try:
            text = ALIASES[text.lower()]
        except KeyError:
            raise _invalid(expression, 'unknown alias; use one of %s.'
                           % ', '.join(sorted(ALIASES)))
    fields = _FIELD_SEPARATOR.split(text) if text else []
    if len(fields) != 5:
        raise _invalid(expression, 'a cron expression has 5 fields (minute '
                       'hour day-of-month month day-of-week), got %d.'
                       % len(fields))
    return fields


def _describe(char):
    name = unicodedata.name(char, None)
    return 'U+%04X%s' % (ord(char), ' %s' % name if name else '')


class _Terms:
    """What one field's terms select, collected while parsing it."""

    def __init__(self):
        self.values = set()
        self.last_day = False
        self.nth_weekdays = set()
        self.last_weekdays = set()
        # The resolved text of each term (H replaced by its values).
        self.resolved = []


def _number(text, field, expression):
    value = int(text) if text.isdigit() else field.names.get(text.lower())
    if value is None or not field.low <= value <= field.high:
        raise _invalid(expression, 'the %s field %r is not valid (allowed: '
                       '%s).' % (field.name, text, field.allowed))
    return value


def _check_step(step, first, last, field, term, expression):
    if step == 0:
        raise _invalid(expression, 'the %s field %r has a step of 0.'
                       % (field.name, term))
    if step > 1 and step > last - first:
        # cronie warns "Step size higher than possible maximum" and runs
        # the first value only, which is never what was meant.
        raise _invalid(expression, 'the %s field %r has a step of %d, '
                       'larger than the range %d-%d it steps through, so it '
                       'would select only %d.' % (
                           field.name, term, step, first, last, first))


def _parse_range(term, match, field, index, expression, terms):
    step = int(match.group('step')) if match.group('step') else 1
    if match.group('star'):
        if match.group('star') == '?' and (
                index not in (DAY_OF_MONTH, DAY_OF_WEEK)
                or match.group('step')):
            raise _invalid(expression, 'the %s field %r is not valid: ? '
                           'stands for * in the day fields only.'
                           % (field.name, term))
        first, last = field.low, field.high
    else:
        first = _number(match.group('first'), field, expression)
        if match.group('last') is not None:
            last = _number(match.group('last'), field, expression)
            if index == DAY_OF_WEEK and last == 0 and first > 0:
                last = 7
            if first > last:
                raise _invalid(expression, 'the %s field %r is a range '
                               'that goes downwards; write it upwards, or '
                               'as two ranges (22-23,0-2).' % (
                                   field.name, term))
        elif match.group('step'):
            last = field.high
        else:
            last = first
    _check_step(step, first, last, field, term, expression)
    terms.values.update(range(first, last + 1, step))
    terms.resolved.append(term)


def _parse_hashed(term, match, field, index, expression, terms, hash_key):
    if match.group('first') is not None:
        first = _number(match.group('first'), field, expression)
        last = _number(match.group('last'), field, expression)
        if first > last:
            raise _invalid(expression, 'the %s field %r has a range that '
                           'goes downwards.' % (field.name, term))
    else:
        first, last = field.hash_low, field.hash_high
    if hash_key is None:
        raise ValueError('a cron expression with H fields needs a hash_key '
                         '(the policy id)')
    number = hash_value(hash_key, index)
    if match.group('step'):
        step = int(match.group('step'))
        if match.group('first') is None:
            # H/STEP steps through the whole field, as */STEP does, from
            # a hashed offset below STEP.
            first, last = field.low, (6 if index == DAY_OF_WEEK
                                      else field.high)
        _check_step(step, first, last, field, term, expression)
        values = range(first + number % step, last + 1, step)
    else:
        values = [first + number % (last - first + 1)]
    terms.values.update(values)
    terms.resolved.append(','.join(str(value) for value in values))


def _parse_special(term, field, index, expression, terms):
    if index == DAY_OF_MONTH and term in ('L', 'l'):
        terms.last_day = True
        terms.resolved.append(term)
        return True
    if index != DAY_OF_WEEK:
        return False
    match = _NTH_TERM.match(term)
    if match:
        day = _number(match.group('day'), field, expression) % 7
        nth = int(match.group('nth'))
        if not 1 <= nth <= 5:
            raise _invalid(expression, 'the %s field %r asks for weekday '
                           'number %d of the month; it must be 1 to 5.' % (
                               field.name, term, nth))
        terms.nth_weekdays.add((day, nth))
        terms.resolved.append(term)
        return True
    match = _LAST_DAY_TERM.match(term)
    if match:
        text = match.group('a') or match.group('b')
        terms.last_weekdays.add(
            _number(text, field, expression) % 7)
        terms.resolved.append(term)
        return True
    return False


def parse_field(text, index, expression, hash_key):
    field = FIELDS[index]
    terms = _Terms()
    for term in text.split(','):
        if _parse_special(term, field, index, expression, terms):
            continue
        match = _RANGE_TERM.match(term)
        if match:
            _parse_range(term, match, field, index, expression, terms)
            continue
        match = _HASH_TERM.match(term)
        if match:
            _parse_hashed(term, match, field, index, expression, terms,
                          hash_key)
            continue
        raise _invalid(expression, _unknown_term_reason(field, index, term))
    return terms


def _unknown_term_reason(field, index, term):
    if re.search(r'(?<![A-Za-z])[Rr](?![A-Za-z])', term) or '~' in term:
        return ('the %s field %r asks for a random value, which is not '
                'supported; use H to spread runs over the range in a way '
                'that stays the same for a policy.' % (field.name, term))
    if index == DAY_OF_MONTH and 'W' in term.upper():
        return ('the %s field %r asks for the nearest weekday (W), which '
                'is not supported.' % (field.name, term))
    if not term:
        return 'the %s field has an empty list item.' % field.name
    return 'the %s field %r is not valid (allowed: %s).' % (
        field.name, term, field.allowed)
