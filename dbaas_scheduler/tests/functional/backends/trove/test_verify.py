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
"""Trove verifications on the in-repo fake Trove (tests/trove: on Trove).

What the chaos run relies on: the fake makes and deletes scratch
instances as Trove does (a BUILD instance refuses its delete with 422; a
deleted one is SHUTDOWN, then gone).
"""

from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import scratch
from dbaas_scheduler.tests.functional.backends.trove import test_backend


class TestVerifyOnFakeTrove(test_backend.TroveBackendTestCase):

    def setUp(self):
        super().setUp()
        self.patch(scratch, 'POLL', 0.01)
        self.patch(scratch, 'CONFIRM_WAIT', 0.05)
        self.backup = self.create()
        self.finish_backups()
        self.scratch = backends.scratch_name(uuidutils.generate_uuid())

    def instances(self):
        return [(i.name, i.status) for i in self.trove.restored_instances()]

    def test_a_good_backup_passes_and_its_instance_is_deleted(self):
        self.assertIsNone(self.backend.verify_backup(
            self.policy, self.backup.id, None, self.scratch))
        self.assertEqual([], self.instances())
        deletes = [r.path for r in self.trove.requests
                   if r.method == 'DELETE']
        self.assertEqual(1, len(deletes))
        self.backend.delete_scratch(self.policy, self.scratch)

    def test_a_building_instance_is_deleted_once_trove_allows(self):
        self.trove.restore_build_seconds = 60
        self.trove.delete_seconds = 30
        self.backend.restore_backup(self.policy, self.backup.id, {
            'name': self.scratch, 'flavor_id': '6', 'volume_size': 1},
            uuidutils.generate_uuid())
        exc = self.assertRaises(backends.TransientBackendError,
                                self.backend.delete_scratch, self.policy,
                                self.scratch)
        self.assertIn('still being deleted', str(exc))
        self.assertEqual([(self.scratch, 'BUILD')], self.instances())
        self.clock.advance(60)
        self.assertRaises(backends.TransientBackendError,
                          self.backend.delete_scratch, self.policy,
                          self.scratch)
        self.assertEqual([(self.scratch, 'SHUTDOWN')], self.instances())
        self.clock.advance(30)
        self.backend.delete_scratch(self.policy, self.scratch)
        self.assertEqual([], self.instances())

    def test_others_instances_are_not_touched(self):
        for name in ('mine', self.scratch + 'x'):
            self.backend.restore_backup(self.policy, self.backup.id, {
                'name': name, 'flavor_id': '6', 'volume_size': 1},
                uuidutils.generate_uuid())
        self.backend.delete_scratch(self.policy, self.scratch)
        self.assertEqual(sorted([('mine', 'ACTIVE'),
                                 (self.scratch + 'x', 'ACTIVE')]),
                         sorted(self.instances()))
