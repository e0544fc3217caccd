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
"""The embedded default's SQLite file shared by the threads of a process."""

import os
import threading
from unittest import mock

import fixtures
from oslo_config import cfg
from oslo_db.sqlalchemy import enginefacade
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.tests import base


class TestSQLiteFile(base.TestCase):

    def setUp(self):
        super().setUp()
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'state.sqlite')
        facade = enginefacade.transaction_context()
        facade.configure(connection='sqlite:///' + path)
        facade.append_on_engine_create(db_api._tune_sqlite)
        self.engine = facade.writer.get_engine()
        self.addCleanup(self.engine.dispose)
        with self.engine.begin() as connection:
            connection.exec_driver_sql('CREATE TABLE t (n INTEGER)')
            connection.exec_driver_sql('INSERT INTO t VALUES (0)')

    def test_every_transaction_takes_the_write_lock_first(self):
        begins = []
        sa.event.listen(
            self.engine, 'before_cursor_execute',
            lambda conn, cursor, statement, *args: begins.append(statement)
            if statement.startswith('BEGIN') else None)
        for _ in range(3):
            with self.engine.begin() as connection:
                connection.exec_driver_sql('SELECT n FROM t').all()
        self.assertEqual(['BEGIN IMMEDIATE'] * 3, begins)

    def test_a_read_then_write_waits_for_another_writer(self):
        # A transaction that reads, then writes, while another connection
        # writes: in a deferred transaction the write fails at once with
        # "database is locked"; begun IMMEDIATE, the other one waits.
        errors = []

        def other_writer():
            try:
                with self.engine.begin() as connection:
                    connection.exec_driver_sql('UPDATE t SET n = n + 10')
            except Exception as exc:
                errors.append(exc)

        with self.engine.begin() as connection:
            connection.exec_driver_sql('SELECT n FROM t').all()
            writer = threading.Thread(target=other_writer)
            writer.start()
            writer.join(0.5)
            connection.exec_driver_sql('UPDATE t SET n = n + 1')
        writer.join(30)
        self.assertEqual([], errors)
        with self.engine.begin() as connection:
            self.assertEqual(11, connection.exec_driver_sql(
                'SELECT n FROM t').scalar())

    def test_an_engine_made_without_oslo_db_is_tuned_too(self):
        # alembic's command line makes its own engine: _tune_sqlite alone
        # must give it WAL, the busy timeout and BEGIN IMMEDIATE, at every
        # transaction, not only the first.
        engine = sa.create_engine(self.engine.url)
        self.addCleanup(engine.dispose)
        db_api._tune_sqlite(engine)
        db_api._tune_sqlite(engine)
        begins = []
        sa.event.listen(
            engine, 'before_cursor_execute',
            lambda conn, cursor, statement, *args: begins.append(statement)
            if statement.startswith('BEGIN') else None)
        for _ in range(2):
            with engine.begin() as connection:
                connection.exec_driver_sql('UPDATE t SET n = n + 1')
        self.assertEqual(['BEGIN IMMEDIATE'] * 2, begins)
        with engine.connect() as connection:
            self.assertEqual(('wal', 30000), (
                connection.exec_driver_sql('PRAGMA journal_mode').scalar(),
                connection.exec_driver_sql('PRAGMA busy_timeout').scalar()))


class TestRacingWriters(base.TestCase):
    """Twenty threads that read, then write, on one SQLite file.

    As the all-in-one's API, engine and worker threads do, through
    :func:`db_api.configure` and the functions of ``db/api.py``.  Each
    transaction reads before it writes: begun deferred, it would fail with
    "database is locked" whenever another thread wrote in between, which
    oslo.db's own listener does unless ``_tune_sqlite`` makes every BEGIN
    take the write lock.
    """

    WRITERS = 20
    ROUNDS = 5

    def setUp(self):
        super().setUp()
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'state', 'dbaas_scheduler.sqlite')
        conf = cfg.ConfigOpts()
        dbaas_conf.register_opts(conf)
        conf([], project='dbaas-scheduler', default_config_files=[])
        conf.set_override('connection', 'sqlite:///' + path,
                          group='database')
        # The service's configuration, on a transaction context of this
        # test's own; db_api's functions are pointed at its engine.
        facade = enginefacade.transaction_context()
        with mock.patch.object(db_api, 'context_manager', facade):
            db_api.configure(conf)
        self.engine = facade.writer.get_engine()
        self.addCleanup(self.engine.dispose)
        migration.upgrade('head', engine=self.engine)
        self.addCleanup(db_api.context_manager.patch_factory(facade))

    def _write(self, writer, start, errors):
        ctx = context.get_admin_context()
        start.wait(30)
        for round_ in range(self.ROUNDS):
            try:
                with db_api.writer_transaction(ctx):
                    db_api.list_policies(ctx, project_id='racing')
                    db_api.create_policy(ctx, {
                        'name': 'writer-%d-%d' % (writer, round_),
                        'project_id': 'racing', 'user_id': 'user-a',
                        'instance_id': uuidutils.generate_uuid(),
                        'schedule_type': 'cron', 'schedule': '30 2 * * *',
                        'timezone': 'UTC', 'backup_params': {},
                        'enabled': False})
            except Exception as exc:
                errors.append('%s: %s' % (type(exc).__name__, exc))

    def test_no_database_is_locked(self):
        errors = []
        start = threading.Barrier(self.WRITERS)
        writers = [threading.Thread(target=self._write,
                                    args=(n, start, errors))
                   for n in range(self.WRITERS)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(120)
        self.assertEqual([], errors)
        ctx = context.get_admin_context()
        self.assertEqual(self.WRITERS * self.ROUNDS, len(
            db_api.list_policies(ctx, project_id='racing')))
