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
"""Counting the tables and rows of a dump as it streams by."""

from oslotest import base

from dbaas_scheduler.backends.local import contents

MARIADB_11 = (b"CREATE TABLE `t` (\n  `id` int\n);\n"
              b"INSERT INTO `t` VALUES\n(1,'a'),\n(2,'b),(c\\'(');\n"
              b"CREATE TABLE `e``x` (\n  `id` int\n);\n")
MARIADB_OLD = b"INSERT INTO `u` VALUES (1,'x'),(2,'(y)'),(3,NULL);\n"
POSTGRESQL = (b'CREATE TABLE public.t (\n    a integer\n);\n'
              b'CREATE TABLE public."We""ird" (\n);\n'
              b'CREATE TABLE other.x (\n);\n'
              b'COPY public.t (a) FROM stdin;\n1\n2\n\\.\n'
              b'COPY other.x (a) FROM stdin;\n1\n\\.\n')


def count(kind, dump, chunk=5):
    counter = contents.DumpCounter(kind)
    for start in range(0, len(dump), chunk):
        counter.write(dump[start:start + chunk])
    counter.close()
    return counter.tables


class TestDumpCounter(base.BaseTestCase):

    def test_mariadb_rows_one_a_line(self):
        self.assertEqual({'t': 2, 'e`x': 0}, count('mysql', MARIADB_11))

    def test_mariadb_extended_inserts(self):
        self.assertEqual({'u': 3}, count('mysql', MARIADB_OLD))

    def test_postgresql_copy_blocks_of_the_public_schema(self):
        self.assertEqual({'t': 2, 'We"ird': 0},
                         count('postgresql', POSTGRESQL))

    def test_any_chunking(self):
        for chunk in (1, 3, 64, 4096):
            self.assertEqual({'t': 2, 'e`x': 0},
                             count('mysql', MARIADB_11, chunk))


class TestDifferences(base.BaseTestCase):

    def test_none(self):
        self.assertIsNone(contents.differences({'a': 1}, {'a': 1}))

    def test_each_kind(self):
        self.assertEqual(
            'table b is missing; table c was not in the backup; table a '
            'has 1 rows, the backup recorded 2',
            contents.differences({'a': 2, 'b': 0}, {'a': 1, 'c': 0}))
