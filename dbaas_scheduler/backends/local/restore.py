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
"""Loading a local backup into a database: psql, mariadb, or a SQLite file.

The backup's file is checked against its manifest (size and SHA-256)
before anything is loaded, so that a damaged backup fails with that
reason rather than with whatever the tool makes of half a dump.
PostgreSQL loads in one transaction (``--single-transaction``): a load
that fails, or a worker that dies, leaves the target as it was.  A SQLite
target is written beside itself and renamed into place.
"""

import dataclasses
import gzip
import hashlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
import zlib

import sqlalchemy as sa

from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.backends.local import dump
from dbaas_scheduler.backends.local import files

_CHUNK = 1024 * 1024


class RestoreFailed(Exception):
    """The restore did not happen; ``reason`` says why, for the user.

    ``detail`` is for the operator's log only (it may name hosts, paths).
    """

    def __init__(self, reason, detail=None):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail or reason


@dataclasses.dataclass(frozen=True)
class LoadCommand:
    """How to load a plain SQL dump into one database."""

    kind: str
    argv: tuple = ()
    env: dict = dataclasses.field(default_factory=dict)
    option_file: str | None = None
    sqlite_path: str | None = None


def load_command(url_string, find_tool=shutil.which):
    """Translate a database URL into a :class:`LoadCommand`.

    Reuses the dump command's reading of the URL (host, port, user,
    password, socket), with the client that reads SQL instead of the dump
    tool.
    """
    dumping = commands.dump_command(url_string, find_tool)
    if dumping.kind == commands.SQLITE:
        return LoadCommand(kind=commands.SQLITE,
                           sqlite_path=dumping.sqlite_path)
    argv = list(dumping.argv)
    if dumping.kind == commands.POSTGRESQL:
        # pg_dump --format=plain ... --dbname=x -> psql ... --dbname=x
        argv = (['psql', '--no-psqlrc', '--quiet', '--set=ON_ERROR_STOP=1',
                 '--single-transaction']
                + [a for a in argv[1:] if a.startswith((
                    '--host=', '--port=', '--username=', '--dbname=',
                    '--no-password'))])
    else:
        tool = 'mariadb'
        if not find_tool(tool) and find_tool('mysql'):
            tool = 'mysql'
        database = argv[-1]
        argv = ([tool, '--batch']
                + [a for a in argv[1:-2] if a.startswith((
                    '--socket=', '--protocol=', '--host=', '--port=',
                    '--user=', '--default-character-set='))]
                + [database])
    return LoadCommand(kind=dumping.kind, argv=tuple(argv), env=dumping.env,
                       option_file=dumping.option_file)


def check_backup_file(path, manifest):
    """Raise :class:`RestoreFailed` unless the file is the one recorded."""
    backup_id = manifest.get('id')
    try:
        size = os.path.getsize(path)
        digest = hashlib.sha256()
        with open(path, 'rb') as stream:
            for chunk in iter(lambda: stream.read(_CHUNK), b''):
                digest.update(chunk)
    except OSError as e:
        raise RestoreFailed(
            'the file of backup %s cannot be read' % backup_id,
            'cannot read %s: %s' % (path, e))
    if manifest.get('size_bytes') is not None and \
            size != manifest['size_bytes']:
        raise RestoreFailed(
            'backup %s is damaged: its file has %d bytes, %d were written '
            'when it was made' % (backup_id, size, manifest['size_bytes']))
    if manifest.get('sha256') and digest.hexdigest() != manifest['sha256']:
        raise RestoreFailed(
            'backup %s is damaged: its file does not match the SHA-256 '
            'recorded when it was made' % backup_id)


def table_names(url_string):
    """The tables of a database (its default schema), sorted."""
    engine = sa.create_engine(url_string, poolclass=sa.pool.NullPool)
    try:
        return sorted(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def clear_database(url_string):
    """Drop every table (and, on PostgreSQL, the public schema's objects)."""
    engine = sa.create_engine(url_string, poolclass=sa.pool.NullPool)
    try:
        with engine.begin() as connection:
            if engine.dialect.name == 'postgresql':
                connection.execute(sa.text('DROP SCHEMA public CASCADE'))
                connection.execute(sa.text('CREATE SCHEMA public'))
                return
            connection.execute(sa.text('SET FOREIGN_KEY_CHECKS = 0'))
            for name in sa.inspect(connection).get_table_names():
                connection.execute(sa.text(
                    'DROP TABLE %s' % engine.dialect.identifier_preparer
                    .quote(name)))
            connection.execute(sa.text('SET FOREIGN_KEY_CHECKS = 1'))
    finally:
        engine.dispose()


def _gunzip_to(path, out, backup_id):
    try:
        with gzip.open(path, 'rb') as source:
            shutil.copyfileobj(source, out, _CHUNK)
    except (OSError, EOFError, zlib.error) as e:
        raise RestoreFailed(
            'backup %s is damaged: its file cannot be decompressed (%s)'
            % (backup_id, e))


def load_sqlite(data_path, target_path, backup_id):
    """Write the SQLite copy to ``target_path``, checked, atomically."""
    directory = os.path.dirname(target_path)
    os.makedirs(directory, mode=0o700, exist_ok=True)
    part = target_path + files.PART_SUFFIX
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with open(fd, 'wb') as out:
            _gunzip_to(data_path, out, backup_id)
            out.flush()
            os.fsync(out.fileno())
        connection = sqlite3.connect(part)
        try:
            result = connection.execute('PRAGMA integrity_check').fetchone()
        except sqlite3.Error as e:
            raise RestoreFailed(
                'backup %s is damaged: it is not a SQLite database (%s)'
                % (backup_id, e))
        finally:
            connection.close()
        if not result or result[0] != 'ok':
            raise RestoreFailed(
                'backup %s is damaged: SQLite\'s integrity check says %s'
                % (backup_id, result[0] if result else 'nothing'))
        os.replace(part, target_path)
        files.fsync_directory(directory)
    finally:
        files.remove(part)


def _public_error(stderr):
    """The tool's error lines a user may read (no connection details)."""
    lines = [line.strip() for line in stderr.splitlines()
             if line.strip().startswith(('ERROR', 'psql:'))
             and 'connection' not in line and 'password' not in line]
    return dump.trim_fault(lines[0]) if lines else None


def load_sql(command, data_path, backup_id, workdir):
    """Run the SQL client with the decompressed dump on its stdin."""
    argv, pass_fds, option_file = dump.tool_argv(command, workdir)
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(
                argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                stderr=errors, env=dict(os.environ, **command.env),
                pass_fds=pass_fds)
        except FileNotFoundError:
            raise RestoreFailed(
                'the restore tool is not installed on the worker\'s host',
                '%s is not installed (not found on PATH)' % argv[0])
        finally:
            if option_file is not None:
                option_file.close()
        damaged = None
        try:
            with process.stdin:
                try:
                    _gunzip_to(data_path, process.stdin, backup_id)
                except RestoreFailed as e:
                    damaged = e
                except BrokenPipeError:
                    pass
            if damaged is not None:
                # Half a dump must not be committed.
                process.kill()
            returncode = process.wait()
        except BaseException:
            process.kill()
            process.wait()
            raise
        if damaged is not None:
            raise damaged
        if returncode != 0:
            errors.seek(0)
            text = errors.read().decode('utf-8', 'replace')
            public = _public_error(text)
            raise RestoreFailed(
                'loading backup %s failed%s' % (
                    backup_id, ': %s' % public if public else
                    '; the service\'s operator finds the cause in its log'),
                '%s exited with status %d: %s' % (
                    argv[0], returncode, dump.trim_fault(text)))
