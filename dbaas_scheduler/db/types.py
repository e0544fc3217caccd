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
"""Column types shared by the models and the migrations."""

import datetime

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

UTC = datetime.timezone.utc


def microsecond_datetime():
    """A DATETIME that keeps microseconds on every backend.

    MariaDB/MySQL's plain DATETIME truncates to whole seconds, and a
    compare-and-set on a microsecond timestamp then matches no row; there it
    must be DATETIME(6).  PostgreSQL's timestamp and SQLite keep them.
    """
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), 'mysql',
                                      'mariadb')


class UTCDateTime(sa.types.TypeDecorator):
    """An aware UTC datetime stored as a naive UTC one, to the microsecond.

    Binds aware datetimes in any zone (converted to UTC) or naive ones
    (taken as UTC); always loads aware UTC datetimes, so the rest of the
    code never mixes naive and aware values.
    """

    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect):
        if dialect.name in ('mysql', 'mariadb'):
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        return dialect.type_descriptor(sa.DateTime())

    def process_bind_param(self, value, dialect):
        if value is not None and value.tzinfo is not None:
            value = value.astimezone(UTC).replace(tzinfo=None)
        return value

    def process_result_value(self, value, dialect):
        if value is not None:
            value = value.replace(tzinfo=UTC)
        return value
