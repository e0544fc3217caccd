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
"""``openstack database backup restore [list|show]``: arguments, waiting."""

from unittest import mock

import fixtures
from osc_lib import exceptions

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.osc.v1 import restore
from dbaasschedulerclient.tests.unit.osc import fakes


def _restore(status, **values):
    item = {'id': 'r-1', 'execution_id': 'e-1', 'policy_id': 'p-1',
            'project_id': 'project-a', 'instance_id': 'i-1',
            'backend': 'local', 'backup_id': 'b-9', 'params': {},
            'status': status, 'status_reason': None, 'attempts': 0,
            'target_id': None, 'created_at': '2027-01-31T01:30:00Z',
            'started_at': None, 'finished_at': None, 'duration': None,
            'fault': None}
    item.update(values)
    return item


class TestFields(fakes.CommandTestCase):

    def test_every_field_has_a_column_name(self):
        for field in restore.FIELDS:
            self.assertIn(field, v1.LABELS)


class TestCreate(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.restore_execution.return_value = _restore('PENDING')
        self.sleep = self.useFixture(fixtures.MockPatch(
            'time.sleep')).mock

    def test_only_what_was_given_is_sent(self):
        columns, values = self.run_command(restore.CreateRestore, 'e-1')
        self.api.restore_execution.assert_called_once_with('e-1', {})
        self.assertEqual('PENDING', dict(zip(columns, values))['Status'])
        self.api.get_restore.assert_not_called()

    def test_trove_and_local_options(self):
        self.run_command(restore.CreateRestore, 'e-1', '--name', 'copy',
                         '--flavor', 'f-2', '--size', '5', '--target', 't',
                         '--replace', '--allow-source')
        self.api.restore_execution.assert_called_once_with('e-1', {
            'name': 'copy', 'flavor_id': 'f-2', 'volume_size': 5,
            'target': 't', 'replace': True, 'allow_source': True})

    def test_wait_watches_it_to_the_end(self):
        self.api.get_restore.side_effect = [
            _restore('RUNNING'),
            _restore('SUCCEEDED', target_id='copy', duration=12.5)]
        columns, values = self.run_command(restore.CreateRestore, 'e-1',
                                           '--wait')
        shown = dict(zip(columns, values))
        self.assertEqual(('SUCCEEDED', 'copy', 12.5), (
            shown['Status'], shown['Target ID'], shown['Duration (s)']))
        self.assertEqual([mock.call('r-1')] * 2,
                         self.api.get_restore.call_args_list)
        self.assertEqual(2, self.sleep.call_count)

    def test_wait_fails_with_the_reason(self):
        self.api.get_restore.return_value = _restore(
            'FAILED', status_reason='backup b-9 is damaged')
        self.api.restore_execution.return_value = _restore('RUNNING')
        command, parsed_args = self.parse(restore.CreateRestore, 'e-1',
                                          '--wait')
        error = self.assertRaises(exceptions.CommandError,
                                  command.take_action, parsed_args)
        self.assertEqual('Restore r-1 failed: backup b-9 is damaged',
                         str(error))


class TestListShow(fakes.CommandTestCase):

    def test_list_filters(self):
        self.api.list_restores.return_value = [_restore('SUCCEEDED')]
        columns, rows = self.run_command(
            restore.ListRestore, '--execution', 'e-1', '--policy', 'p-1',
            '--status', 'succeeded', '--all-projects', '--limit', '2')
        self.api.list_restores.assert_called_once_with(
            execution_id='e-1', policy_id='p-1', status='SUCCEEDED',
            all_projects=True, limit=2, marker=None)
        self.assertEqual(('ID', 'Execution ID', 'Backup ID', 'Status',
                          'Target ID', 'Duration (s)'), columns)
        self.assertEqual([('r-1', 'e-1', 'b-9', 'SUCCEEDED', None, None)],
                         list(rows))

    def test_show_waits_when_asked(self):
        self.useFixture(fixtures.MockPatch('time.sleep'))
        self.api.get_restore.side_effect = [_restore('PENDING'),
                                            _restore('SUCCEEDED')]
        columns, values = self.run_command(restore.ShowRestore, 'r-1',
                                           '--wait')
        self.assertEqual('SUCCEEDED', dict(zip(columns, values))['Status'])
