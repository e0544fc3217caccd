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
"""What the trove backend must do against any Trove: the contract tests.

Written once, run against the real Trove API (tests/trove, ``tox -e
trove``) and against ``dbaas_scheduler.testing.fake_trove`` (the
functional tests, which add the faults real Trove cannot be made to
produce).  A test case mixes :class:`BackendContract` in and provides:

``self.backend``, ``self.policy`` (its instance exists and is idle),
``self.description`` (carries the execution tag), and the methods
``new_instance()`` (another instance of the policy's project; returns its
id) and ``settle(backup_id)`` (waits until the backup is no longer in
progress).
"""

import time
import types

from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import backend as trove

NAME = 'nightly-20270131T023000Z'


def make_policy(instance_id, project_id=None, **backup_params):
    return types.SimpleNamespace(
        id=uuidutils.generate_uuid(), instance_id=instance_id,
        project_id=project_id or uuidutils.generate_uuid(dashed=False),
        backup_params=backup_params or None, name='nightly')


class BackendContract:

    def wait_gone(self, *backup_ids, timeout=30):
        """Wait until the backend no longer has the backups.

        Trove deletes in its task manager, after its 202.
        """
        deadline = time.monotonic() + timeout
        for backup_id in backup_ids:
            while True:
                try:
                    self.backend.get_backup(self.policy, backup_id)
                except backends.BackupNotFound:
                    break
                self.assertLess(time.monotonic(), deadline,
                                'backup %s still there' % backup_id)
                time.sleep(0.2)

    def create(self, policy=None, name=NAME, description=None):
        return self.backend.create_backup(policy or self.policy, name,
                                          description or self.description)

    def variant(self, **backup_params):
        """The policy, on the same instance, with other backup params."""
        return make_policy(self.policy.instance_id, self.policy.project_id,
                           **backup_params)

    def test_create_then_completed(self):
        backup = self.create()
        self.assertIn(backup.status, backends.BackupStatus.IN_PROGRESS)
        self.assertEqual(self.policy.instance_id, backup.instance_id)
        self.assertEqual(NAME, backup.name)
        self.assertEqual(self.description, backup.description)
        self.assertFalse(backup.finished)
        self.settle(backup.id)
        done = self.backend.get_backup(self.policy, backup.id)
        self.assertEqual(backends.BackupStatus.COMPLETED, done.status)
        self.assertTrue(done.finished)
        self.assertGreater(done.size_bytes, 0)
        self.assertIsNone(done.fault)
        self.assertIsNone(done.parent_id)
        self.assertLessEqual(done.created_at, done.updated_at)

    def test_second_backup_while_one_runs_is_busy(self):
        self.create()
        exc = self.assertRaises(backends.InstanceBusy, self.create)
        self.assertIsInstance(exc, backends.TransientBackendError)
        self.assertIn('BACKUP', str(exc))

    def test_unknown_instance_is_not_found(self):
        policy = make_policy(uuidutils.generate_uuid(),
                             self.policy.project_id)
        exc = self.assertRaises(backends.InstanceNotFound, self.create,
                                policy)
        self.assertIn(policy.instance_id, str(exc))

    def test_get_missing_backup(self):
        missing = uuidutils.generate_uuid()
        self.assertRaises(backends.BackupNotFound, self.backend.get_backup,
                          self.policy, missing)

    def test_delete_and_delete_again(self):
        backup = self.create()
        self.settle(backup.id)
        self.backend.delete_backup(self.policy, backup.id)
        self.wait_gone(backup.id)
        self.backend.delete_backup(self.policy, backup.id)

    def test_find_and_list_with_paging(self):
        self.useFixture_page_size(2)
        created = []
        for number in range(5):
            backup = self.create(description='Backup %d of policy. %s' % (
                number, backends.execution_tag('execution-%d' % number)))
            self.settle(backup.id)
            created.append(backup.id)
        listed = self.backend.list_backups(self.policy)
        self.assertEqual(sorted(created), sorted(b.id for b in listed))
        found = self.backend.find_backup(
            self.policy, backends.execution_tag('execution-0'))
        self.assertEqual(created[0], found.id)
        self.assertIsNone(self.backend.find_backup(
            self.policy, backends.execution_tag('execution-9')))
        # The listing is the instance's only.
        self.assertEqual([], self.backend.list_backups(
            make_policy(self.new_instance(), self.policy.project_id)))

    def test_get_backups_of_the_project_by_listing(self):
        created = []
        for instance_id in (self.policy.instance_id, self.new_instance(),
                            self.new_instance()):
            backup = self.create(make_policy(instance_id,
                                             self.policy.project_id))
            created.append(backup.id)
        sent = []
        send = self.backend._client._send

        def counted(*args, **kwargs):
            sent.append(args[1:3])
            return send(*args, **kwargs)

        self.patch(self.backend._client, '_send', counted)
        missing = uuidutils.generate_uuid()
        found = self.backend.get_backups(self.policy, created + [missing])
        self.assertEqual(set(created), set(found))
        self.assertTrue(all(found[b].id == b for b in created))
        # One listing, and one GET for the backup it did not list.
        self.assertEqual([('GET', 'backups'),
                          ('GET', 'backups/%s' % missing)], sent)
        for backup_id in created:
            self.settle(backup_id)

    def useFixture_page_size(self, size):
        self.patch(trove, 'PAGE_SIZE', size)

    def test_incremental_builds_on_the_latest_and_cascades(self):
        full = self.create()
        self.settle(full.id)
        incremental = self.create(self.variant(incremental=True))
        self.assertEqual(full.id, incremental.parent_id)
        self.settle(incremental.id)
        explicit = self.create(self.variant(parent_id=full.id))
        self.assertEqual(full.id, explicit.parent_id)
        self.settle(explicit.id)
        # Trove deletes the incremental backups built on a deleted one.
        self.backend.delete_backup(self.policy, full.id)
        self.wait_gone(full.id, incremental.id, explicit.id)
        self.assertEqual([], self.backend.list_backups(self.policy))
