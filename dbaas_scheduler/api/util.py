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
import json
import re
import urllib.parse

import webob

from dbaas_scheduler.api.schemas import validation
from dbaas_scheduler import exception
from dbaas_scheduler import policy
from dbaas_scheduler import timezones

UTC = datetime.timezone.utc
CONTEXT_KEY = 'dbaas_scheduler.context'
CONF_KEY = 'dbaas_scheduler.conf'
WORKER_API_KEY = 'dbaas_scheduler.worker_api'

# The largest request body read, in bytes: several times the largest
# valid one (a policy with every field full), small enough not to tie up
# a server thread.
MAX_BODY_BYTES = 1024 * 1024
_DIGITS = re.compile('[0-9]+')
# Digits of a whole number in a query string are counted before it is
# parsed: Python refuses to parse more than 4,300 (ValueError), and a
# long one costs quadratic time.  A larger page size is lowered to
# [api] max_limit anyway.
MAX_QUERY_DIGITS = 100

# Shared with the RPC door (see api/schemas/validation.py).
excerpt = validation.excerpt
check_text = validation.check_text
Validator = validation.Validator
MAX_JSON_DEPTH = validation.MAX_JSON_DEPTH
EXCERPT_LENGTH = validation.EXCERPT_LENGTH


def shorten(text):
    """``text``, cut short if long, for an error message."""
    if len(text) <= EXCERPT_LENGTH:
        return text
    return '%s... (%d characters)' % (text[:EXCERPT_LENGTH], len(text))


def context_of(req):
    return req.environ[CONTEXT_KEY]


def conf_of(req):
    return req.environ[CONF_KEY]


def worker_api_of(req):
    """The RPC client of the application, that casts manual runs."""
    worker_api = req.environ.get(WORKER_API_KEY)
    if worker_api is None:
        raise RuntimeError('this application has no RPC client to cast '
                           'manual runs with: build it with '
                           'api.service.make_application, or give '
                           'api.deploy.deploy a worker_api')
    return worker_api


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
    validation.validate(body, schema)
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


def list_page(req, query_schema, rules, key, list_items, serialize,
              filters=()):
    """The answer to a list request: one page of ``key``, and its links.

    Every list resource goes the same way: the query string parsed
    against ``query_schema``; ``rules.LIST`` (and, with ``all_projects``,
    ``rules.LIST_ALL_PROJECTS``) authorized; ``list_items(context,
    project_id=, limit=, marker=, <each of filters>=)`` called with the
    query's values; each item serialized with ``serialize(req, item)``;
    a ``next`` link when the page is full.
    """
    context, conf = context_of(req), conf_of(req)
    params = query_params(req, query_schema)
    project_id = policy.authorize_list(context, rules.LIST,
                                       rules.LIST_ALL_PROJECTS,
                                       params.get('all_projects'))
    limit = page_limit(conf, params)
    found = list_items(context, project_id=project_id, limit=limit,
                       marker=params.get('marker'),
                       **{name: params.get(name) for name in filters})
    items = [serialize(req, item) for item in found]
    return json_response({key: items, 'links': next_link(req, items, limit)})
