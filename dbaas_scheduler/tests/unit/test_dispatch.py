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
"""Casting executions: grouping into messages, and stopping on failure."""

from unittest import mock

import oslo_messaging as messaging
from oslotest import base

from dbaas_scheduler import dispatch
from dbaas_scheduler import stats


class TestSplitIntoMessages(base.BaseTestCase):

    def test_small_batches_go_one_per_message(self):
        self.assertEqual([['a']], dispatch.split_into_messages(['a'], 20))
        self.assertEqual([], dispatch.split_into_messages([], 20))

    def test_groups_are_even(self):
        ids = [str(n) for n in range(45)]
        groups = dispatch.split_into_messages(ids, 20)
        self.assertEqual([15, 15, 15], [len(g) for g in groups])
        self.assertEqual(ids, [i for g in groups for i in g])

    def test_one_per_message(self):
        groups = dispatch.split_into_messages(['a', 'b', 'c'], 1)
        self.assertEqual([['a'], ['b'], ['c']], groups)

    def test_never_more_than_the_maximum(self):
        for count in range(1, 300):
            groups = dispatch.split_into_messages(list(range(count)), 20)
            self.assertLessEqual(max(len(g) for g in groups), 20)
            self.assertEqual(count, sum(len(g) for g in groups))


class TestDispatch(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        patcher = mock.patch(
            'dbaas_scheduler.db.scheduling.release_uncast_executions',
            autospec=True)
        self.release = patcher.start()
        self.addCleanup(patcher.stop)

    def test_single_and_grouped(self):
        api = mock.Mock()
        sent = dispatch.dispatch(api, 'ctx', ['a'], 20, 'stamp')
        api.backup_database_instance.assert_called_once_with('ctx', 'a')
        self.assertEqual(['a'], sent)
        sent = dispatch.dispatch(api, 'ctx', ['a', 'b'], 20, 'stamp')
        api.backup_database_instances.assert_called_once_with(
            'ctx', ['a', 'b'])
        self.assertEqual(['a', 'b'], sent)
        # Recorded DISPATCHED before the cast: nothing to write after it.
        self.release.assert_not_called()

    def test_first_failure_stops_the_batch(self):
        api = mock.Mock()
        api.backup_database_instances.side_effect = [
            None, messaging.MessageDeliveryFailure('broker down'), None]
        ids = [str(n) for n in range(60)]
        sent = dispatch.dispatch(api, 'ctx', ids, 20, 'stamp')
        self.assertEqual(ids[:20], sent)
        self.assertEqual(2, api.backup_database_instances.call_count)
        # What was not sent goes back to PENDING, if still as stamped.
        self.release.assert_called_once_with('ctx', set(ids[20:]), 'stamp')

    def test_casts_are_counted(self):
        stats.REGISTRY.reset()
        self.addCleanup(stats.REGISTRY.reset)
        api = mock.Mock()
        api.backup_database_instances.side_effect = [
            None, messaging.MessageDeliveryFailure('broker down')]
        dispatch.dispatch(api, 'ctx', [str(n) for n in range(60)], 20, 's')
        dispatch.dispatch(api, 'ctx', ['a'], 20, 's')
        self.assertEqual(21, stats.ENGINE_CASTS.value('sent'))
        self.assertEqual(40, stats.ENGINE_CASTS.value('failed'))

    def test_release_failure_is_not_raised(self):
        api = mock.Mock()
        api.backup_database_instance.side_effect = ConnectionRefusedError()
        self.release.side_effect = RuntimeError('database away')
        self.assertEqual([], dispatch.dispatch(api, 'ctx', ['a'], 20, 's'))
        self.release.assert_called_once_with('ctx', {'a'}, 's')
