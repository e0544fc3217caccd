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

from dbaas_scheduler.engine import dispatcher


class TestSplitIntoMessages(base.BaseTestCase):

    def test_small_batches_go_one_per_message(self):
        self.assertEqual([['a']], dispatcher.split_into_messages(['a'], 20))
        self.assertEqual([], dispatcher.split_into_messages([], 20))

    def test_groups_are_even(self):
        ids = [str(n) for n in range(45)]
        groups = dispatcher.split_into_messages(ids, 20)
        self.assertEqual([15, 15, 15], [len(g) for g in groups])
        self.assertEqual(ids, [i for g in groups for i in g])

    def test_one_per_message(self):
        groups = dispatcher.split_into_messages(['a', 'b', 'c'], 1)
        self.assertEqual([['a'], ['b'], ['c']], groups)

    def test_never_more_than_the_maximum(self):
        for count in range(1, 300):
            groups = dispatcher.split_into_messages(list(range(count)), 20)
            self.assertLessEqual(max(len(g) for g in groups), 20)
            self.assertEqual(count, sum(len(g) for g in groups))


class TestCastExecutions(base.BaseTestCase):

    def test_single_and_grouped(self):
        api = mock.Mock()
        sent = dispatcher.cast_executions(api, 'ctx', ['a'], 20)
        api.backup_database_instance.assert_called_once_with('ctx', 'a')
        self.assertEqual(['a'], sent)
        sent = dispatcher.cast_executions(api, 'ctx', ['a', 'b'], 20)
        api.backup_database_instances.assert_called_once_with(
            'ctx', ['a', 'b'])
        self.assertEqual(['a', 'b'], sent)

    def test_first_failure_stops_the_batch(self):
        api = mock.Mock()
        api.backup_database_instances.side_effect = [
            None, messaging.MessageDeliveryFailure('broker down'), None]
        ids = [str(n) for n in range(60)]
        sent = dispatcher.cast_executions(api, 'ctx', ids, 20)
        self.assertEqual(ids[:20], sent)
        self.assertEqual(2, api.backup_database_instances.call_count)

    @mock.patch('dbaas_scheduler.db.api.mark_executions_dispatched',
                autospec=True)
    def test_dispatch_marks_only_what_was_sent(self, mark):
        api = mock.Mock()
        api.backup_database_instance.side_effect = ConnectionRefusedError()
        self.assertEqual([], dispatcher.dispatch(api, 'ctx', ['a'], 20))
        mark.assert_not_called()
        api.backup_database_instance.side_effect = None
        self.assertEqual(['a'], dispatcher.dispatch(api, 'ctx', ['a'], 20))
        mark.assert_called_once_with('ctx', ['a'], mock.ANY)
