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
"""UTCDateTime: aware datetimes in, aware UTC datetimes out."""

import datetime

from oslotest import base
from sqlalchemy.dialects import mysql
from sqlalchemy.dialects import postgresql
from sqlalchemy.dialects import sqlite

from dbaas_scheduler.db import types

UTC = datetime.timezone.utc


class TestUTCDateTime(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.type = types.UTCDateTime()

    def test_aware_value_is_bound_as_naive_utc(self):
        local = datetime.datetime(
            2026, 3, 29, 3, 30, 0, 7,
            tzinfo=datetime.timezone(datetime.timedelta(hours=2)))
        self.assertEqual(
            datetime.datetime(2026, 3, 29, 1, 30, 0, 7),
            self.type.process_bind_param(local, sqlite.dialect()))

    def test_naive_value_is_taken_as_utc(self):
        naive = datetime.datetime(2026, 3, 29, 1, 30)
        self.assertEqual(naive,
                         self.type.process_bind_param(naive, sqlite.dialect()))

    def test_loaded_value_is_aware_utc(self):
        loaded = self.type.process_result_value(
            datetime.datetime(2026, 3, 29, 1, 30, 0, 7), sqlite.dialect())
        self.assertIs(UTC, loaded.tzinfo)
        self.assertEqual(7, loaded.microsecond)

    def test_none(self):
        self.assertIsNone(self.type.process_bind_param(None, sqlite.dialect()))
        self.assertIsNone(self.type.process_result_value(None,
                                                         sqlite.dialect()))

    def test_mysql_keeps_microseconds(self):
        impl = self.type.load_dialect_impl(mysql.dialect())
        self.assertIsInstance(impl, mysql.DATETIME)
        self.assertEqual(6, impl.fsp)
        self.assertEqual(
            'DATETIME(6)',
            str(types.microsecond_datetime().compile(
                dialect=mysql.dialect())))

    def test_postgresql_timestamp(self):
        self.assertEqual(
            'TIMESTAMP WITHOUT TIME ZONE',
            str(types.microsecond_datetime().compile(
                dialect=postgresql.dialect())))
