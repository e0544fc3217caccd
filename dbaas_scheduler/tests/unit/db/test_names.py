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

import datetime

from dbaas_scheduler.db import names
from dbaas_scheduler.tests import base


def _day(number):
    return datetime.datetime(2026, 1, number)


class TestDuplicateRenames(base.TestCase):

    def test_no_duplicates_no_renames(self):
        self.assertEqual({}, names.duplicate_renames([
            ('a', 'p', 'notes', _day(1)), ('b', 'p', 'orders', _day(1)),
            ('c', 'q', 'notes', _day(1))]))

    def test_the_oldest_keeps_its_name(self):
        self.assertEqual({'a': 'notes-2', 'c': 'notes-3'},
                         names.duplicate_renames([
                             ('a', 'p', 'notes', _day(2)),
                             ('b', 'p', 'notes', _day(1)),
                             ('c', 'p', 'notes', _day(3))]))

    def test_same_time_the_smallest_id_keeps_it(self):
        self.assertEqual({'b': 'notes-2'}, names.duplicate_renames([
            ('b', 'p', 'notes', _day(1)), ('a', 'p', 'notes', _day(1))]))

    def test_names_in_use_are_skipped(self):
        self.assertEqual({'b': 'notes-3'}, names.duplicate_renames([
            ('a', 'p', 'notes', _day(1)), ('b', 'p', 'notes', _day(2)),
            ('c', 'p', 'notes-2', _day(3))]))

    def test_the_new_name_fits_the_column(self):
        long = 'x' * names.NAME_LENGTH
        renamed = names.duplicate_renames([('a', 'p', long, _day(1)),
                                           ('b', 'p', long, _day(2))])['b']
        self.assertEqual(names.NAME_LENGTH, len(renamed))
        self.assertTrue(renamed.endswith('x-2'))
