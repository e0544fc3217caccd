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
"""``openstack database backup policy execution``: arguments, columns."""

from osc_lib import exceptions

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.osc.v1 import execution
from dbaasschedulerclient.tests.unit.osc import fakes


class TestFields(fakes.CommandTestCase):

    def test_every_field_has_a_column_name(self):
        for field in execution.FIELDS:
            self.assertIn(field, v1.LABELS)


class TestList(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.list_executions.return_value = [fakes.EXECUTION]

    def test_no_filters(self):
        columns, rows = self.run_command(execution.ListExecution)
        self.api.list_executions.assert_called_once_with(
            policy_id=None, instance_id=None, status=None, since=None,
            all_projects=None, limit=None, marker=None, held=None)
        self.assertEqual(('ID', 'Policy ID', 'Instance ID', 'Scheduled At',
                          'Trigger', 'Status', 'Backup ID', 'Held',
                          'Backup State'), columns)
        self.assertEqual([('e-1', 'p-1', 'i-1', '2027-01-31T01:30:00Z',
                           'schedule', 'SUCCEEDED', 'b-9', False, None)],
                         rows)

    def test_filters(self):
        self.run_command(execution.ListExecution, '--policy', 'p-1',
                         '--instance', 'i-1', '--status', 'failed',
                         '--since', '2027-01-01T00:00:00Z', '--all-projects',
                         '--limit', '20', '--marker', 'e-0')
        self.api.list_executions.assert_called_once_with(
            policy_id='p-1', instance_id='i-1', status='FAILED',
            since='2027-01-01T00:00:00Z', all_projects=True, limit=20,
            marker='e-0', held=None)

    def test_policy_by_name(self):
        self.run_command(execution.ListExecution, '--policy', 'nightly')
        self.assertEqual(
            'p-1', self.api.list_executions.call_args.kwargs['policy_id'])

    def test_unknown_policy_fails(self):
        command, parsed_args = self.parse(execution.ListExecution,
                                          '--policy', 'orders')
        error = self.assertRaises(exceptions.CommandError,
                                  command.take_action, parsed_args)
        self.assertEqual("No backup policy with a name or ID of 'orders' "
                         "exists.", str(error))
        self.api.list_executions.assert_not_called()

    def test_a_deleted_policy_by_id(self):
        # No policy has this id (any more): its executions are history,
        # listed by the id.
        deleted = '0b6f9a52-3c1e-4a47-9d5b-2f8e7c6a1d30'
        self.run_command(execution.ListExecution, '--policy', deleted)
        self.assertEqual(
            deleted, self.api.list_executions.call_args.kwargs['policy_id'])

    def test_twins_fail(self):
        command, parsed_args = self.parse(execution.ListExecution,
                                          '--policy', 'twins')
        error = self.assertRaises(exceptions.CommandError,
                                  command.take_action, parsed_args)
        self.assertIn('More than one backup policy', str(error))
        self.api.list_executions.assert_not_called()

    def test_unknown_status_is_refused(self):
        self.assertIn('invalid choice', self.assertRefused(
            execution.ListExecution, '--status', 'DONE'))

    def test_long_shows_deleted_backups(self):
        columns, rows = self.run_command(execution.ListExecution, '--long')
        deleted = rows[0][columns.index('Deleted Backups')]
        self.assertEqual('b-1, b-2', deleted.human_readable())
        self.assertEqual(fakes.EXECUTION['deleted_backups'],
                         deleted.machine_readable())
        self.assertIn('Fault', columns)


class TestShow(fakes.CommandTestCase):

    def test_show(self):
        self.api.get_execution.return_value = fakes.EXECUTION
        columns, values = self.run_command(execution.ShowExecution, 'e-1')
        self.api.get_execution.assert_called_once_with('e-1')
        self.assertEqual(v1.labels(execution.FIELDS), columns)
        shown = dict(zip(columns, values))
        self.assertEqual('2027-01-31T01:35:00Z', shown['Finished At'])
        self.assertEqual('', v1.BackupsColumn(None).human_readable())
        self.assertEqual([], v1.BackupsColumn(None).machine_readable())


class TestHolds(fakes.CommandTestCase):

    def test_held_filter(self):
        self.api.list_executions.return_value = []
        self.run_command(execution.ListExecution, '--held')
        self.assertIs(
            True, self.api.list_executions.call_args.kwargs['held'])
        self.api.list_executions.reset_mock()
        self.run_command(execution.ListExecution, '--not-held')
        self.assertIs(
            False, self.api.list_executions.call_args.kwargs['held'])

    def test_hold(self):
        self.api.hold_backup.return_value = dict(
            fakes.EXECUTION, held=True, held_by='alice',
            held_at='2027-02-01T00:00:00Z')
        columns, values = self.run_command(execution.HoldExecution, 'e-1')
        self.api.hold_backup.assert_called_once_with('e-1')
        shown = dict(zip(columns, values))
        self.assertIs(True, shown['Held'])
        self.assertEqual('alice', shown['Held By'])

    def test_release(self):
        self.api.release_backup.return_value = fakes.EXECUTION
        columns, values = self.run_command(execution.ReleaseExecution,
                                           'e-1')
        self.api.release_backup.assert_called_once_with('e-1')
        self.assertIs(False, dict(zip(columns, values))['Held'])
