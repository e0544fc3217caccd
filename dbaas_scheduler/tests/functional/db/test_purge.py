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
"""Purging the execution history: what goes, what stays, in batches."""

import datetime
import os
import subprocess
import sys

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler import context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.db import purge as db_purge
from dbaas_scheduler.engine import service as engine_service
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

NOW = timeutils.utcnow(True).replace(microsecond=0)
DAY = datetime.timedelta(days=1)


def _days_ago(days):
    return NOW - days * DAY


class _Purge(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = context.get_admin_context()

    def policy(self, **values):
        instance_id = uuidutils.generate_uuid()
        values = dict({
            'name': 'p-%s' % instance_id, 'project_id': 'project-a',
            'instance_id': instance_id,
            'schedule_type': 'cron', 'schedule': '0 * * * *',
            'next_execution_time': NOW + DAY}, **values)
        return db_api.create_policy(self.context, values)

    def execution(self, policy_id, instance_id, days, status='FAILED',
                  **values):
        values = dict({
            'policy_id': policy_id, 'project_id': 'project-a',
            'instance_id': instance_id, 'scheduled_at': _days_ago(days),
            'status': status, 'created_at': _days_ago(days),
            'finished_at': (_days_ago(days) + datetime.timedelta(minutes=5)
                            if status in ('SUCCEEDED', 'FAILED', 'SKIPPED')
                            else None)}, **values)
        return db_api.create_execution(self.context, values).id

    def remaining(self):
        with self.engine.connect() as connection:
            return set(connection.execute(
                sa.select(models.BackupExecution.id)).scalars())

    def _history(self):
        """Executions of three policies; returns (all ids, those to go)."""
        ids = {}
        # A: failures, an old newest one, and one its policy points at.
        a = self.policy()
        inst = a.instance_id
        ids['a_old'] = self.execution(a.id, inst, 30)
        ids['a_last'] = self.execution(a.id, inst, 20, 'SKIPPED')
        ids['a_newest'] = self.execution(a.id, inst, 10)
        db_api.update_policy(self.context, a.id,
                             {'last_execution_id': ids['a_last']})
        ids['a_running'] = self.execution(a.id, inst, 40, 'RUNNING')
        ids['a_pending'] = self.execution(a.id, inst, 41, 'PENDING')
        # B, a deleted policy's successes: one backup deleted by retention
        # (recorded on the next success), one still kept.
        b = uuidutils.generate_uuid()
        inst_b = uuidutils.generate_uuid()
        ids['b_gone'] = self.execution(b, inst_b, 30, 'SUCCEEDED',
                                       backup_id='bk-1')
        ids['b_kept'] = self.execution(
            b, inst_b, 29, 'SUCCEEDED', backup_id='bk-2',
            deleted_backups=[{'id': 'bk-1', 'created_at': 'x'}])
        ids['b_newest'] = self.execution(b, inst_b, 28, 'SUCCEEDED',
                                         backup_id='bk-3')
        # C: c2's backup is deleted, but c2 records that c1's was, and c1
        # stays (last_execution_id): c2 must stay to say so.
        c = self.policy()
        inst_c = c.instance_id
        ids['c1'] = self.execution(c.id, inst_c, 30, 'SUCCEEDED',
                                   backup_id='c-bk1')
        ids['c2'] = self.execution(
            c.id, inst_c, 20, 'SUCCEEDED', backup_id='c-bk2',
            deleted_backups=[{'id': 'c-bk1', 'created_at': 'x'}])
        ids['c3'] = self.execution(
            c.id, inst_c, 10, 'SUCCEEDED', backup_id='c-bk3',
            deleted_backups=[{'id': 'c-bk2', 'created_at': 'x'}])
        ids['c_recent'] = self.execution(c.id, inst_c, 1, 'FAILED',
                                         scheduled_at=_days_ago(15))
        db_api.update_policy(self.context, c.id,
                             {'last_execution_id': ids['c1']})
        return ids, {ids['a_old'], ids['b_gone']}

    def test_purge_keeps_what_is_referenced(self):
        ids, going = self._history()
        for batch_size in (1, 2, 1000):
            # A dry run deletes nothing, whatever the batch size.
            result = db_purge.purge_executions(
                self.context, _days_ago(5), batch_size=batch_size,
                dry_run=True)
            self.assertEqual(len(going), result.deleted)
            self.assertEqual(set(ids.values()), self.remaining())
        seen = []
        result = db_purge.purge_executions(
            self.context, _days_ago(5), batch_size=2,
            on_batch=lambda rows: seen.extend(row.id for row in rows))
        self.assertEqual(sorted(going), sorted(seen))
        self.assertEqual(len(going), result.deleted)
        self.assertEqual(set(ids.values()) - going, self.remaining())
        # Old finished ones looked at: all but the running, pending and
        # recent ones.
        self.assertEqual(len(ids) - 3, result.scanned)
        self.assertEqual({'newest': 3, 'last_execution': 2,
                          'kept_backup': 1, 'deletion_record': 1},
                         result.kept)
        self.assertEqual({'FAILED': 1, 'SUCCEEDED': 1},
                         result.deleted_by_status)
        self.assertTrue(result.complete)
        self.assertGreater(result.longest_batch, 0)

        # Once c1 is no longer referenced, c1 and then c2 can go.
        db_api.update_policy(self.context, self.get_policy_of(ids['c1']),
                             {'last_execution_id': ids['c3']})
        db_purge.purge_executions(self.context, _days_ago(5))
        self.assertNotIn(ids['c1'], self.remaining())
        db_purge.purge_executions(self.context, _days_ago(5))
        self.assertNotIn(ids['c2'], self.remaining())
        self.assertIn(ids['c3'], self.remaining())

    def get_policy_of(self, execution_id):
        return db_api.get_execution(self.context, execution_id).policy_id

    def test_batches_and_markers(self):
        policy = self.policy()
        made = [self.execution(policy.id, policy.instance_id, 10 + n)
                for n in range(9)]
        result = db_purge.purge_executions(
            self.context, _days_ago(5), batch_size=4, max_batches=1)
        self.assertFalse(result.complete)
        self.assertEqual(1, result.batches)
        total = result.deleted
        while not result.complete:
            result = db_purge.purge_executions(
                self.context, _days_ago(5), batch_size=4, max_batches=1,
                marker=result.marker)
            total += result.deleted
        # All but the newest (made[0], 10 days ago).
        self.assertEqual(8, total)
        self.assertEqual({made[0]}, self.remaining())

    def test_engine_purge(self):
        policy = self.policy()
        made = [self.execution(policy.id, policy.instance_id, 10 + n)
                for n in range(5)]
        recent = self.execution(policy.id, policy.instance_id, 2)
        service = engine_service.EngineService(self.conf)
        # Off by default.
        self.assertEqual(3600, service.purge_once(self.context))
        self.assertEqual(set(made) | {recent}, self.remaining())
        self.flags(group='engine', execution_purge_after_days=7,
                   execution_purge_batch_size=2,
                   execution_purge_interval=600)
        sleeps = []
        while not sleeps or sleeps[-1] != 600:
            sleeps.append(service.purge_once(self.context))
        self.assertEqual([engine_service.PURGE_BATCH_PAUSE] * 2 + [600],
                         sleeps)
        self.assertEqual({recent}, self.remaining())

    def test_manage_purge(self):
        if self.DRIVER == 'sqlite':
            self.skipTest('an in-memory database: another process cannot '
                          'see it')
        ids, going = self._history()
        state = self.useFixture(fixtures.TempDir()).path
        config = os.path.join(state, 'manage.conf')
        with open(config, 'w') as stream:
            stream.write('[database]\nconnection = %s\n' % (
                self.engine.url.render_as_string(hide_password=False)))

        def manage(*args):
            return subprocess.run(
                [os.path.join(os.path.dirname(sys.executable),
                              'dbaas-scheduler-manage'),
                 '--config-file', config, 'execution', 'purge'] + list(args),
                capture_output=True, text=True, timeout=120)

        result = manage('--older-than', '5', '--dry-run', '--verbose')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('Would delete 2 of 9 finished executions',
                      result.stdout)
        for execution_id in going:
            self.assertIn('Would delete execution %s' % execution_id,
                          result.stdout)
        self.assertEqual(set(ids.values()), self.remaining())

        before = _days_ago(5).replace(tzinfo=None).isoformat()
        result = manage('--before', before, '--batch-size', '3')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('Deleted 2 of 9', result.stdout)
        self.assertRegex(result.stdout, r'newest execution of its policy'
                                        r'\s*\|\s*3')
        self.assertEqual(set(ids.values()) - going, self.remaining())

        result = manage('--before', 'yesterday')
        self.assertEqual(1, result.returncode)
        self.assertIn('--before must be an ISO 8601', result.stderr)
        result = manage('--older-than', '0')
        self.assertEqual(2, result.returncode)


class TestPurgeSQLite(_Purge, base.TestCase):
    DRIVER = 'sqlite'


class TestPurgeMySQL(_Purge, base.TestCase):
    DRIVER = 'mysql'


class TestPurgePostgreSQL(_Purge, base.TestCase):
    DRIVER = 'postgresql'
