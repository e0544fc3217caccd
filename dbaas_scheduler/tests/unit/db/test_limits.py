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
"""What the columns hold, as the API's schemas take it."""

from oslo_db.sqlalchemy import types as oslo_db_types
from oslotest import base
import sqlalchemy as sa

from dbaas_scheduler.db import limits
from dbaas_scheduler.db import models


def _column(column_type):
    return sa.Column('c', column_type)


class TestLimits(base.BaseTestCase):

    def test_varchar_counts_characters(self):
        self.assertEqual(255, limits.max_length(_column(sa.String(255))))
        self.assertEqual(36, limits.max_length(
            models.BackupPolicy.__table__.c.id))

    def test_text_holds_65535_bytes_of_four_byte_characters(self):
        self.assertEqual(16383, limits.max_length(_column(sa.Text)))
        self.assertLessEqual(
            limits.max_length(_column(sa.Text)) * 4, 65535)

    def test_json_column_holds_65535_characters_of_json(self):
        column = models.BackupPolicy.__table__.c.backup_params
        self.assertEqual(65535, limits.max_json_length(column))
        self.assertEqual(65535, limits.max_json_length(
            _column(oslo_db_types.JsonEncodedList)))
        # Stored as json.dumps writes it: non-ASCII as \uXXXX escapes.
        self.assertEqual(len('{"a": "\\u20ac"}'),
                         limits.json_length({'a': '\u20ac'}))

    def test_integers(self):
        self.assertEqual((-2 ** 31, 2 ** 31 - 1), limits.integer_range(
            models.BackupPolicy.__table__.c.remaining_runs))
        self.assertEqual((-2 ** 63, 2 ** 63 - 1),
                         limits.integer_range(_column(sa.BigInteger)))
        self.assertEqual((-2 ** 15, 2 ** 15 - 1),
                         limits.integer_range(_column(sa.SmallInteger)))

    def test_wrong_kinds(self):
        self.assertRaises(TypeError, limits.max_length,
                          _column(sa.Integer))
        self.assertRaises(TypeError, limits.integer_range,
                          _column(sa.String(3)))
        self.assertRaises(TypeError, limits.max_json_length,
                          _column(sa.String(3)))
