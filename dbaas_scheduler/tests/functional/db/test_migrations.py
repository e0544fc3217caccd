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
"""Migrations: empty to head, and models in sync, on every backend."""

import datetime

from alembic import script as alembic_script
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import test_migrations
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from dbaas_scheduler import cron
from dbaas_scheduler.db import migration
from dbaas_scheduler.db import models
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures


class _MigrationWalk(db_fixtures.DatabaseMixin):

    FIXTURE = db_fixtures.EmptyDatabase

    def test_walk_from_empty_to_head(self):
        self.assertIsNone(migration.version(self.engine))
        scripts = alembic_script.ScriptDirectory.from_config(
            migration._alembic_config())
        revisions = list(reversed(list(scripts.walk_revisions())))
        self.assertIsNone(revisions[0].down_revision)
        for revision in revisions:
            migration.upgrade(revision.revision, engine=self.engine)
            self.assertEqual(revision.revision,
                             migration.version(self.engine))
        self.assertEqual(migration.head(), migration.version(self.engine))
        tables = set(sa.inspect(self.engine).get_table_names())
        self.assertLessEqual(
            {'backup_policy', 'backup_execution', 'service',
             'alembic_version'}, tables)

    def test_hashed_schedules_get_resolved(self):
        # Rows from before resolved_schedule was filled in: the data
        # migration resolves hashed ones, keeps resolved ones (and their
        # run times), leaves the rest alone.
        migration.upgrade('6e8ddc62479a', engine=self.engine)
        rows = {
            'a1': ('cron', 'H H * * *', None),
            'a2': ('cron', 'H 2 * * *', '17 2 * * *'),
            'a3': ('cron', '0 2 * * *', None),
            'a4': ('interval', '3600', None),
            'a5': ('cron', 'H */61 * * *', None),
        }
        with self.engine.begin() as connection:
            for policy_id, (kind, text, resolved) in rows.items():
                connection.execute(sa.text(
                    "INSERT INTO backup_policy (id, name, project_id, "
                    "instance_id, backend, schedule_type, schedule, "
                    "timezone, enabled, overlap_policy, created_at, "
                    "resolved_schedule) VALUES (:id, 'n', 'p', 'i', "
                    "'trove', :kind, :text, 'UTC', :enabled, 'skip', "
                    ":created, :resolved)"), {
                        'id': policy_id, 'kind': kind, 'text': text,
                        'resolved': resolved, 'enabled': False,
                        'created': '2026-01-01 00:00:00'})
        migration.upgrade('head', engine=self.engine)
        with self.engine.connect() as connection:
            found = dict(connection.execute(sa.text(
                'SELECT id, resolved_schedule FROM backup_policy')).all())
        self.assertEqual({'a1': cron.resolve('H H * * *', 'a1'),
                          'a2': '17 2 * * *', 'a3': None, 'a4': None,
                          'a5': None}, found)

    def test_service_rows_get_a_process_identity(self):
        # Rows of processes started before the upgrade keep running
        # without one (nobody judges them); new rows record one.
        migration.upgrade('d3a8f1c26b47', engine=self.engine)
        row = {'host': 'h', 'binary': 'dbaas-scheduler-worker', 'pid': 12,
               'started_at': datetime.datetime(2026, 1, 1),
               'heartbeat_at': datetime.datetime(2026, 1, 1)}
        with self.engine.begin() as connection:
            connection.execute(self._service_table().insert(),
                               [dict(row, id='old')])
        migration.upgrade('head', engine=self.engine)
        columns = {column['name']: column for column in
                   sa.inspect(self.engine).get_columns('service')}
        self.assertTrue(columns['process_identity']['nullable'])
        identity = 'boot pid:[4026531836] 4242 123456'
        service = self._service_table()
        with self.engine.begin() as connection:
            connection.execute(service.insert(), [
                dict(row, id='new', process_identity=identity)])
            found = dict(connection.execute(
                sa.select(service.c.id, service.c.process_identity)).all())
        self.assertEqual({'old': None, 'new': identity}, found)

    def test_duplicate_names_get_renamed(self):
        # Before names were unique in a project: the oldest keeps its
        # name, the others become name-2, name-3 (skipping a name in use),
        # other projects and other names are left alone.
        migration.upgrade('f4b9c2e7a813', engine=self.engine)
        rows = [('d1', 'notes', 'p', '2026-01-03 00:00:00'),
                ('d2', 'notes', 'p', '2026-01-01 00:00:00'),
                ('d3', 'notes', 'p', '2026-01-02 00:00:00'),
                ('d4', 'notes-2', 'p', '2026-01-04 00:00:00'),
                ('d5', 'notes', 'q', '2026-01-05 00:00:00'),
                ('d6', 'orders', 'p', '2026-01-06 00:00:00')]
        with self.engine.begin() as connection:
            for policy_id, name, project_id, created in rows:
                connection.execute(sa.text(
                    "INSERT INTO backup_policy (id, name, project_id, "
                    "instance_id, backend, schedule_type, schedule, "
                    "timezone, enabled, overlap_policy, created_at) "
                    "VALUES (:id, :name, :project, 'i', 'trove', 'cron', "
                    "'0 2 * * *', 'UTC', :enabled, 'skip', :created)"), {
                        'id': policy_id, 'name': name, 'project': project_id,
                        'enabled': False, 'created': created})
        migration.upgrade('head', engine=self.engine)
        with self.engine.connect() as connection:
            found = dict(connection.execute(sa.text(
                'SELECT id, name FROM backup_policy')).all())
        self.assertEqual({'d2': 'notes', 'd3': 'notes-3', 'd1': 'notes-4',
                          'd4': 'notes-2', 'd5': 'notes', 'd6': 'orders'},
                         found)
        with self.engine.begin() as connection:
            self.assertRaises((sa.exc.IntegrityError,
                               db_exc.DBDuplicateEntry), connection.execute,
                              sa.text("UPDATE backup_policy SET name = "
                                      "'notes' WHERE id = 'd6'"))

    def _service_table(self):
        return sa.Table('service', sa.MetaData(), autoload_with=self.engine)

    def test_upgrade_twice_is_harmless(self):
        migration.upgrade('head', engine=self.engine)
        migration.upgrade('head', engine=self.engine)
        self.assertEqual(migration.head(), migration.version(self.engine))


class _ModelsMigrationsSync(db_fixtures.DatabaseMixin,
                            test_migrations.ModelsMigrationsSync):

    FIXTURE = db_fixtures.EmptyDatabase

    def db_sync(self, engine):
        migration.upgrade('head', engine=engine)

    def get_engine(self):
        return self.engine

    def get_metadata(self):
        return models.Base.metadata

    def include_object(self, object_, name, type_, reflected, compare_to):
        # alembic's own bookkeeping table is not one of our models.
        return not (type_ == 'table' and name == 'alembic_version')

    def compare_type(self, ctxt, insp_col, meta_col, insp_type, meta_type):
        # alembic does not compare fractional-second precision, and a
        # MariaDB DATETIME without it silently drops microseconds.
        if isinstance(insp_type, mysql.DATETIME):
            expected = meta_type.dialect_impl(ctxt.dialect)
            if getattr(expected, 'fsp', None) != insp_type.fsp:
                return True
        return super().compare_type(ctxt, insp_col, meta_col, insp_type,
                                    meta_type)


class TestMigrationWalkSQLite(_MigrationWalk, base.TestCase):
    DRIVER = 'sqlite'


class TestMigrationWalkMySQL(_MigrationWalk, base.TestCase):
    DRIVER = 'mysql'


class TestMigrationWalkPostgreSQL(_MigrationWalk, base.TestCase):
    DRIVER = 'postgresql'


class TestModelsSyncSQLite(_ModelsMigrationsSync, base.TestCase):
    DRIVER = 'sqlite'


class TestModelsSyncMySQL(_ModelsMigrationsSync, base.TestCase):
    DRIVER = 'mysql'


class TestModelsSyncPostgreSQL(_ModelsMigrationsSync, base.TestCase):
    DRIVER = 'postgresql'


class TestPartialIndexesPostgreSQL(db_fixtures.DatabaseMixin,
                                   base.TestCase):
    """The mostly-NULL columns' indexes hold only the rows that set them."""

    DRIVER = 'postgresql'
    FIXTURE = db_fixtures.EmptyDatabase

    PARTIAL = {
        'ix_backup_policy_verify_every': 'verify_every',
        'ix_backup_policy_verify_next_at': 'verify_next_at',
        'ix_backup_policy_protection_check_at': 'protection_check_at',
        'ix_backup_execution_owner_status': 'owner',
        'ix_backup_execution_finished_at_stray_deleted_at': 'finished_at',
        'ix_backup_execution_backup_state_backup_delete_after':
            'backup_state',
    }

    def _definitions(self):
        with self.engine.connect() as connection:
            return dict(connection.execute(sa.text(
                "SELECT indexname, indexdef FROM pg_indexes "
                "WHERE tablename IN ('backup_policy', 'backup_execution')"
            )).all())

    def test_partial_after_upgrade(self):
        migration.upgrade('c4d7e9a1f602', engine=self.engine)
        before = self._definitions()
        for name in self.PARTIAL:
            self.assertNotIn(' WHERE ', before[name])
        migration.upgrade('head', engine=self.engine)
        after = self._definitions()
        for name, column in self.PARTIAL.items():
            self.assertIn('WHERE (%s IS NOT NULL)' % column, after[name])
        # The engine's scan and the unique fences index every row.
        for name in ('ix_backup_policy_enabled_next_execution_time',
                     'uniq_backup_execution0policy_id0scheduled_at',
                     'ix_backup_execution_status_lease_expires_at'):
            self.assertNotIn(' WHERE ', after[name])

    def test_queries_on_the_columns_use_them(self):
        # A row with the column NULL has no entry; a lookup by a value of
        # the column (which implies it is set) is answered from the index.
        migration.upgrade('head', engine=self.engine)
        with self.engine.begin() as connection:
            connection.execute(sa.text('SET LOCAL enable_seqscan = off'))
            plans = {}
            for name, query in (
                    ('ix_backup_policy_verify_next_at',
                     'SELECT id FROM backup_policy '
                     'WHERE verify_next_at <= now()'),
                    ('ix_backup_policy_protection_check_at',
                     'SELECT id FROM backup_policy '
                     'WHERE protection_check_at <= now() '
                     'ORDER BY protection_check_at'),
                    ('ix_backup_execution_owner_status',
                     "SELECT id FROM backup_execution "
                     "WHERE owner = 'w' AND status = 'RUNNING'"),
                    ('ix_backup_execution_backup_state_backup_delete_after',
                     "SELECT id FROM backup_execution "
                     "WHERE backup_state = 'expiring' "
                     "AND backup_delete_after <= now()"),
                    ('ix_backup_execution_finished_at_stray_deleted_at',
                     'SELECT id FROM backup_execution '
                     'WHERE finished_at >= now()')):
                plans[name] = '\n'.join(row[0] for row in connection.execute(
                    sa.text('EXPLAIN ' + query)))
        for name, plan in plans.items():
            self.assertIn(name, plan)
