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
"""The worker against the real Trove: retention over backup chains."""

import datetime
import time

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import notifications
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import trove_fixtures
from dbaas_scheduler.worker import service as worker_service


class TestRetentionOnTrove(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'mysql'

    def setUp(self):
        super().setUp()
        self.trove = trove_fixtures.use_trove(self)
        self.trove.configure(self)
        # Retention deletes as it decides: no grace (its own tests are in
        # functional/db/test_retention_holds.py).
        self.flags(group='worker', retry_initial_delay=0.2,
                   retry_max_delay=1, max_attempts=10, retention_grace=0)
        self.addCleanup(loader.reset)
        self.addCleanup(notifications.reset)
        self.context = dbaas_context.get_admin_context()
        parts = worker_service.build_parts(self.conf,
                                           uuidutils.generate_uuid())
        self.addCleanup(parts.close)
        self.runner, self.poller = parts.runner, parts.poller
        self.instance_id = self.trove.create_instance()
        self.slot = timeutils.utcnow(True) - datetime.timedelta(days=30)

    def add_policy(self, name, **values):
        row = dict(name=name, project_id=self.trove.project_id,
                   instance_id=self.instance_id, schedule_type='cron',
                   schedule='30 2 * * *', timezone='UTC',
                   next_execution_time=timeutils.utcnow(True)
                   + datetime.timedelta(days=1))
        row.update(values)
        return db_api.create_policy(self.context, row)

    def run_once(self, policy):
        """One execution of ``policy``, to SUCCEEDED; its backup's id."""
        self.slot += datetime.timedelta(hours=1)
        execution = db_api.create_execution(self.context, dict(
            policy_id=policy.id, project_id=policy.project_id,
            instance_id=policy.instance_id, scheduled_at=self.slot,
            status='DISPATCHED'))
        self.assertEqual([execution.id],
                         self.runner.run(self.context, [execution.id]))
        deadline = time.monotonic() + 60
        while True:
            self.poller.run_pass(self.context)
            done = db_api.get_execution(self.context, execution.id)
            if done.status != 'RUNNING':
                break
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.5)
        self.assertEqual('SUCCEEDED', done.status, done.fault)
        self.trove.wait_instance_idle(self.instance_id)
        # Trove deletes in its task manager, after answering 202: wait
        # until what retention deleted is gone from its listing.
        deleted = {backup['id'] for backup in done.deleted_backups or ()}
        while deleted & set(self.trove_backups()):
            self.assertLess(time.monotonic(), deadline,
                            'Trove still lists backups retention deleted')
            time.sleep(0.2)
        return done

    def trove_backups(self):
        return {b['id']: b for b in self.trove.backups(self.instance_id)}

    def test_retention_never_deletes_another_policys_chain(self):
        # Issue 10: A's keep_last 1 deleted the parent of B's incremental
        # backup, and Trove deleted B's backup with it.
        full = self.add_policy('full', keep_last=1)
        incremental = self.add_policy(
            'incremental', keep_last=5,
            backup_params={'incremental': True, 'full_every': 100})
        # B's first backup is full (it starts B's chain); its next one
        # builds on the instance's latest backup: A's.
        b0 = self.run_once(incremental).backup_id
        a1 = self.run_once(full).backup_id
        b1 = self.run_once(incremental).backup_id
        a2 = self.run_once(full)
        backups = self.trove_backups()
        self.assertEqual(a1, backups[b1]['parent_id'])
        self.assertEqual({b0, a1, b1, a2.backup_id}, set(backups))
        self.assertFalse(a2.deleted_backups)
        # Once B no longer keeps that backup, A's old one may go.
        db_api.update_policy(self.context, incremental.id, {'keep_last': 1})
        b2 = self.run_once(incremental)
        self.assertEqual(a2.backup_id,
                         self.trove_backups()[b2.backup_id]['parent_id'])
        self.assertEqual({b0, b1}, {d['id'] for d in b2.deleted_backups})
        a3 = self.run_once(full)
        self.assertEqual({a3.backup_id, a2.backup_id, b2.backup_id},
                         set(self.trove_backups()))
        self.assertEqual([a1], [d['id'] for d in a3.deleted_backups])

    def test_incremental_chains_expire(self):
        # Issue 10: with incremental backups each is the parent of the
        # next, and keep_last never deleted anything.
        policy = self.add_policy(
            'chains', keep_last=2,
            backup_params={'incremental': True, 'full_every': 2})
        made = [self.run_once(policy) for _ in range(5)]
        ids = [execution.backup_id for execution in made]
        backups = self.trove_backups()
        # c3 (full), c4 (built on c3), c5 (full): c1 and c2 went together.
        self.assertEqual(set(ids[2:]), set(backups))
        self.assertIsNone(backups[ids[2]]['parent_id'])
        self.assertEqual(ids[2], backups[ids[3]]['parent_id'])
        self.assertIsNone(backups[ids[4]]['parent_id'])
        # The fourth run's retention deleted the first chain, as a unit.
        self.assertEqual([ids[0], ids[1]], [
            d['id'] for d in made[3].deleted_backups])
        self.assertEqual(ids[0], made[3].deleted_backups[1]['with'])
        self.assertFalse(made[4].deleted_backups)
