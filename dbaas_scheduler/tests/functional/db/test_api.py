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
"""The database contract every backend must keep: microseconds, CAS, keys."""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler import context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler import exception
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

UTC = datetime.timezone.utc
DUE = datetime.datetime(2026, 11, 22, 2, 30, 15, 123456, tzinfo=UTC)


def _policy_values(**overrides):
    values = {
        'name': 'nightly', 'project_id': 'project-a', 'user_id': 'user-a',
        'instance_id': uuidutils.generate_uuid(), 'schedule_type': 'cron',
        'schedule': '30 2 * * *', 'timezone': 'Europe/Berlin',
        'next_execution_time': DUE,
        'backup_params': {'incremental': True, 'swift_container': 'backups'},
    }
    values.update(overrides)
    return values


class _DatabaseContract(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = context.get_admin_context()

    def test_microseconds_survive_a_round_trip(self):
        policy = db_api.create_policy(self.context, _policy_values())
        loaded = db_api.get_policy(self.context, policy.id)
        self.assertEqual(DUE, loaded.next_execution_time)
        self.assertEqual(123456, loaded.next_execution_time.microsecond)
        self.assertIs(UTC, loaded.next_execution_time.tzinfo)
        with self.engine.connect() as connection:
            raw = connection.execute(sa.text(
                'SELECT next_execution_time FROM backup_policy')).scalar()
        # Stored naive, in UTC (SQLite hands back the text it stored).
        self.assertIn('02:30:15.123456', str(raw))

    def test_compare_and_set_on_a_microsecond_timestamp(self):
        policy = db_api.create_policy(self.context, _policy_values())
        table = models.BackupPolicy.__table__
        later = DUE + datetime.timedelta(days=1)
        with self.engine.begin() as connection:
            matched = connection.execute(
                table.update()
                .where(table.c.id == policy.id)
                .where(table.c.next_execution_time == DUE)
                .values(next_execution_time=later)).rowcount
            self.assertEqual(1, matched)
            # The same CAS again finds the value moved on: no second fire.
            again = connection.execute(
                table.update()
                .where(table.c.id == policy.id)
                .where(table.c.next_execution_time == DUE)
                .values(next_execution_time=later)).rowcount
            self.assertEqual(0, again)
        self.assertEqual(later, db_api.get_policy(
            self.context, policy.id).next_execution_time)

    def test_other_zones_are_stored_as_utc(self):
        plus_two = datetime.timezone(datetime.timedelta(hours=2))
        local = datetime.datetime(2026, 11, 22, 4, 30, 15, 123456,
                                  tzinfo=plus_two)
        policy = db_api.create_policy(
            self.context, _policy_values(next_execution_time=local))
        self.assertEqual(DUE, db_api.get_policy(
            self.context, policy.id).next_execution_time)

    def test_json_parameters(self):
        policy = db_api.create_policy(self.context, _policy_values())
        self.assertEqual({'incremental': True, 'swift_container': 'backups'},
                         db_api.get_policy(self.context,
                                           policy.id).backup_params)

    def test_defaults(self):
        policy = db_api.get_policy(self.context, db_api.create_policy(
            self.context, _policy_values()).id)
        self.assertTrue(uuidutils.is_uuid_like(policy.id))
        self.assertTrue(policy.enabled)
        self.assertEqual('trove', policy.backend)
        self.assertEqual('skip', policy.overlap_policy)
        self.assertIsNone(policy.remaining_runs)
        self.assertIsNotNone(policy.created_at.tzinfo)

    def test_one_execution_per_slot(self):
        policy = db_api.create_policy(self.context, _policy_values())
        values = {'policy_id': policy.id, 'project_id': policy.project_id,
                  'instance_id': policy.instance_id, 'scheduled_at': DUE}
        first = db_api.create_execution(self.context, dict(values))
        self.assertEqual('PENDING', first.status)
        self.assertEqual(0, first.attempts)
        self.assertRaises(exception.ExecutionExists,
                          db_api.create_execution, self.context, dict(values))
        # The next microsecond is another slot.
        values['scheduled_at'] = DUE + datetime.timedelta(microseconds=1)
        db_api.create_execution(self.context, values)
        slots = [e.scheduled_at for e in
                 db_api.list_executions(self.context, policy_id=policy.id)]
        # Newest slot first, as every list of executions.
        self.assertEqual([DUE + datetime.timedelta(microseconds=1), DUE],
                         slots)

    def test_enabled_policy_needs_a_next_time(self):
        # oslo.db wraps the error on SQLite and PostgreSQL; MariaDB reports
        # a failed CHECK as an OperationalError, which oslo.db re-raises.
        self.assertRaises((db_exc.DBError, sa.exc.OperationalError),
                          db_api.create_policy, self.context,
                          _policy_values(next_execution_time=None))
        disabled = db_api.create_policy(
            self.context, _policy_values(next_execution_time=None,
                                         enabled=False))
        self.assertFalse(db_api.get_policy(self.context,
                                           disabled.id).enabled)

    def test_list_policies_filters_in_sql(self):
        def add(name, project_id, instance_id):
            return db_api.create_policy(self.context, _policy_values(
                name=name, project_id=project_id,
                instance_id=instance_id)).id

        b = add('b', 'project-a', 'instance-1')
        a = add('a', 'project-a', 'instance-1')
        other_instance = add('c', 'project-a', 'instance-2')
        other_project = add('d', 'project-b', 'instance-1')
        statements = []

        def record(conn, cursor, statement, parameters, context, many):
            statements.append(statement)

        sa.event.listen(self.engine, 'before_cursor_execute', record)
        self.addCleanup(sa.event.remove, self.engine,
                        'before_cursor_execute', record)

        def ids(**filters):
            return [p.id for p in db_api.list_policies(self.context,
                                                       **filters)]

        # Oldest first, as every list of policies.
        self.assertEqual([b, a, other_instance, other_project], ids())
        self.assertEqual([b, a, other_project],
                         ids(instance_id='instance-1'))
        self.assertEqual([b, a, other_instance],
                         ids(project_id='project-a'))
        self.assertEqual([b, a], ids(project_id='project-a',
                                     instance_id='instance-1'))
        self.assertEqual([], ids(instance_id='instance-3'))
        # The database filters: a Trove instance deleted must not read
        # every policy of the cloud.
        where = [s for s in statements if 'WHERE' in s]
        self.assertEqual(4, len(where), statements)
        self.assertIn('backup_policy.instance_id', where[0])
        self.assertIn('backup_policy.project_id', where[1])

    def test_not_found(self):
        self.assertRaises(exception.PolicyNotFound, db_api.get_policy,
                          self.context, uuidutils.generate_uuid())
        self.assertRaises(exception.ExecutionNotFound, db_api.get_execution,
                          self.context, uuidutils.generate_uuid())

    def test_services_run_at_read_committed(self):
        # A new engine, as the services create theirs: MariaDB and MySQL
        # get PostgreSQL's default, and the others are left alone.
        engine = sa.create_engine(self.engine.url)
        self.addCleanup(engine.dispose)
        db_api.use_read_committed(engine)
        with engine.connect() as connection:
            if self.DRIVER == 'mysql':
                # tx_isolation (MariaDB), transaction_isolation (MySQL 8).
                levels = dict(connection.execute(sa.text(
                    "SHOW SESSION VARIABLES WHERE Variable_name IN "
                    "('tx_isolation', 'transaction_isolation')")).all())
                self.assertEqual({'READ-COMMITTED'}, set(levels.values()))
            elif self.DRIVER == 'postgresql':
                self.assertEqual('READ COMMITTED', connection.execute(
                    sa.text('SHOW transaction_isolation')).scalar().upper())
        # Idempotent: one listener, however often it is applied.
        db_api.use_read_committed(engine)
        self.assertEqual(self.DRIVER == 'mysql', sa.event.contains(
            engine, 'connect', db_api._set_read_committed))


class TestDatabaseContractSQLite(_DatabaseContract, base.TestCase):
    DRIVER = 'sqlite'


class TestDatabaseContractMySQL(_DatabaseContract, base.TestCase):
    DRIVER = 'mysql'


class TestDatabaseContractPostgreSQL(_DatabaseContract, base.TestCase):
    DRIVER = 'postgresql'
