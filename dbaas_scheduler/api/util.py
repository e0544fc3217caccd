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
"""Helpers of the API handlers: JSON in and out, query strings, times.

Everything a request brings is checked here before a handler looks at it:
a body that is too large, nested too deeply or holds text no database can
store, a query string that is not UTF-8, a value longer than its column.
Each gets a 4xx with a message; an error message quotes at most an
excerpt of what was sent.
"""

import datetime
import functools
import json
import re
import urllib.parse

import jsonschema
import webob

from dbaas_scheduler.api.schemas import common
from dbaas_scheduler.db import limits
from dbaas_scheduler import exception
from dbaas_scheduler import timezones

UTC = datetime.timezone.utc
CONTEXT_KEY = 'dbaas_scheduler.context'
CONF_KEY = 'dbaas_scheduler.conf'

# The largest request body read, in bytes: several times the largest
# valid one (a policy with every field full), small enough not to tie up
# a server thread.
MAX_BODY_BYTES = 1024 * 1024
# JSON nested deeper is refused.  A valid body has 3 levels and what
# backup_params holds; Python's parser gives up near 1,000.
MAX_JSON_DEPTH = 32
# How much of a value an error message quotes.
EXCERPT_LENGTH = 64

# Text no database stores: NUL (PostgreSQL refuses it) and UTF-16
# surrogates without their pair (not encodable as UTF-8).
_UNSTORABLE = re.compile('[\x00\ud800-\udfff]')
_DIGITS = re.compile('[0-9]+')
# Digits of a whole number in a query string are counted before it is
# parsed: Python refuses to parse more than 4,300 (ValueError), and a
# long one costs quadratic time.  A larger page size is lowered to
# [api] max_limit anyway.
MAX_QUERY_DIGITS = 100


def shorten(text):
    """``text``, cut short if long, for an error message."""
    if len(text) <= EXCERPT_LENGTH:
        return text
    return '%s... (%d characters)' % (text[:EXCERPT_LENGTH], len(text))


def excerpt(value):
    """``repr(value)``, cut short if long, for an error message."""
    text = repr(value)
    if len(text) <= EXCERPT_LENGTH:
        return text
    size = len(value) if isinstance(value, (str, bytes)) else len(text)
    return '%s... (%d characters)' % (text[:EXCERPT_LENGTH], size)


def check_text(value, what):
    """Refuse text that no database stores, saying where it is."""
    found = _UNSTORABLE.search(value)
    if found:
        raise exception.Invalid(
            reason='%s holds %s, which cannot be stored; remove it.' % (
                what, 'a NUL character (U+0000)' if found.group() == '\x00'
                else 'an unpaired UTF-16 surrogate (U+%04X)'
                % ord(found.group())))


def context_of(req):
    return req.environ[CONTEXT_KEY]


def conf_of(req):
    return req.environ[CONF_KEY]


def base_url(req):
    """The URL links in answers start with: ``[api] public_endpoint``.

    Without it, the request's own URL (application_url: its Host header
    and the path prefix the server mounted the API on).
    """
    conf = req.environ.get(CONF_KEY)
    endpoint = conf.api.public_endpoint if conf is not None else None
    return endpoint.rstrip('/') if endpoint else req.application_url


def path_arg(req, name):
    """A path segment the route names, as text (paths are UTF-8)."""
    value = req.environ['wsgiorg.routing_args'][1][name]
    # PEP 3333 hands the path over as bytes in latin-1; the route checked
    # that they are UTF-8.
    return value.encode('latin-1').decode('utf-8')


def json_response(body, status=200, headers=None):
    response = webob.Response(status=status, content_type='application/json',
                              charset='utf-8')
    if body is not None:
        response.text = json.dumps(body)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def isotime(value):
    """An aware datetime as RFC 3339 UTC (``2026-11-22T02:30:00Z``)."""
    if value is None:
        return None
    return value.astimezone(UTC).replace(tzinfo=None).isoformat() + 'Z'


def isotime_text(value):
    """A stored ISO 8601 time (a string) as :func:`isotime` writes it.

    Times kept inside JSON columns were written by ``isoformat()``
    (``+00:00``); the API shows every time alike.  One without an offset
    is UTC; text that is no time is shown as it is.
    """
    if not isinstance(value, str):
        return value
    try:
        return isotime(timezones.parse_time(value, 'created_at'))
    except exception.Invalid:
        return value


def _refuse_constant(name):
    raise ValueError('%s is not a JSON number' % name)


def _read_body(req):
    if req.content_length and req.content_length > MAX_BODY_BYTES:
        raise exception.RequestTooLarge(size=req.content_length,
                                        limit=MAX_BODY_BYTES)
    if not req.is_body_readable:
        return b''
    data = req.body_file.read(MAX_BODY_BYTES + 1)
    if len(data) > MAX_BODY_BYTES:
        raise exception.RequestTooLarge(size='more than %d' % MAX_BODY_BYTES,
                                        limit=MAX_BODY_BYTES)
    return data


def _check_json(body):
    """Refuse JSON nested too deeply or holding unstorable text.

    Walks the document without recursion: its depth is what is checked.
    """
    pending = [(body, ())]
    while pending:
        value, path = pending.pop()
        where = 'in %s: ' % '.'.join(str(p) for p in path) if path else ''
        if isinstance(value, str):
            check_text(value, '%sa string' % where)
            continue
        if not isinstance(value, (dict, list)):
            continue
        if len(path) >= MAX_JSON_DEPTH:
            raise exception.Invalid(
                reason='the body is nested deeper than %d levels.'
                       % MAX_JSON_DEPTH)
        if isinstance(value, dict):
            for key, item in value.items():
                check_text(key, '%sa key' % where)
                pending.append((item, path + (key[:EXCERPT_LENGTH],)))
        else:
            pending.extend((item, path + (index,))
                           for index, item in enumerate(value))


def _max_json_length(validator, limit, instance, schema):
    if isinstance(instance, (dict, list)):
        length = limits.json_length(instance)
        if length > limit:
            yield jsonschema.ValidationError(
                'is %d characters long as JSON; at most %d are stored'
                % (length, limit))


@functools.lru_cache(maxsize=64)
def _compile_pattern(pattern):
    # JSON Schema's patterns are ECMA 262, where "$" is the end of the
    # text; in Python it also matches before a final line feed, which
    # would let "name\n" through a one-line pattern.
    if pattern.endswith('$') and not pattern.endswith('\\$'):
        pattern = pattern[:-1] + '\\Z'
    return re.compile(pattern)


def _pattern(validator, pattern, instance, schema):
    if isinstance(instance, str) and not _compile_pattern(pattern).search(
            instance):
        yield jsonschema.ValidationError(common.PATTERN_MESSAGES.get(
            pattern, 'does not have the expected form'))


Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    {common.MAX_JSON_LENGTH: _max_json_length, 'pattern': _pattern})


def _schema_error_message(error):
    """jsonschema's message, quoting at most an excerpt of the value."""
    if error.validator == 'maxLength':
        return '%s is longer than %d characters' % (
            excerpt(error.instance), error.validator_value)
    message = error.message
    quoted = repr(error.instance)
    if len(quoted) > EXCERPT_LENGTH:
        message = message.replace(quoted, excerpt(error.instance))
    return message


def extract_json(req, schema):
    """The request's JSON body, validated against ``schema``."""
    data = _read_body(req)
    if data and 'json' not in (req.content_type or ''):
        raise exception.Invalid(
            reason='the body must be JSON (Content-Type: application/json), '
                   'not %s.' % (excerpt(req.content_type)
                                if req.content_type else 'untyped'))
    try:
        body = json.loads(data or b'null', parse_constant=_refuse_constant)
    except RecursionError:
        raise exception.Invalid(
            reason='the body is nested deeper than %d levels.'
                   % MAX_JSON_DEPTH)
    except ValueError as exc:
        raise exception.Invalid(reason='the body is not valid JSON: %s.'
                                       % str(exc)[:200])
    _check_json(body)
    errors = sorted(Validator(schema).iter_errors(body),
                    key=lambda e: list(e.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        where = '.'.join(str(part) for part in error.absolute_path)
        raise exception.Invalid(reason='%s%s.' % (
            'in %s: ' % where if where else '',
            _schema_error_message(error)))
    return body


def _parse_bool(value, name):
    lowered = value.strip().lower()
    if lowered in ('true', '1', 'yes', 'on'):
        return True
    if lowered in ('false', '0', 'no', 'off'):
        return False
    raise exception.Invalid(reason='%s must be true or false, not %s.'
                                   % (name, excerpt(value)))


def _parse_int(value, name, schema):
    minimum = schema.get('minimum', 0)
    if len(value) > MAX_QUERY_DIGITS:
        raise exception.Invalid(
            reason='%s is %d characters long; a whole number here has at '
                   'most %d digits.' % (name, len(value), MAX_QUERY_DIGITS))
    if not _DIGITS.fullmatch(value) or int(value) < minimum:
        raise exception.Invalid(
            reason='%s must be a whole number of %d or more (digits 0-9 '
                   'only), not %s.' % (name, minimum, excerpt(value)))
    return int(value)


def _parse_string(value, name, schema):
    if 'enum' in schema and value not in schema['enum']:
        raise exception.Invalid(
            reason='%s must be one of %s, not %s.' % (
                name, ', '.join(schema['enum']), excerpt(value)))
    if len(value) < schema.get('minLength', 0):
        raise exception.Invalid(reason='%s must not be empty.' % name)
    if len(value) > schema.get('maxLength', len(value)):
        raise exception.Invalid(
            reason='%s %s is longer than %d characters: nothing has such '
                   'a value.' % (name, excerpt(value), schema['maxLength']))
    if schema.get('format') == 'date-time':
        return timezones.parse_time(value, name)
    return value


def parse_parameter(name, value, schema):
    """One query parameter's text, parsed as its JSON ``schema`` says."""
    check_text(value, 'query parameter %s' % name)
    if schema.get('type') == 'boolean':
        return _parse_bool(value, name)
    if schema.get('type') == 'integer':
        return _parse_int(value, name, schema)
    return _parse_string(value, name, schema)


def query_params(req, allowed):
    """Parse the query string: ``allowed`` maps each name to its schema.

    An unknown parameter, or one given twice, is an error rather than
    silently ignored: a typo in a filter must not list everything.
    """
    try:
        given = list(req.GET.items())
    except UnicodeDecodeError:
        raise exception.Invalid(
            reason='the query string is not UTF-8: percent-encode the '
                   'UTF-8 bytes of each character.')
    params = {}
    for name, value in given:
        if name not in allowed:
            raise exception.Invalid(
                reason='unknown query parameter %s; this resource takes %s.'
                       % (excerpt(name), ', '.join(sorted(allowed))
                          or 'none'))
        if name in params:
            raise exception.Invalid(reason='query parameter %r is given '
                                           'more than once.' % name)
        params[name] = parse_parameter(name, value, allowed[name])
    return params


def page_limit(conf, params):
    limit = params.get('limit')
    if limit is None or limit > conf.api.max_limit:
        return conf.api.max_limit
    return max(limit, 1)


def next_link(req, items, limit):
    """A ``links`` list with the next page, when this page was full."""
    if len(items) < limit:
        return []
    query = dict(req.GET)
    query.update(marker=items[-1]['id'], limit=str(limit))
    return [{'rel': 'next', 'href': '%s%s?%s' % (
        base_url(req), urllib.parse.quote(req.path_info),
        urllib.parse.urlencode(sorted(query.items())))}]
