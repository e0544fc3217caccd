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
"""What a backup holds: its tables and their row counts.

Counted at dump time from the dump itself, as it streams by (pg_dump's
``COPY`` blocks, mariadb-dump's ``INSERT`` tuples, the SQLite copy), so
that the counts are those of the dump's own snapshot; the manifest keeps
them, and a verification compares them with the database it restored.
"""

import re
import sqlite3
import urllib.parse

import sqlalchemy as sa

from dbaas_scheduler.backends.local import commands

# pg_dump: "CREATE TABLE public.t (" and "COPY public.t (a, b) FROM stdin;"
_PG_NAME = rb'(?:(?P<schema>"(?:[^"]|"")+"|[^\s."(]+)\.)?' \
    rb'(?P<name>"(?:[^"]|"")+"|[^\s."(]+)'
_PG_CREATE = re.compile(rb'^CREATE (?:UNLOGGED )?TABLE ' + _PG_NAME)
_PG_COPY = re.compile(rb'^COPY ' + _PG_NAME + rb' .*FROM stdin;$')
_PG_COPY_END = b'\\.'
# mariadb-dump: "CREATE TABLE `t` (" and "INSERT INTO `t` VALUES (..),(..);"
_MY_CREATE = re.compile(rb'^CREATE TABLE `(?P<name>(?:[^`]|``)+)`')
# The rows follow on the same line, or (MariaDB 11) one a line after it.
_MY_INSERT = re.compile(rb'^INSERT INTO `(?P<name>(?:[^`]|``)+)` VALUES')
# A quoted string of a dump, backslash escapes included.
_MY_STRING = re.compile(rb"'(?:[^'\\]|\\.)*'", re.DOTALL)


def _pg_name(match):
    schema = match.group('schema')
    if schema not in (None, b'public'):
        # Only the default schema is compared (table_counts reads it).
        return None
    name = match.group('name')
    if name.startswith(b'"'):
        name = name[1:-1].replace(b'""', b'"')
    return name.decode('utf-8', 'replace')


class DumpCounter:
    """Counts the tables and rows of a plain SQL dump written through it.

    ``write`` takes the dump's bytes in any chunks; ``tables`` is
    ``{table: rows}`` once the dump is through.
    """

    def __init__(self, kind):
        self.kind = kind
        self.tables = {}
        self._rest = b''
        self._copying = None

    def write(self, data):
        lines = (self._rest + data).split(b'\n')
        self._rest = lines.pop()
        for line in lines:
            self._line(line)
        return len(data)

    def close(self):
        if self._rest:
            self._line(self._rest)
            self._rest = b''

    def _line(self, line):
        if self.kind == commands.POSTGRESQL:
            self._pg_line(line)
        else:
            self._my_line(line)

    def _pg_line(self, line):
        if self._copying is not None:
            if line == _PG_COPY_END:
                self._copying = None
            elif self._copying:
                self.tables[self._copying] += 1
            return
        match = _PG_CREATE.match(line)
        if match:
            name = _pg_name(match)
            if name is not None:
                self.tables.setdefault(name, 0)
            return
        match = _PG_COPY.match(line)
        if match:
            # '' : rows of a table outside the default schema, skipped.
            self._copying = _pg_name(match) or ''
            if self._copying:
                self.tables.setdefault(self._copying, 0)

    def _my_rows(self, values):
        # Without their strings, a row's values hold no parenthesis but
        # the pair around the row; the statement ends with ";".
        values = _MY_STRING.sub(b"''", values).rstrip()
        self.tables[self._copying] += values.count(b'(')
        if values.endswith(b';'):
            self._copying = None

    def _my_line(self, line):
        if self._copying is not None:
            self._my_rows(line)
            return
        match = _MY_INSERT.match(line)
        if match:
            self._copying = match.group('name').replace(
                b'``', b'`').decode('utf-8', 'replace')
            self.tables.setdefault(self._copying, 0)
            self._my_rows(line[match.end():])
            return
        match = _MY_CREATE.match(line)
        if match:
            self.tables.setdefault(match.group('name').replace(
                b'``', b'`').decode('utf-8', 'replace'), 0)


def sqlite_counts(path):
    """``{table: rows}`` of a SQLite file, opened read-only."""
    connection = sqlite3.connect(
        'file:%s?mode=ro' % urllib.parse.quote(path), uri=True)
    try:
        names = [row[0] for row in connection.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND "
            "name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")]
        return {name: connection.execute(
            'SELECT COUNT(*) FROM "%s"' % name.replace('"', '""'))
            .fetchone()[0] for name in names}
    finally:
        connection.close()


def table_counts(url_string):
    """``{table: rows}`` of a database (its default schema)."""
    engine = sa.create_engine(url_string, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            quote = engine.dialect.identifier_preparer.quote
            return {name: connection.execute(sa.text(
                'SELECT COUNT(*) FROM %s' % quote(name))).scalar_one()
                for name in sa.inspect(connection).get_table_names()}
    finally:
        engine.dispose()


def differences(recorded, found, limit=5):
    """What differs between two ``{table: rows}``, for a user; or None."""
    problems = []
    for name in sorted(set(recorded) - set(found)):
        problems.append('table %s is missing' % name)
    for name in sorted(set(found) - set(recorded)):
        problems.append('table %s was not in the backup' % name)
    for name in sorted(set(recorded) & set(found)):
        if recorded[name] != found[name]:
            problems.append('table %s has %d rows, the backup recorded %d'
                            % (name, found[name], recorded[name]))
    if not problems:
        return None
    more = len(problems) - limit
    return '; '.join(problems[:limit]) + (
        ' (and %d more differences)' % more if more > 0 else '')
