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
"""The manifest: written atomically, read back, finished."""

import os
import stat

import fixtures
from oslotest import base as oslotest_base

from dbaas_scheduler.backends.local import manifests
from dbaas_scheduler.tests.unit.backends.local import fakes


class TestManifestFiles(oslotest_base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.directory = self.useFixture(fixtures.TempDir()).path
        self.path = os.path.join(self.directory, 'b.json')

    def test_round_trip_leaves_only_the_manifest(self):
        manifests.write_manifest(self.path, {'id': 'b', 'status': 'NEW'})
        manifests.write_manifest(self.path, {'id': 'b', 'status': 'DONE'})
        self.assertEqual({'id': 'b', 'status': 'DONE'},
                         manifests.read_manifest(self.path))
        self.assertEqual(['b.json'], os.listdir(self.directory))
        self.assertEqual(0o600, stat.S_IMODE(os.stat(self.path).st_mode))

    def test_missing_manifest(self):
        self.assertIsNone(manifests.read_manifest(self.path))

    def test_a_failed_write_keeps_the_old_manifest(self):
        manifests.write_manifest(self.path, {'id': 'b'})
        self.assertRaises(TypeError, manifests.write_manifest, self.path,
                          {'id': object()})
        self.assertEqual({'id': 'b'}, manifests.read_manifest(self.path))
        self.assertEqual(['b.json'], os.listdir(self.directory))

    def test_finish(self):
        manifest = {'id': 'b', 'status': 'BUILDING', 'pid': 12}
        done = manifests.finish_manifest(manifest, 'FAILED', now=fakes.CREATED,
                                         fault='no')
        self.assertEqual(
            {'id': 'b', 'status': 'FAILED', 'pid': None, 'fault': 'no',
             'finished_at': fakes.CREATED.isoformat(),
             'updated_at': fakes.CREATED.isoformat()}, done)
        self.assertEqual('BUILDING', manifest['status'])
