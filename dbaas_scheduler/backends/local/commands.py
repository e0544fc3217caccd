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
"""A database URL as the command that dumps it: pg_dump, mariadb-dump, SQLite.

Pure translation (but for finding which dump program is installed): the
backend uses it to refuse an unusable URL before it starts a job, the job
to run the dump.
"""

import dataclasses
import os
import shutil

from sqlalchemy import engine as sa_engine
from sqlalchemy import exc as sa_exc

from dbaas_scheduler.backends.local import files

POSTGRESQL = 'postgresql'
MYSQL = 'mysql'
SQLITE = 'sqlite'

# Seconds pg_dump waits for the server before it gives up; without it an
# unreachable host keeps a job (and its backup) BUILDING for minutes.
# (mariadb-dump has no such option; its client library's default applies.)
CONNECT_TIMEOUT = 30


class UnsupportedDatabase(ValueError):
    """The URL names no database this job can dump."""


@dataclasses.dataclass(frozen=True)
class DumpCommand:
    """How to dump one database: a tool to run or a SQLite file to copy."""

    kind: str
    suffix: str
    # The dump tool and its arguments; never a password.
    argv: tuple = ()
    # Variables added to the tool's environment (PGPASSWORD lives here).
    env: dict = dataclasses.field(default_factory=dict)
    # A MariaDB/MySQL option file holding the password, or None.
    option_file: str | None = None
    # The database file, for SQLite.
    sqlite_path: str | None = None


def database_kind(url):
    """``postgresql``, ``mysql`` or ``sqlite`` for a SQLAlchemy URL."""
    backend = url.get_backend_name()
    if backend == 'postgresql':
        return POSTGRESQL
    if backend in ('mysql', 'mariadb'):
        return MYSQL
    if backend == 'sqlite':
        return SQLITE
    raise UnsupportedDatabase(
        'cannot back up %s databases; use a postgresql://, mysql:// '
        '(or mariadb://) or sqlite:////absolute/path URL' % backend)


def parse_url(url_string):
    """The SQLAlchemy URL object; :class:`UnsupportedDatabase` if invalid."""
    try:
        return sa_engine.make_url(url_string)
    except (sa_exc.ArgumentError, ValueError):
        # The message would quote the URL, password included.
        raise UnsupportedDatabase(
            'the database URL cannot be parsed; give a SQLAlchemy URL '
            'such as postgresql://user:password@host/database')


def _query_value(url, key):
    value = url.query.get(key)
    if isinstance(value, tuple):
        value = value[-1] if value else None
    return value


def dump_command(url_string, find_tool=shutil.which):
    """Translate a database URL into a :class:`DumpCommand`.

    Pure but for ``find_tool`` (which dump program is installed).
    """
    url = parse_url(url_string)
    kind = database_kind(url)
    if kind == SQLITE:
        return _sqlite_command(url)
    if not url.database:
        raise UnsupportedDatabase('the database URL names no database')
    if kind == POSTGRESQL:
        return _pg_dump_command(url)
    return _mariadb_dump_command(url, find_tool)


def _sqlite_command(url):
    path = url.database
    if not path or path == ':memory:' or not os.path.isabs(path):
        raise UnsupportedDatabase(
            'a SQLite URL must name a database file by its absolute path, '
            'as in sqlite:////var/lib/notes/notes.db')
    return DumpCommand(kind=SQLITE, suffix=files.SQLITE_SUFFIX,
                       sqlite_path=path)


def _pg_dump_command(url):
    argv = ['pg_dump', '--format=plain', '--no-password']
    # psycopg2 takes a Unix socket directory as ?host=/run/postgresql.
    host = url.host or _query_value(url, 'host')
    if host:
        argv.append('--host=%s' % host)
    if url.port:
        argv.append('--port=%d' % url.port)
    if url.username:
        argv.append('--username=%s' % url.username)
    argv.append('--dbname=%s' % url.database)
    env = {'PGCONNECT_TIMEOUT': str(CONNECT_TIMEOUT)}
    if url.password is not None:
        env['PGPASSWORD'] = url.password
    sslmode = _query_value(url, 'sslmode')
    if sslmode:
        env['PGSSLMODE'] = sslmode
    return DumpCommand(kind=POSTGRESQL, suffix=files.SQL_SUFFIX,
                       argv=tuple(argv), env=env)


def _mariadb_dump_command(url, find_tool):
    tool = 'mariadb-dump'
    if not find_tool(tool) and find_tool('mysqldump'):
        tool = 'mysqldump'
    argv = [tool, '--single-transaction', '--routines', '--events',
            '--triggers', '--hex-blob', '--no-tablespaces',
            '--default-character-set=%s' % (
                _query_value(url, 'charset') or 'utf8mb4')]
    socket = _query_value(url, 'unix_socket')
    if socket:
        argv.append('--socket=%s' % socket)
    elif url.host:
        # The client libraries take "localhost" for the Unix socket, where
        # PyMySQL would connect over TCP: do what the URL means.
        argv += ['--protocol=tcp', '--host=%s' % url.host]
    if url.port:
        argv.append('--port=%d' % url.port)
    if url.username:
        argv.append('--user=%s' % url.username)
    argv += ['--', url.database]
    option_file = None
    if url.password is not None:
        option_file = '[client]\npassword="%s"\n' % _option_file_escape(
            url.password)
    return DumpCommand(kind=MYSQL, suffix=files.SQL_SUFFIX,
                       argv=tuple(argv), option_file=option_file)


def _option_file_escape(value):
    """Quote a value for a MariaDB/MySQL option file."""
    return (value.replace('\\', '\\\\').replace('"', '\\"')
            .replace('\n', '\\n').replace('\r', '\\r')
            .replace('\t', '\\t'))
