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
"""Scratch instances of Trove verifications, against a scripted Trove.

The real Trove runs them in tests/trove/test_verification.py; here what it
cannot be made to do: stay in BUILD past the timeouts, have no source.
"""

import types

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.backends.trove import scratch
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.unit.backends.trove import fakes

GIB = 1024 ** 3
SCRATCH = backends.scratch_name('6e1c4b5a-2f3d-4e8a-9b7c-1d2e3f4a5b6c')


class FakeTrove:
    """Answers the scratch requests; instances change with the clock."""

    def __init__(self, statuses, backup_size=0.14):
        # The new instance's (status, operating_status) at each look.
        self.statuses = list(statuses)
        self.backup_size = backup_size
        self.sent = []
        self.instances = {}

    def request(self, policy, method, path, action, **kwargs):
        self.sent.append((method, path, kwargs.get('json')))
        if path.startswith('backups/'):
            return fakes.make_response(200, {'backup': {
                'id': path.split('/')[1], 'status': 'COMPLETED',
                'size': self.backup_size, 'instance_id': fakes.INSTANCE,
                'datastore': {'type': 'mysql', 'version': '8.0'}}})
        if (method, path) == ('POST', 'instances'):
            self.instances['new-1'] = kwargs['json']['instance']['name']
            return fakes.make_response(200, {'instance': {
                'id': 'new-1', 'status': 'BUILD'}})
        instance_id = path.split('/')[1]
        if method == 'DELETE' or instance_id not in self.instances:
            self.instances.pop(instance_id, None)
            return fakes.make_response(404 if method == 'GET' else 202)
        status, operating = (self.statuses.pop(0) if len(self.statuses) > 1
                             else self.statuses[0])
        return fakes.make_response(200, {'instance': {
            'id': instance_id, 'status': status,
            'operating_status': operating}})


class TestScratchInstances(base.TestCase):

    def setUp(self):
        super().setUp()
        self.now = 0.0
        self.source = {'flavor': {'id': '7'}, 'volume': {'size': 20},
                       'datastore': {'type': 'mysql', 'version': '8.0'}}

    def scratch(self, trove):
        backend = types.SimpleNamespace(
            conf=self.conf, _client=trove,
            _source_instance=lambda policy: self.source,
            project_instances=lambda policy: [
                {'id': i, 'name': name} for i, name in
                trove.instances.items()])
        return scratch.ScratchInstances(backend, sleep=self.sleep,
                                        clock=lambda: self.now)

    def sleep(self, seconds):
        self.now += seconds

    def verify(self, trove, check=None):
        return self.scratch(trove).verify(fakes.make_policy(), 'backup-1',
                                          check, SCRATCH)

    def test_the_smallest_volume_that_holds_the_backup(self):
        cases = [(0.14, 1), (2.0, 2), (2.01, 3), (None, 20)]
        for size, expected in cases:
            backup = backends.Backup(
                id='b', instance_id='i', status='COMPLETED',
                size_bytes=None if size is None else int(size * GIB))
            self.assertEqual(expected, scratch.volume_size(backup,
                                                           self.source))
        self.assertIsNone(scratch.volume_size(
            backends.Backup(id='b', instance_id='i', status='COMPLETED'),
            {}))

    def test_passes_once_active_and_healthy_then_deletes(self):
        self.flags(group='verify', flavor='small')
        trove = FakeTrove([('BUILD', None), ('ACTIVE', 'BUILD'),
                           ('ACTIVE', 'HEALTHY')], backup_size=2.5)
        self.assertIsNone(self.verify(trove))
        created = [body for method, path, body in trove.sent
                   if method == 'POST']
        self.assertEqual([{'instance': {
            'name': SCRATCH, 'flavorRef': 'small', 'volume': {'size': 3},
            'datastore': {'type': 'mysql', 'version': '8.0'},
            'restorePoint': {'backupRef': 'backup-1'}}}], created)
        self.assertIn(('DELETE', 'instances/new-1', None), trove.sent)
        self.assertEqual({}, trove.instances)

    def test_a_trove_hiccup_while_waiting_is_looked_past(self):
        trove = FakeTrove([('BUILD', None), ('ACTIVE', 'HEALTHY')])
        request = trove.request

        def hiccup(policy, method, path, action, **kwargs):
            if method == 'GET' and path == 'instances/new-1' and \
                    not getattr(trove, 'hiccupped', False):
                trove.hiccupped = True
                raise backends.TransientBackendError(
                    backend='trove', reason='Trove answered HTTP 503')
            return request(policy, method, path, action, **kwargs)

        trove.request = hiccup
        self.assertIsNone(self.verify(trove))
        self.assertEqual(1, len([m for m, _, _ in trove.sent
                                 if m == 'POST']))

    def test_still_building_after_restore_timeout(self):
        self.flags(group='worker', restore_timeout=600)
        trove = FakeTrove([('BUILD', None)])
        exc = self.assertRaises(backends.PermanentBackendError, self.verify,
                                trove)
        self.assertIn('timed out: scratch instance new-1 is still BUILD',
                      str(exc))
        self.assertIn('[worker] restore_timeout', str(exc))
        self.assertGreater(self.now, 600)
        self.assertEqual({}, trove.instances)

    def test_database_not_healthy_within_check_timeout(self):
        self.flags(group='verify', check_timeout=60)
        trove = FakeTrove([('BUILD', None)] * 3 + [('ACTIVE', 'BUILD')])
        exc = self.assertRaises(backends.PermanentBackendError, self.verify,
                                trove)
        self.assertIn('its database still BUILD, not HEALTHY', str(exc))
        self.assertIn('[verify] check_timeout', str(exc))

    def test_an_unhealthy_database_fails_at_once(self):
        trove = FakeTrove([('ACTIVE', 'FAILED')])
        exc = self.assertRaises(backends.PermanentBackendError, self.verify,
                                trove)
        self.assertIn('database of its scratch instance new-1 is FAILED',
                      str(exc))
        self.assertEqual(0.0, self.now)

    def test_no_source_and_no_flavor(self):
        self.source = None
        exc = self.assertRaises(backends.PermanentBackendError, self.verify,
                                FakeTrove([('ACTIVE', 'HEALTHY')]))
        self.assertIn('[verify] flavor', str(exc))

    def test_a_check_is_not_run_and_says_so(self):
        trove = FakeTrove([('ACTIVE', 'HEALTHY')])
        self.assertEqual(scratch.CHECK_NOT_RUN, self.verify(
            trove, {'sql': 'SELECT 1', 'expected': 1}))
        self.assertEqual({}, trove.instances)

    def test_delete_scratch_touches_only_that_name(self):
        trove = FakeTrove([('ACTIVE', 'HEALTHY')])
        trove.instances.update({'a': SCRATCH, 'b': SCRATCH + '0',
                                'c': 'db'})
        self.scratch(trove).delete_scratch(fakes.make_policy(), SCRATCH)
        self.assertEqual({'b': SCRATCH + '0', 'c': 'db'}, trove.instances)
        self.assertEqual([('DELETE', 'instances/a')], [
            (method, path) for method, path, _ in trove.sent
            if method == 'DELETE'])


class TestVerifyCheckRefused(base.TestCase):

    def setUp(self):
        super().setUp()
        # The check asks the loaded backends, built with this conf.
        loader.reset()
        self.addCleanup(loader.reset)

    def test_trove_policies_cannot_have_a_sql_check(self):
        check = {'sql': 'SELECT 1', 'expected': 1}
        exc = self.assertRaises(exception.Invalid,
                                backup_policy.check_verify_check,
                                self.conf, 'trove', check)
        self.assertIn('verify_check cannot be used with the trove backend',
                      str(exc))
        for backend, given in (('trove', None), ('local', check)):
            backup_policy.check_verify_check(self.conf, backend, given)
