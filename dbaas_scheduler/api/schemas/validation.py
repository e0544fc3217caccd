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
"""Checking a request document against its JSON schema, for every door.

The REST API checks its request bodies here, and the engine's RPC
endpoint checks the values another service sends with the same schemas:
what one door refuses, the other refuses too, with the same message.
"""

import functools
import re

import jsonschema

from dbaas_scheduler.api.schemas import common
from dbaas_scheduler.db import limits
from dbaas_scheduler import exception

# JSON nested deeper is refused.  A valid body has 3 levels and what
# backup_params holds; Python's parser gives up near 1,000.
MAX_JSON_DEPTH = 32
# How much of a value an error message quotes.
EXCERPT_LENGTH = 64

# Text no database stores: NUL (PostgreSQL refuses it) and UTF-16
# surrogates without their pair (not encodable as UTF-8).
_UNSTORABLE = re.compile('[\x00\ud800-\udfff]')


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


def check_json(body):
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
                if not isinstance(key, str):
                    raise exception.Invalid(
                        reason='%sa key is not a string.' % where)
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


def validate(document, schema):
    """Raise Invalid, saying where and what, unless ``document`` fits."""
    check_json(document)
    errors = sorted(Validator(schema).iter_errors(document),
                    key=lambda e: list(e.absolute_path))
    if errors:
        error = jsonschema.exceptions.best_match(errors)
        where = '.'.join(str(part) for part in error.absolute_path)
        raise exception.Invalid(reason='%s%s.' % (
            'in %s: ' % where if where else '',
            _schema_error_message(error)))
