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
"""Writing one compressed dump, in the job process: a tool's or SQLite's.

The dump goes through gzip into ``<data>.part``, counted and hashed on its
way, and is fsynced; the job renames it into place.
"""

import gzip
import hashlib
import os
import shutil
import sqlite3
import subprocess
import tempfile
import urllib.parse

from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.backends.local import contents
from dbaas_scheduler.backends.local import files

# The longest fault text a manifest keeps: the end of the tool's stderr.
FAULT_LIMIT = 2000
_CHUNK = 1024 * 1024


class DumpFailed(Exception):
    """The dump did not produce a backup; ``reason`` says why."""

    def __init__(self, reason):
        super().__init__(reason)
        self.reason = reason


def trim_fault(text):
    """The end of a tool's stderr, short enough to record and display."""
    text = text.strip()
    if len(text) > FAULT_LIMIT:
        text = '...' + text[-FAULT_LIMIT:]
    return text


class _Tee:
    """Writes to the compressor, and to the counter of the dump's rows."""

    def __init__(self, out, counter):
        self._out = out
        self._counter = counter

    def write(self, data):
        self._counter.write(data)
        return self._out.write(data)


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


def write_dump(command, data_path, compression_level):
    """Write the compressed dump to ``data_path`` + ``.part``, fsynced.

    Returns ``(size in bytes, sha256 hex digest, {table: rows})``: the
    compressed file's, and what the dump holds (:mod:`.contents`).
    Raises :class:`DumpFailed`; the ``.part`` file may then hold a
    partial dump, the caller removes it.
    """
    part_path = data_path + files.PART_SUFFIX
    fd = os.open(part_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, 'wb') as raw:
        sink = _HashingWriter(raw)
        with gzip.GzipFile(fileobj=sink, mode='wb',
                           compresslevel=compression_level) as compressed:
            if command.kind == commands.SQLITE:
                tables = _copy_sqlite(command.sqlite_path,
                                      files.sqlite_copy_path(data_path),
                                      compressed)
            else:
                counter = contents.DumpCounter(command.kind)
                _stream_tool_output(command, os.path.dirname(data_path),
                                    _Tee(compressed, counter))
                counter.close()
                tables = counter.tables
        raw.flush()
        os.fsync(raw.fileno())
    return sink.size, sink.hexdigest(), tables


def _copy_sqlite(database_path, copy_path, out):
    """SQLite's online backup into a private copy, then through gzip.

    Returns the copy's ``{table: rows}``.
    """
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
        tables = contents.sqlite_counts(copy_path)
        with open(copy_path, 'rb') as copy:
            shutil.copyfileobj(copy, out, _CHUNK)
        return tables
    except sqlite3.Error as e:
        raise DumpFailed('cannot back up SQLite database %s: %s'
                         % (database_path, e))
    finally:
        files.remove(copy_path)


def tool_argv(command, workdir):
    """``(argv, pass_fds, option file or None)`` to run a client tool.

    The option file (MariaDB's password) is a 0600 file no directory
    names (O_TMPFILE, or unlinked at once): not even a SIGKILL can leave
    the password behind on disk.  The caller closes it.
    """
    argv = list(command.argv)
    if command.option_file is None:
        return argv, (), None
    option_file = tempfile.TemporaryFile(dir=workdir)
    option_file.write(command.option_file.encode('utf-8'))
    option_file.flush()
    option_file.seek(0)
    # The tool wants it as its first argument.
    argv.insert(1, '--defaults-extra-file=/dev/fd/%d' % option_file.fileno())
    return argv, (option_file.fileno(),), option_file


def _stream_tool_output(command, workdir, out):
    """Run the dump tool, its stdout through ``out``; stderr to the fault."""
    argv, pass_fds, option_file = tool_argv(command, workdir)
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
