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

:class:`~dbaas_scheduler.backends.local.job_control.JobControl` starts
``python -m dbaas_scheduler.backends.local.job <manifest>`` in a session of
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
"""

import json
import os
import signal
import sys
import traceback

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.backends.local import dump
from dbaas_scheduler.backends.local import files
from dbaas_scheduler.backends.local import manifests

# The line after the orders that lets the job go.
START = b'start'


class JobStopped(Exception):
    """SIGTERM: give up, but clean up and record it first."""


def run(manifest_path, manifest, orders):
    """Make the backup the manifest describes; record how it ended."""
    directory = os.path.dirname(manifest_path)
    try:
        command = commands.dump_command(orders['url'])
        data_name = manifest['id'] + command.suffix
        data_path = os.path.join(directory, data_name)
        size, checksum, tables = dump.write_dump(
            command, data_path, orders['compression_level'])
        os.replace(data_path + files.PART_SUFFIX, data_path)
        files.fsync_directory(directory)
    except dump.DumpFailed as e:
        result = manifests.finish_manifest(
            manifest, base.BackupStatus.FAILED, fault=e.reason)
    except JobStopped:
        result = manifests.finish_manifest(
            manifest, base.BackupStatus.FAILED,
            fault='the dump job was stopped (SIGTERM)')
    except Exception as e:
        traceback.print_exc()
        result = manifests.finish_manifest(
            manifest, base.BackupStatus.FAILED,
            fault='%s: %s' % (type(e).__name__, e))
    else:
        result = manifests.finish_manifest(
            manifest, base.BackupStatus.COMPLETED, file=data_name,
            size_bytes=size, sha256=checksum, tables=tables)
    if result['status'] != base.BackupStatus.COMPLETED:
        # No partial dump outlives a failure, nor a whole one it made.
        for path in files.data_paths(directory, manifest['id']):
            files.remove(path)
    # Before the manifest, so that a finished backup is only its files.
    files.remove_empty(files.log_path(directory, manifest['id']))
    manifests.write_manifest(manifest_path, result)
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
                         'dbaas_scheduler.backends.local.job MANIFEST\n')
        return 2
    manifest_path = args[0]
    os.umask(0o077)
    orders = receive_orders(sys.stdin.buffer)
    if orders is None:
        return 1
    manifest = manifests.read_manifest(manifest_path)
    if manifest is None or manifest.get('pid') != os.getpid():
        # Nobody recorded this backup: making it would make one nobody
        # can find, and the worker will ask for another.
        if manifest is None:
            files.remove_empty(
                os.path.splitext(manifest_path)[0] + files.LOG_SUFFIX)
        return 0
    signal.signal(signal.SIGTERM, _stop)
    result = run(manifest_path, manifest, orders)
    return 0 if result['status'] == base.BackupStatus.COMPLETED else 1


if __name__ == '__main__':
    sys.exit(main())
