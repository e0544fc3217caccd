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
"""Helpers of the API handlers: JSON in and out, query strings, times."""

import datetime
import json
import urllib.parse

import jsonschema
from oslo_utils import timeutils
import webob

from dbaas_scheduler import exception
from dbaas_scheduler import policies

UTC = datetime.timezone.utc
CONTEXT_KEY = 'dbaas_scheduler.context'
CONF_KEY = 'dbaas_scheduler.conf'


def context_of(req):
    return req.environ[CONTEXT_KEY]


def conf_of(req):
    return req.environ[CONF_KEY]


def path_arg(req, name):
    return req.environ['wsgiorg.routing_args'][1][name]


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
        return isotime(policies.parse_time(value, 'created_at'))
    except exception.Invalid:
        return value


def extract_json(req, schema):
    """The request's JSON body, validated against ``schema``."""
    if req.content_length and 'json' not in (req.content_type or ''):
        raise exception.Invalid(
            reason='the body must be JSON (Content-Type: application/json), '
                   'not %s.' % (req.content_type or 'untyped'))
    try:
        body = json.loads(req.body or b'null')
    except ValueError as exc:
        raise exception.Invalid(reason='the body is not valid JSON: %s.'
                                       % exc)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(body),
                    key=lambda e: list(e.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        where = '.'.join(str(part) for part in error.absolute_path)
        raise exception.Invalid(reason='%s%s.' % (
            'in %s: ' % where if where else '', error.message))
    return body


def _parse_bool(value, name):
    lowered = value.strip().lower()
    if lowered in ('true', '1', 'yes', 'on'):
        return True
    if lowered in ('false', '0', 'no', 'off'):
        return False
    raise exception.Invalid(reason='%s must be true or false, not %r.'
                                   % (name, value))


def _parse_int(value, name):
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise exception.Invalid(reason='%s must be a whole number of 0 or '
                                       'more, not %r.' % (name, value))
    return number


PARSERS = {
    'bool': _parse_bool,
    'int': _parse_int,
    'str': lambda value, name: value,
    'time': policies.parse_time,
}


def query_params(req, allowed):
    """Parse the query string: ``allowed`` maps each name to a parser name.

    An unknown parameter, or one given twice, is an error rather than
    silently ignored: a typo in a filter must not list everything.
    """
    params = {}
    for name, value in req.GET.items():
        if name not in allowed:
            raise exception.Invalid(
                reason='unknown query parameter %r; this resource takes %s.'
                       % (name, ', '.join(sorted(allowed))))
        if name in params:
            raise exception.Invalid(reason='query parameter %r is given '
                                           'more than once.' % name)
        params[name] = PARSERS[allowed[name]](value, name)
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
    return [{'rel': 'next', 'href': '%s?%s' % (
        req.path_url, urllib.parse.urlencode(sorted(query.items())))}]


def now():
    return timeutils.utcnow(True)
