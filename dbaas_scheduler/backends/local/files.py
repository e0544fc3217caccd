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
"""The files of a local backup in its instance directory, and their care.

A backup ``<id>`` is ``<id>.json`` (its manifest), ``<id>.log`` (what its
job said, kept only if it said something) and, once COMPLETED, its data
``<id>.sql.gz`` or ``<id>.sqlite.gz``; while the job runs the data is
``<data>.part`` (and, for SQLite, an uncompressed copy ``<id>.sqlite.part``).
"""

import os

MANIFEST_SUFFIX = '.json'
LOG_SUFFIX = '.log'
PART_SUFFIX = '.part'
SQL_SUFFIX = '.sql.gz'
SQLITE_SUFFIX = '.sqlite.gz'


def manifest_path(directory, backup_id):
    return os.path.join(directory, backup_id + MANIFEST_SUFFIX)


def log_path(directory, backup_id):
    return os.path.join(directory, backup_id + LOG_SUFFIX)


def data_paths(directory, backup_id):
    """Every file a backup's data can be in, finished or not."""
    stem = os.path.join(directory, backup_id)
    paths = []
    for suffix in (SQL_SUFFIX, SQLITE_SUFFIX):
        paths += [stem + suffix, stem + suffix + PART_SUFFIX]
    paths.append(sqlite_copy_path(stem + SQLITE_SUFFIX))
    return paths


def sqlite_copy_path(data_path):
    """<id>.sqlite.part: the uncompressed copy, before it goes through gzip."""
    return os.path.splitext(data_path)[0] + PART_SUFFIX


def remove(path):
    """Remove a file; one already gone is no error."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def remove_empty(path):
    """Remove the job's log if nothing was said in it."""
    try:
        if os.path.getsize(path) == 0:
            os.unlink(path)
    except FileNotFoundError:
        pass


def fsync_directory(directory):
    """Make a rename in ``directory`` survive a power cut."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
