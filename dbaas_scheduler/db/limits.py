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
"""What a column of the models holds on every supported database.

The API's schemas take their bounds from here, so that a value the API
accepts is one every backend stores: the models stay the one source of
truth for sizes and ranges.  What really applies, measured on MariaDB
10.11 and PostgreSQL 15:

* ``String(n)`` is ``VARCHAR(n)``, which counts *characters* on both (the
  tables are ``utf8mb4`` on MariaDB, and its connections too: see
  :func:`dbaas_scheduler.db.api._tune_mysql`); SQLite does not enforce it.
* ``Text`` is MariaDB's ``TEXT``: 65,535 *bytes*, and ``utf8mb4`` takes
  up to 4 bytes a character, so 16,383 characters always fit.  PostgreSQL
  and SQLite take more; the API allows what every backend takes.
* A JSON column (oslo.db's ``JsonEncodedDict``/``List``) is ``Text``
  holding ``json.dumps`` of the value, which is ASCII (``\\uXXXX``
  escapes): its limit is on that text, in characters.
* ``Integer`` is a signed 32-bit integer on MariaDB and PostgreSQL.
"""

import json

import sqlalchemy as sa

# MariaDB's TEXT, in bytes.
TEXT_BYTES = 2 ** 16 - 1
# The most bytes one character takes in utf8mb4.
UTF8MB4_BYTES_PER_CHARACTER = 4

INTEGER_RANGES = (
    (sa.SmallInteger, (-2 ** 15, 2 ** 15 - 1)),
    (sa.BigInteger, (-2 ** 63, 2 ** 63 - 1)),
    (sa.Integer, (-2 ** 31, 2 ** 31 - 1)),
)


def _type(column):
    """The column's type as the database sees it (through decorators)."""
    column_type = column.type
    while isinstance(column_type, sa.types.TypeDecorator):
        column_type = column_type.impl_instance
    return column_type


def max_length(column):
    """Characters a string column holds on every backend."""
    column_type = _type(column)
    if not isinstance(column_type, sa.String):
        raise TypeError('%s is not a string column' % column)
    if column_type.length:
        return column_type.length
    return TEXT_BYTES // UTF8MB4_BYTES_PER_CHARACTER


def max_json_length(column):
    """Characters of ``json.dumps(value)`` a JSON-in-text column holds."""
    if not isinstance(_type(column), sa.Text):
        raise TypeError('%s is not a text column' % column)
    # json.dumps writes ASCII only: one byte a character.
    return TEXT_BYTES


def json_length(value):
    """The length of ``value`` as a JSON column stores it."""
    return len(json.dumps(value))


def integer_range(column):
    """(smallest, largest) value an integer column holds on every backend."""
    column_type = _type(column)
    for kind, bounds in INTEGER_RANGES:
        if isinstance(column_type, kind):
            return bounds
    raise TypeError('%s is not an integer column' % column)
