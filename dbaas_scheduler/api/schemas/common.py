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
"""Schema pieces the resources share: bounded fields, query parameters.

A field stored in a column takes its bounds from that column
(:mod:`dbaas_scheduler.db.limits`), so that every value the API accepts
fits on every database.  Query parameters are described by a JSON schema
of their value too: :func:`dbaas_scheduler.api.util.query_params` parses
them by it, and the OpenAPI document shows the same objects.

``x-max-json-length`` is this API's own keyword (JSON Schema has none for
it): the length of ``json.dumps`` of the value, which is what a JSON
column stores.
"""

from dbaas_scheduler.db import limits

MAX_JSON_LENGTH = 'x-max-json-length'

# Characters a field that reaches a log line must not hold: C0 and C1
# controls (CR, LF, NEL...) and the Unicode line and paragraph
# separators, with which a value could forge or split log lines.
CONTROL = '\\x00-\\x1f\\x7f-\\x9f\\u2028\\u2029'
ONE_LINE = '^[^%s]*$' % CONTROL
# Free text (a description) may also hold tabs and line feeds.
TEXT = '^[^\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f\\u2028\\u2029]*$'
# What an error says of a value that does not match a pattern: words, not
# the regular expression.
PATTERN_MESSAGES = {
    ONE_LINE: 'must be one line, without control characters',
    TEXT: 'must not hold control characters (tab and line feed aside)',
}


def _nullable(schema, nullable):
    if nullable:
        schema['type'] = [schema['type'], 'null']
    return schema


def string(column, min_length=1, nullable=False, **extra):
    """A string stored in ``column``."""
    schema = {'type': 'string', 'minLength': min_length,
              'maxLength': limits.max_length(column)}
    schema.update(extra)
    return _nullable(schema, nullable)


def integer(column, minimum, maximum=None, nullable=True, **extra):
    """An integer stored in ``column``; ``maximum`` may lower its bound."""
    largest = limits.integer_range(column)[1]
    schema = {'type': 'integer', 'minimum': minimum,
              'maximum': largest if maximum is None
              else min(maximum, largest)}
    schema.update(extra)
    return _nullable(schema, nullable)


def json_object(column, nullable=True, **extra):
    """A JSON object stored (as JSON text) in ``column``."""
    schema = {'type': 'object',
              MAX_JSON_LENGTH: limits.max_json_length(column)}
    schema.update(extra)
    return _nullable(schema, nullable)


# Query parameters.  Every value in a query string is text; these say
# what text each parameter takes, and util.query_params parses it so.

# The keyword of a field's or parameter's first microversion (the same as
# dbaas_scheduler.api.microversion.SINCE, which this layer cannot import).
SINCE = 'x-openstack-since'
# Retention floors, holds, the grace and the lifecycle preview.
RETENTION_VERSION = '1.3'
# Scheduled verification of backups.
VERIFY_VERSION = '1.7'
# Verification on a schedule of its own; verification on templates.
VERIFY_SCHEDULE_VERSION = '1.8'


def since(schema, version):
    """``schema``, first served at microversion ``version``."""
    return dict(schema, **{SINCE: version})


BOOLEAN = {
    'type': 'boolean',
    'description': 'true or false; also 1/0, yes/no, on/off, in any case.',
}

LIMIT = {
    'type': 'integer', 'minimum': 0,
    'description': 'The largest number of items on a page; larger '
                   'numbers are lowered to [api] max_limit, 0 is taken '
                   'as 1.',
}

TIME = {
    'type': 'string', 'format': 'date-time',
    'description': 'An ISO 8601 date and time; without an offset, UTC.',
}


def one_line(column, **extra):
    """A string stored in ``column``, one line without control characters."""
    extra.setdefault('pattern', ONE_LINE)
    return string(column, **extra)


def identifier(column, **extra):
    """A query parameter naming something stored in ``column``."""
    return string(column, **extra)
