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
"""The local backend's dump job: one backup, made in a process of its own.

:class:`~dbaas_scheduler.backends.local.LocalBackend` starts
``python -m dbaas_scheduler.backends.local_job <manifest>`` in a session of
its own, so that a worker killed mid-backup does not take the dump with it.
The job reads its orders from stdin (one JSON line with the database URL,
which may hold a password and so is kept out of argv and off the disk),
then waits for ``start`` or end of file: the backend only lets it go once
the manifest naming the job's pid is on disk.  A job whose manifest never
appeared (its creator died first) exits without dumping anything, so a
backup nobody recorded is never made.

The dump goes to ``<id><suffix>.part``, is fsynced and renamed into place;
then the job rewrites the manifest as COMPLETED or FAILED.  Whatever kills
the job before that, the manifest stays BUILDING with a dead pid, which the
backend reports (and records) as FAILED and cleans up after.

The manifest helpers and the URL-to-command translation, which the backend
shares, live here too.
"""

import dataclasses
import datetime
import gzip
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import traceback
import urllib.parse

from sqlalchemy import engine as sa_engine
from sqlalchemy import exc as sa_exc

from dbaas_scheduler.backends import base

MANIFEST_SUFFIX = '.json'
PART_SUFFIX = '.part'
LOG_SUFFIX = '.log'
SQL_SUFFIX = '.sql.gz'
SQLITE_SUFFIX = '.sqlite.gz'

POSTGRESQL = 'postgresql'
MYSQL = 'mysql'
SQLITE = 'sqlite'

START = b'start'

# Seconds pg_dump waits for the server before it gives up; without it an
# unreachable host keeps a job (and its backup) BUILDING for minutes.
# (mariadb-dump has no such option; its client library's default applies.)
CONNECT_TIMEOUT = 30
# The longest fault text a manifest keeps: the end of the tool's stderr.
FAULT_LIMIT = 2000
_CHUNK = 1024 * 1024


class UnsupportedDatabase(ValueError):
    """The URL names no database this job can dump."""


class DumpFailed(Exception):
    """The dump did not produce a backup; ``reason`` says why."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


class JobStopped(Exception):
    """SIGTERM: give up, but clean up and record it first."""


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
    return DumpCommand(kind=SQLITE, suffix=SQLITE_SUFFIX, sqlite_path=path)


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
    return DumpCommand(kind=POSTGRESQL, suffix=SQL_SUFFIX, argv=tuple(argv),
                       env=env)


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
    return DumpCommand(kind=MYSQL, suffix=SQL_SUFFIX, argv=tuple(argv),
                       option_file=option_file)


def _option_file_escape(value):
    """Quote a value for a MariaDB/MySQL option file."""
    return (value.replace('\\', '\\\\').replace('"', '\\"')
            .replace('\n', '\\n').replace('\r', '\\r')
            .replace('\t', '\\t'))


# Manifests.

def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def fsync_directory(directory):
    """Make a rename in ``directory`` survive a power cut."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_manifest(path, manifest):
    """Replace the manifest at ``path`` atomically (temp, fsync, rename)."""
    directory, filename = os.path.split(path)
    fd, temp_path = tempfile.mkstemp(dir=directory, prefix='.' + filename,
                                     suffix='.tmp')
    try:
        with os.fdopen(fd, 'w') as stream:
            json.dump(manifest, stream, indent=2, sort_keys=True)
            stream.write('\n')
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temp_path, path)
    except BaseException:
        _remove(temp_path)
        raise
    fsync_directory(directory)


def read_manifest(path):
    """The manifest at ``path`` as a dict; None if there is none."""
    try:
        with open(path) as stream:
            return json.load(stream)
    except FileNotFoundError:
        return None


def finish_manifest(manifest, status, now=None, **values):
    """A copy of ``manifest`` in its terminal state."""
    now = (now or utcnow()).isoformat()
    return dict(manifest, status=status, updated_at=now, finished_at=now,
                pid=None, **values)


def trim_fault(text):
    """The end of a tool's stderr, short enough to record and display."""
    text = text.strip()
    if len(text) > FAULT_LIMIT:
        text = '...' + text[-FAULT_LIMIT:]
    return text


def _remove(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _remove_empty(path):
    """Remove the job's log if nothing was said in it."""
    try:
        if os.path.getsize(path) == 0:
            os.unlink(path)
    except FileNotFoundError:
        pass


# Dumping.

class _HashingWriter:
    """Counts and hashes what gzip writes, on its way to the file."""

    def __init__(self, stream):
        self._stream = stream
        self._sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data):
        self._sha256.update(data)
        self.size += len(data)
        return self._stream.write(data)

    def flush(self):
        self._stream.flush()

    def hexdigest(self):
        return self._sha256.hexdigest()


def data_paths(directory, backup_id):
    """Every file a backup's data can be in, finished or not."""
    stem = os.path.join(directory, backup_id)
    paths = []
    for suffix in (SQL_SUFFIX, SQLITE_SUFFIX):
        paths += [stem + suffix, stem + suffix + PART_SUFFIX]
    paths.append(_sqlite_copy_path(stem + SQLITE_SUFFIX))
    return paths


def _sqlite_copy_path(data_path):
    # <id>.sqlite.part: the uncompressed copy, before it goes through gzip.
    return os.path.splitext(data_path)[0] + PART_SUFFIX


def write_dump(command, data_path, compression_level):
    """Write the compressed dump to ``data_path`` + ``.part``, fsynced.

    Returns ``(size in bytes, sha256 hex digest)`` of the compressed file.
    Raises :class:`DumpFailed`; the ``.part`` file may then hold a partial
    dump, the caller removes it.
    """
    part_path = data_path + PART_SUFFIX
    fd = os.open(part_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, 'wb') as raw:
        sink = _HashingWriter(raw)
        with gzip.GzipFile(fileobj=sink, mode='wb',
                           compresslevel=compression_level) as compressed:
            if command.kind == SQLITE:
                _copy_sqlite(command.sqlite_path,
                             _sqlite_copy_path(data_path), compressed)
            else:
                _stream_tool_output(command, os.path.dirname(data_path),
                                    compressed)
        raw.flush()
        os.fsync(raw.fileno())
    return sink.size, sink.hexdigest()


def _copy_sqlite(database_path, copy_path, out):
    """SQLite's online backup into a private copy, then through gzip."""
    try:
        # mode=ro: a missing file is an error, not a new empty database.
        source = sqlite3.connect(
            'file:%s?mode=ro' % urllib.parse.quote(database_path), uri=True)
        try:
            os.close(os.open(copy_path,
                             os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600))
            target = sqlite3.connect(copy_path)
            try:
                # One step: copying page by page restarts whenever another
                # connection writes, and may never finish on a busy file.
                source.backup(target)
            finally:
                target.close()
        finally:
            source.close()
        with open(copy_path, 'rb') as copy:
            shutil.copyfileobj(copy, out, _CHUNK)
    except sqlite3.Error as e:
        raise DumpFailed('cannot back up SQLite database %s: %s'
                         % (database_path, e))
    finally:
        _remove(copy_path)


def _stream_tool_output(command, workdir, out):
    """Run the dump tool, its stdout through ``out``; stderr to the fault."""
    argv = list(command.argv)
    pass_fds = ()
    option_file = None
    if command.option_file is not None:
        # A 0600 file no directory names (O_TMPFILE, or unlinked at once):
        # not even a SIGKILL can leave the password behind on disk.
        option_file = tempfile.TemporaryFile(dir=workdir)
        option_file.write(command.option_file.encode('utf-8'))
        option_file.flush()
        option_file.seek(0)
        # The tool wants it as its first argument.
        argv.insert(1, '--defaults-extra-file=/dev/fd/%d'
                    % option_file.fileno())
        pass_fds = (option_file.fileno(),)
    with tempfile.TemporaryFile() as errors:
        try:
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=errors, env=dict(os.environ, **command.env),
                pass_fds=pass_fds)
        except FileNotFoundError:
            raise DumpFailed('%s is not installed (not found on PATH)'
                             % argv[0])
        finally:
            if option_file is not None:
                option_file.close()
        try:
            with process.stdout:
                shutil.copyfileobj(process.stdout, out, _CHUNK)
            returncode = process.wait()
        except BaseException:
            process.kill()
            process.wait()
            raise
        if returncode != 0:
            errors.seek(0)
            message = trim_fault(errors.read().decode('utf-8', 'replace'))
            raise DumpFailed(message or '%s exited with status %d'
                             % (argv[0], returncode))


def run(manifest_path, manifest, orders):
    """Make the backup the manifest describes; record how it ended."""
    directory = os.path.dirname(manifest_path)
    try:
        command = dump_command(orders['url'])
        data_name = manifest['id'] + command.suffix
        data_path = os.path.join(directory, data_name)
        size, checksum = write_dump(command, data_path,
                                    orders['compression_level'])
        os.replace(data_path + PART_SUFFIX, data_path)
        fsync_directory(directory)
    except DumpFailed as e:
        result = finish_manifest(manifest, base.BackupStatus.FAILED,
                                 fault=e.reason)
    except JobStopped:
        result = finish_manifest(manifest, base.BackupStatus.FAILED,
                                 fault='the dump job was stopped (SIGTERM)')
    except Exception as e:
        traceback.print_exc()
        result = finish_manifest(manifest, base.BackupStatus.FAILED,
                                 fault='%s: %s' % (type(e).__name__, e))
    else:
        result = finish_manifest(manifest, base.BackupStatus.COMPLETED,
                                 file=data_name, size_bytes=size,
                                 sha256=checksum)
    if result['status'] != base.BackupStatus.COMPLETED:
        # No partial dump outlives a failure, nor a whole one it made.
        for path in data_paths(directory, manifest['id']):
            _remove(path)
    # Before the manifest, so that a finished backup is only its files.
    _remove_empty(os.path.join(directory, manifest['id'] + LOG_SUFFIX))
    write_manifest(manifest_path, result)
    return result


def receive_orders(stream):
    """The orders line, once the creator said ``start`` or went away.

    None if the orders never arrived whole.
    """
    line = stream.readline()
    try:
        orders = json.loads(line)
    except ValueError:
        return None
    # Either "start" or end of file (the creator died after recording the
    # manifest, or before): the manifest on disk decides which.
    stream.readline()
    return orders


def _stop(signum, frame):
    raise JobStopped()


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        sys.stderr.write('usage: python -m '
                         'dbaas_scheduler.backends.local_job MANIFEST\n')
        return 2
    manifest_path = args[0]
    os.umask(0o077)
    orders = receive_orders(sys.stdin.buffer)
    if orders is None:
        return 1
    manifest = read_manifest(manifest_path)
    if manifest is None or manifest.get('pid') != os.getpid():
        # Nobody recorded this backup: making it would make one nobody
        # can find, and the worker will ask for another.
        if manifest is None:
            _remove_empty(os.path.splitext(manifest_path)[0] + LOG_SUFFIX)
        return 0
    signal.signal(signal.SIGTERM, _stop)
    result = run(manifest_path, manifest, orders)
    return 0 if result['status'] == base.BackupStatus.COMPLETED else 1


if __name__ == '__main__':
    sys.exit(main())
