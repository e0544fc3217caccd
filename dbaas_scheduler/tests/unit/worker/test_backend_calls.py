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
"""The retries of backend calls, and of the create as one unit."""

import types
from unittest import mock

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.tests import base
from dbaas_scheduler.worker import backend_calls


FOUND = types.SimpleNamespace(id='b-1')


def _lost_answer():
    return backends.TransientBackendError(backend='fake', kind='timeout',
                                          reason='read timed out')


class TestFindOrCreateBackup(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(group='worker', max_attempts=3, retry_initial_delay=0,
                   retry_max_delay=0)
        self.backend = mock.Mock()
        self.backend.find_backup.return_value = None
        self.backend.create_backup.return_value = mock.sentinel.created
        self.backend.call_timeout.return_value = None
        self.before_create = mock.Mock()

    def create(self, attempts=1):
        execution = types.SimpleNamespace(id='e-1', attempts=attempts)
        return backend_calls.find_or_create_backup(
            self.conf, self.backend, mock.sentinel.policy, execution,
            'name', 'description', self.before_create)

    def test_a_first_claim_creates_without_looking(self):
        self.assertIs(mock.sentinel.created, self.create())
        self.backend.find_backup.assert_not_called()
        self.before_create.assert_called_once_with(True)
        self.backend.create_backup.assert_called_once_with(
            mock.sentinel.policy, 'name', 'description')

    def test_a_later_claim_looks_first(self):
        self.backend.find_backup.return_value = FOUND
        self.assertIs(FOUND, self.create(attempts=2))
        self.backend.find_backup.assert_called_once_with(
            mock.sentinel.policy, backends.execution_tag('e-1'))
        self.before_create.assert_not_called()
        self.backend.create_backup.assert_not_called()

    def test_a_lost_answer_is_looked_for_before_another_create(self):
        # The create timed out but was accepted: the retry finds it.
        self.backend.create_backup.side_effect = [_lost_answer()]
        self.backend.find_backup.return_value = FOUND
        self.assertIs(FOUND, self.create())
        self.assertEqual(1, self.backend.create_backup.call_count)
        self.before_create.assert_called_once_with(True)

    def test_each_create_after_the_first_is_fenced_as_such(self):
        self.backend.create_backup.side_effect = [
            _lost_answer(), _lost_answer(), mock.sentinel.created]
        self.assertIs(mock.sentinel.created, self.create())
        self.assertEqual([mock.call(True), mock.call(False),
                          mock.call(False)],
                         self.before_create.call_args_list)
        self.assertEqual(2, self.backend.find_backup.call_count)

    def test_a_timed_out_create_is_looked_for_a_while(self):
        # The create is still in flight: it lands at the third look.
        self.flags(group='worker', timed_out_create_wait=5)
        self.backend.create_backup.side_effect = [_lost_answer()]
        self.backend.find_backup.side_effect = [None, None, FOUND]
        self.assertIs(FOUND, self.create())
        self.assertEqual(1, self.backend.create_backup.call_count)
        self.assertEqual(3, self.backend.find_backup.call_count)

    def test_the_look_after_a_timeout_is_bounded(self):
        # Twice the backend's timeout, then it creates again.
        self.backend.call_timeout.return_value = 0.1
        self.backend.create_backup.side_effect = [
            _lost_answer(), mock.sentinel.created]
        self.assertIs(mock.sentinel.created, self.create())
        self.assertEqual(2, self.backend.create_backup.call_count)
        self.assertGreater(self.backend.find_backup.call_count, 1)
        self.backend.call_timeout.assert_called_with(self.conf)

    def test_other_transient_errors_look_once(self):
        self.backend.call_timeout.return_value = 60
        self.backend.create_backup.side_effect = [
            backends.TransientBackendError(backend='fake', kind='unavailable',
                                           reason='reset'),
            mock.sentinel.created]
        self.assertIs(mock.sentinel.created, self.create())
        self.assertEqual(1, self.backend.find_backup.call_count)

    def test_the_fencing_check_stops_the_create(self):
        self.before_create.side_effect = RuntimeError('claim lost')
        self.assertRaises(RuntimeError, self.create)
        self.backend.create_backup.assert_not_called()

    def test_giving_up_is_permanent_and_says_so(self):
        self.backend.create_backup.side_effect = _lost_answer()
        error = self.assertRaises(backends.BackendError, self.create)
        self.assertNotIsInstance(error, backends.TransientBackendError)
        self.assertIn('gave up after 3 attempts', str(error))
        self.assertEqual(3, self.backend.create_backup.call_count)

    def test_a_rate_limited_project_is_retried_without_backoff(self):
        self.backend.create_backup.side_effect = backends.ProjectRateLimited(
            backend='fake', reason='slow down')
        self.assertRaises(backend_calls.RetriesExhausted, self.create)
        self.assertEqual(3, self.backend.create_backup.call_count)

    def test_a_rate_limited_project_is_passed_on_with_backoff(self):
        # [worker] project_backoff: the worker backs the project off.
        self.flags(group='worker', project_backoff=60)
        self.backend.create_backup.side_effect = backends.ProjectRateLimited(
            backend='fake', reason='slow down')
        self.assertRaises(backends.ProjectRateLimited, self.create)
        self.assertEqual(1, self.backend.create_backup.call_count)

    def test_a_permanent_error_is_not_retried(self):
        self.backend.create_backup.side_effect = (
            backends.PermanentBackendError(backend='fake', reason='no'))
        self.assertRaises(backends.PermanentBackendError, self.create)
        self.assertEqual(1, self.backend.create_backup.call_count)
