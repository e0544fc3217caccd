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
"""Verifications of Trove backups against the real Trove API (fake mode).

Each verification restores a real Trove backup into a new scratch
instance through Trove's API, waits for it and deletes it; the worker's
runner records the outcome in the service's database (MariaDB).
"""

import datetime
import time

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.backends.trove import scratch as trove_scratch
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler.db import verifications as db_verifications
from dbaas_scheduler import notifications
from dbaas_scheduler import schedule
from dbaas_scheduler.testing import trove_api
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import trove_fixtures
from dbaas_scheduler.worker import verification


class TestVerificationOnTrove(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'mysql'

    def setUp(self):
        super().setUp()
        self.trove = trove_fixtures.use_trove(self)
        self.trove.configure(self)
        self.flags(group='worker', retry_initial_delay=0.2,
                   retry_max_delay=1, max_attempts=3)
        self.patch(trove_scratch, 'POLL', 0.5)
        loader.reset()
        self.addCleanup(loader.reset)
        self.addCleanup(notifications.reset)
        self.context = dbaas_context.get_admin_context()
        self.instance_id = self.trove.create_instance()
        now = timeutils.utcnow(True)
        self.policy = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self),
            project_id=self.trove.project_id, instance_id=self.instance_id,
            backend='trove', schedule_type='cron', schedule='30 2 * * *',
            timezone='UTC', enabled=False, paused_reason='created paused',
            verify_every=1, rpo=86400, effective_rpo=86400,
            last_success_at=now, protection='ok',
            protected_until=now + datetime.timedelta(days=1)))
        self.dispatcher = verification.RestoreDispatcher(
            self.conf, uuidutils.generate_uuid())

    def backup(self):
        """A COMPLETED backup of the instance, made through Trove."""
        backup = self.trove.create_backup(self.instance_id)
        self.trove.wait_backup(backup['id'])
        self.trove.wait_instance_idle(self.instance_id)
        return backup['id']

    def succeeded(self, backup_id):
        """A succeeded execution of the policy, and its verification."""
        at = timeutils.utcnow(True) - datetime.timedelta(minutes=5)
        execution = db_api.create_execution(self.context, dict(
            policy_id=self.policy.id, project_id=self.policy.project_id,
            instance_id=self.instance_id, status='SUCCEEDED',
            backup_id=backup_id, scheduled_at=at, started_at=at,
            finished_at=at))
        restore_id, = db_verifications.create_due_verifications(
            self.context, timeutils.utcnow(True), schedule.next_verify_slot)
        return execution, restore_id

    def named(self, name):
        return [instance for instance in self.instances()
                if instance['name'] == name]

    def instances(self):
        return self.trove.request('GET', 'instances?limit=500')[1][
            'instances']

    def gone(self, instance_id):
        try:
            self.trove.instance(instance_id)
        except trove_api.TroveError as e:
            if e.status == 404:
                return True
            raise
        return False

    def start_restore(self, name, backup_id):
        """A new instance from the backup, as a verifier asks for one."""
        return self.trove.request('POST', 'instances', {'instance': {
            'name': name, 'flavorRef': '7', 'volume': {'size': 1},
            'datastore': trove_api.DATASTORE,
            'restorePoint': {'backupRef': backup_id}}})[1]['instance']['id']

    def test_a_good_backup_passes_and_leaves_no_instance(self):
        execution, restore_id = self.succeeded(self.backup())
        before = {instance['id'] for instance in self.instances()}
        asked = []
        send = loader.get_backend(self.conf, 'trove')._client._send

        def recorded(policy, method, path, action, **kwargs):
            if (method, path) == ('POST', 'instances'):
                asked.append(kwargs['json']['instance'])
            return send(policy, method, path, action, **kwargs)

        self.patch(loader.get_backend(self.conf, 'trove')._client, '_send',
                   recorded)
        self.assertEqual('passed', self.dispatcher.run(self.context,
                                                       restore_id))
        scratch = backends.scratch_name(restore_id)
        # One scratch instance: the source's flavor, the smallest volume
        # that holds the backup, the backup's datastore, the service's name.
        self.assertEqual([{
            'name': scratch, 'flavorRef': '7', 'volume': {'size': 1},
            'datastore': trove_api.DATASTORE,
            'restorePoint': {'backupRef': execution.backup_id}}], asked)
        done = db_api.get_execution(self.context, execution.id)
        self.assertEqual('passed', done.verify_result)
        self.assertIsNone(done.verify_reason)
        self.assertIsNotNone(done.verified_at)
        self.assertGreater(done.verify_duration, 0.0)
        restore = db_restores.get_restore(self.context, restore_id)
        self.assertEqual(('SUCCEEDED', scratch),
                         (restore.status, restore.target_id))
        self.assertIsNotNone(restore.scratch_deleted_at)
        self.assertEqual([], self.named(scratch))
        self.assertEqual(before, {i['id'] for i in self.instances()})
        self.assertEqual('ACTIVE',
                         self.trove.instance(self.instance_id)['status'])
        policy = db_api.get_policy(self.context, self.policy.id)
        self.assertFalse(policy.verify_failing)
        self.assertEqual(execution.id, db_verifications.newest_verified(
            self.context, self.policy.id).id)

    def test_a_restore_trove_fails_puts_the_policy_at_risk(self):
        # Trove's fake Cinder fails every volume of 9 GB
        # (trove/tests/fakes/nova.py): Trove itself puts the new instance
        # in ERROR, as a restore that fails in a real cloud does.
        self.patch(trove_scratch, 'volume_size', lambda backup, source: 9)
        execution, restore_id = self.succeeded(self.backup())
        self.assertEqual('failed', self.dispatcher.run(self.context,
                                                       restore_id))
        done = db_api.get_execution(self.context, execution.id)
        self.assertEqual('failed', done.verify_result)
        self.assertIn('the backup did not restore: its scratch instance',
                      done.verify_reason)
        self.assertIn('is ERROR in Trove', done.verify_reason)
        policy = db_api.get_policy(self.context, self.policy.id)
        self.assertTrue(policy.verify_failing)
        self.assertEqual('at_risk', policy.protection)
        self.assertIsNone(db_verifications.newest_verified(
            self.context, self.policy.id))
        # The failed instance is deleted too.
        restore = db_restores.get_restore(self.context, restore_id)
        self.assertIsNotNone(restore.scratch_deleted_at)
        self.assertEqual([], self.named(restore.target_id))

    def test_a_backup_trove_does_not_have_is_cancelled_clearly(self):
        # A backup gone from Trove (its owner deleted it there, or
        # retention did meanwhile) has nothing left to verify: the
        # verification is cancelled, saying why, and the policy is not
        # put at risk by a backup nobody can restore any more.
        missing = uuidutils.generate_uuid()
        execution, restore_id = self.succeeded(missing)
        self.assertEqual('cancelled', self.dispatcher.run(self.context,
                                                          restore_id))
        restore = db_restores.get_restore(self.context, restore_id)
        self.assertEqual('CANCELLED', restore.status)
        self.assertIn('backup %s was deleted' % missing,
                      restore.status_reason)
        self.assertIn('trove backend: backup %s does not exist' % missing,
                      restore.status_reason)
        done = db_api.get_execution(self.context, execution.id)
        self.assertIsNone(done.verify_result)
        self.assertNotEqual('at_risk', db_api.get_policy(
            self.context, self.policy.id).protection)

    def test_a_dead_verifiers_instance_is_replaced_then_deleted(self):
        execution, restore_id = self.succeeded(self.backup())
        scratch = backends.scratch_name(restore_id)
        # A worker claimed it, recorded the name, asked Trove for the
        # instance and died: its lease ran out.
        claim = uuidutils.generate_uuid()
        self.assertTrue(db_verifications.claim_verification(
            self.context, restore_id, 'dead-worker', claim,
            timeutils.utcnow(True) - datetime.timedelta(hours=1), 60, 2, 1))
        self.assertTrue(db_restores.record_restore_target(
            self.context, restore_id, claim, scratch))
        left = self.start_restore(scratch, execution.backup_id)
        # The engine's sweep casts it again; another worker resumes it.
        self.assertEqual('passed', self.dispatcher.run(self.context,
                                                       restore_id))
        self.trove.wait(lambda: self.gone(left), what='instance %s gone'
                        % left)
        self.assertEqual([], self.named(scratch))
        restore = db_restores.get_restore(self.context, restore_id)
        self.assertEqual(2, restore.attempts)
        self.assertIsNotNone(restore.scratch_deleted_at)

    def test_the_reconciler_deletes_only_the_services_scratch(self):
        backup_id = self.backup()
        execution, restore_id = self.succeeded(backup_id)
        scratch = backends.scratch_name(restore_id)
        claim = uuidutils.generate_uuid()
        self.assertTrue(db_verifications.claim_verification(
            self.context, restore_id, 'w', claim, timeutils.utcnow(True),
            300, 2, 1))
        self.assertTrue(db_restores.record_restore_target(
            self.context, restore_id, claim, scratch))
        left = self.start_restore(scratch, backup_id)
        # Named like a scratch instance, but by no verification of the
        # service; and the user's own restore of the same backup.
        stranger = self.start_restore(
            backends.scratch_name(uuidutils.generate_uuid()), backup_id)
        users = self.start_restore('my-copy', backup_id)
        for instance_id in (left, stranger, users):
            self.trove.wait_instance(instance_id)
        # Running: its verifier replaces it, not the reconciler.
        self.assertEqual(0, verification.delete_leftover_scratch(
            self.conf, self.context))
        self.assertEqual('ACTIVE', self.trove.instance(left)['status'])
        # Finished, but its verifier could not delete the instance.
        recorded, _ = db_verifications.finish_verification(
            self.context, restore_id, claim, timeutils.utcnow(True), None,
            False)
        self.assertTrue(recorded)
        deadline = time.monotonic() + 60
        while not verification.delete_leftover_scratch(self.conf,
                                                       self.context):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.5)
        self.assertTrue(self.gone(left))
        self.assertIsNotNone(db_restores.get_restore(
            self.context, restore_id).scratch_deleted_at)
        self.assertEqual(0, verification.delete_leftover_scratch(
            self.conf, self.context))
        for instance_id in (stranger, users, self.instance_id):
            self.assertEqual('ACTIVE',
                             self.trove.instance(instance_id)['status'])

    def test_verify_check_is_reported_not_run(self):
        # A policy from before the API refused verify_check on Trove.
        db_api.update_policy(self.context, self.policy.id, {
            'verify_check': {'sql': 'SELECT 1', 'expected': 1}})
        execution, restore_id = self.succeeded(self.backup())
        self.assertEqual('failed', self.dispatcher.run(self.context,
                                                       restore_id))
        done = db_api.get_execution(self.context, execution.id)
        self.assertEqual(trove_scratch.CHECK_NOT_RUN, done.verify_reason)
        self.assertEqual([], self.named(backends.scratch_name(restore_id)))
