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
"""Verifying a local backup in a scratch database, deleted afterwards.

The scratch target is named after the verification
(:func:`dbaas_scheduler.backends.base.scratch_name`): a database of that
name on the source's server (PostgreSQL, MariaDB; the configured user
needs the right to create databases), or ``<name>.sqlite`` in ``[local_
backend] restore_dir``.  The service only ever deletes a name it recorded
on a verification before making it.
"""

import os

import sqlalchemy as sa
from sqlalchemy.engine import url as sa_url

from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.backends.local import contents
from dbaas_scheduler.backends.local import files
from dbaas_scheduler.backends.local import restore as local_restore


def scratch_path(restore_dir, scratch):
    return os.path.join(os.path.abspath(os.path.expanduser(restore_dir)),
                        scratch + '.sqlite')


def scratch_url(source_url, scratch):
    """The URL of the scratch database beside ``source_url``'s."""
    return sa_url.make_url(source_url).set(database=scratch).render_as_string(
        hide_password=False)


def _server(source_url):
    engine = sa.create_engine(source_url, poolclass=sa.pool.NullPool,
                              isolation_level='AUTOCOMMIT')
    return engine


def _quoted(engine, scratch):
    # The name is ours (letters, digits, "_"); quoted all the same.
    return engine.dialect.identifier_preparer.quote(scratch)


def create_database(source_url, scratch):
    engine = _server(source_url)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text('CREATE DATABASE %s'
                                       % _quoted(engine, scratch)))
    finally:
        engine.dispose()


def drop_database(source_url, scratch):
    """Drop the scratch database if it exists (idempotent)."""
    engine = _server(source_url)
    try:
        with engine.connect() as connection:
            force = ''
            if (engine.dialect.name == 'postgresql'
                    and engine.dialect.server_version_info >= (13,)):
                # A check's session left behind must not keep it.
                force = ' WITH (FORCE)'
            connection.execute(sa.text('DROP DATABASE IF EXISTS %s%s' % (
                _quoted(engine, scratch), force)))
    finally:
        engine.dispose()


def run_check(url, check, timeout):
    """Run the user's read-only SQL check; None, or why it failed."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as connection:
            name = engine.dialect.name
            if name == 'postgresql':
                connection.execute(sa.text(
                    'SET TRANSACTION READ ONLY'))
                connection.execute(sa.text(
                    'SET LOCAL statement_timeout = %d' % (timeout * 1000)))
            elif name == 'mysql':
                connection.exec_driver_sql(
                    'SET SESSION max_statement_time = %d' % timeout)
                connection.commit()
                connection.exec_driver_sql('START TRANSACTION READ ONLY')
            else:
                connection.exec_driver_sql('PRAGMA query_only = ON')
            try:
                row = connection.exec_driver_sql(check['sql']).first()
            except sa.exc.DBAPIError as e:
                return 'the SQL check failed: %s' % str(
                    e.orig).splitlines()[0][:300]
            finally:
                connection.rollback()
    finally:
        engine.dispose()
    found = None if row is None else row[0]
    expected = check.get('expected')
    if (None if found is None else str(found)) != (
            None if expected is None else str(expected)):
        return ('the SQL check returned %r, %r was expected'
                % (None if found is None else str(found), expected))
    return None


def verify(source_url, data_path, manifest, scratch, restore_dir, check,
           check_timeout, workdir):
    """Restore into the scratch target, check, delete it; None or a reason.

    Raises :class:`~.restore.RestoreFailed` when the backup cannot be
    restored at all (its reason is the verification's).
    """
    backup_id = manifest.get('id')
    local_restore.check_backup_file(data_path, manifest)
    kind = manifest.get('kind')
    if kind == commands.SQLITE:
        path = scratch_path(restore_dir, scratch)
        url = 'sqlite:///' + path
        try:
            local_restore.load_sqlite(data_path, path, backup_id)
            return _checks(url, manifest, check, check_timeout)
        finally:
            files.remove(path)
    url = scratch_url(source_url, scratch)
    # A scratch database left by a worker that died is replaced.
    drop_database(source_url, scratch)
    create_database(source_url, scratch)
    try:
        local_restore.load_sql(local_restore.load_command(url), data_path,
                               backup_id, workdir)
        return _checks(url, manifest, check, check_timeout)
    finally:
        drop_database(source_url, scratch)


def _checks(url, manifest, check, check_timeout):
    recorded = manifest.get('tables')
    if recorded is not None:
        problem = contents.differences(recorded,
                                       contents.table_counts(url))
        if problem:
            return 'the restored database differs from the backup: %s' % (
                problem)
    if check and check.get('sql'):
        return run_check(url, check, check_timeout)
    return None


def delete_scratch(source_url, restore_dir, scratch):
    """Delete the scratch target ``scratch`` wherever it may be."""
    files.remove(scratch_path(restore_dir, scratch))
    if source_url is not None and commands.database_kind(
            commands.parse_url(source_url)) != commands.SQLITE:
        drop_database(source_url, scratch)
