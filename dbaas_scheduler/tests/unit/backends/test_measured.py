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
"""Backend calls timed and their errors counted by kind."""

import socket
from unittest import mock

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import fake
from dbaas_scheduler.backends import loader
from dbaas_scheduler import stats
from dbaas_scheduler.tests import base


def _calls(call):
    series = dict((tuple(labels), counts) for labels, counts, _ in
                  stats.REGISTRY.snapshot()['histograms']
                  ['backend_call_seconds']['series'])
    return series.get((call,), [0])[-1]


class TestMeasuredBackend(base.TestCase):

    def setUp(self):
        super().setUp()
        stats.REGISTRY.reset()
        self.addCleanup(stats.REGISTRY.reset)
        self.addCleanup(loader.reset)
        self.policy = mock.Mock(instance_id='i-1', project_id='p',
                                backup_params={})

    def test_the_loader_hands_out_measured_backends(self):
        backend = loader.get_backend(self.conf, 'fake')
        self.assertIsInstance(backend, backends.MeasuredBackend)
        self.assertIsInstance(backend.backend, fake.FakeBackend)
        self.assertIs(backend, loader.get_backend(self.conf, 'fake'))
        self.assertEqual('fake', backend.name)
        self.assertFalse(loader.needs_trust(self.conf, 'fake'))

    def test_each_call_is_timed_once(self):
        backend = backends.MeasuredBackend(fake.FakeBackend(self.conf))
        made = backend.create_backup(self.policy, 'n', 'tag-1')
        self.assertEqual(made.id, backend.get_backup(self.policy,
                                                     made.id).id)
        # The fake's find_backup lists the backups itself: one call.
        self.assertEqual(made.id,
                         backend.find_backup(self.policy, 'tag-1').id)
        backend.delete_backup(self.policy, made.id)
        self.assertEqual(1, _calls('create_backup'))
        self.assertEqual(1, _calls('get_backup'))
        self.assertEqual(1, _calls('find_backup'))
        self.assertEqual(0, _calls('list_backups'))
        self.assertEqual(1, _calls('delete_backup'))
        self.assertEqual(0, stats.BACKEND_ERRORS.value('get_backup',
                                                       'not_found'))

    def test_errors_by_call_and_kind(self):
        backend = backends.MeasuredBackend(fake.FakeBackend(self.conf))
        self.assertRaises(backends.BackupNotFound, backend.get_backup,
                          self.policy, 'nothing')
        self.assertEqual(1, stats.BACKEND_ERRORS.value('get_backup',
                                                       'not_found'))
        self.assertEqual(1, _calls('get_backup'))
        limited = backends.TransientBackendError(
            backend='fake', reason='429', kind='rate_limited')
        with mock.patch.object(fake.FakeBackend, 'create_backup',
                               autospec=True, side_effect=limited):
            self.assertRaises(backends.TransientBackendError,
                              backend.create_backup, self.policy, 'n', 'd')
        self.assertEqual(1, stats.BACKEND_ERRORS.value('create_backup',
                                                       'rate_limited'))

    def test_error_kind(self):
        kind = backends.error_kind
        self.assertEqual('not_found', kind(backends.InstanceNotFound(
            backend='b', instance_id='i', reason='r')))
        self.assertEqual('not_found', kind(backends.BackupNotFound(
            backend='b', backup_id='x')))
        self.assertEqual('auth', kind(backends.BackendForbidden(
            backend='b', instance_id='i', reason='r')))
        self.assertEqual('auth', kind(backends.TrustBroken(
            trust_id='t', reason='r')))
        self.assertEqual('busy', kind(backends.InstanceBusy(
            backend='b', instance_id='i', reason='r')))
        self.assertEqual('unavailable', kind(backends.TransientBackendError(
            backend='b', reason='r')))
        self.assertEqual('other', kind(backends.PermanentBackendError(
            backend='b', reason='r')))
        self.assertEqual('timeout', kind(socket.timeout()))
        self.assertEqual('other', kind(ValueError()))
        # What the backend says wins; an unknown kind does not.
        self.assertEqual('timeout', kind(backends.TransientBackendError(
            backend='b', reason='r', kind='timeout')))
        self.assertEqual('unavailable', kind(backends.TransientBackendError(
            backend='b', reason='r', kind='no such kind')))
