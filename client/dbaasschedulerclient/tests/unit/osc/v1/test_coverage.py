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
"""``openstack database backup coverage``: arguments, columns, counts."""

from osc_lib import exceptions

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.osc.v1 import coverage
from dbaasschedulerclient.tests.unit.osc import fakes

INSTANCE = {
    'backend': 'trove', 'project_id': 'project-a', 'instance_id': 'i-1',
    'name': 'orders', 'state': 'unprotected', 'reasons': ['unprotected'],
    'source': 'backend', 'policies': 0, 'enabled_policies': 0,
    'last_success_at': None, 'stale_after': None, 'daily_runs': None}
REPORT = {
    'instances': [INSTANCE],
    'counts': {'unprotected': 1, 'paused': 0, 'stale': 0,
               'verification_failed': 0, 'below_minimum': 0,
               'protected': 4},
    'incomplete': [],
}


class TestCoverage(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.get_coverage.return_value = REPORT

    def test_every_field_has_a_column_name(self):
        for field in coverage.FIELDS:
            self.assertIn(field, v1.LABELS)

    def test_the_instances(self):
        columns, rows = self.run_command(coverage.ShowCoverage)
        self.api.get_coverage.assert_called_once_with(
            state=None, all_projects=None)
        row = dict(zip(columns, rows[0]))
        self.assertEqual('unprotected', row['State'])
        self.assertEqual('orders', row['Name'])
        self.assertNotIn('Project ID', columns)

    def test_a_state_of_every_project(self):
        columns, rows = self.run_command(
            coverage.ShowCoverage, '--state', 'unprotected',
            '--all-projects')
        self.api.get_coverage.assert_called_once_with(
            state='unprotected', all_projects=True)
        self.assertEqual('Project ID', columns[0])

    def test_an_unknown_state_is_refused(self):
        self.assertIn('invalid choice', self.assertRefused(
            coverage.ShowCoverage, '--state', 'lost'))

    def test_counts(self):
        columns, rows = self.run_command(coverage.ShowCoverage, '--counts')
        self.assertEqual(('State', 'Instances'), columns)
        self.assertEqual(('unprotected', 1), rows[0])
        self.assertEqual(('protected', 4), rows[-1])

    def test_a_backend_that_could_not_list_is_a_warning(self):
        self.api.get_coverage.return_value = dict(REPORT, incomplete=[
            {'backend': 'trove', 'project_id': 'project-a',
             'reason': 'Trove is down'}])
        self.run_command(coverage.ShowCoverage)
        written = ''.join(call.args[0] for call in
                          self.app.stderr.write.call_args_list)
        self.assertIn('could not list the instances of project project-a',
                      written)
        self.assertIn('unprotected: 1', written)

    def test_an_older_api_is_refused(self):
        self.api.api_version = '1.4'
        error = self.assertRaises(exceptions.CommandError, self.run_command,
                                  coverage.ShowCoverage)
        self.assertIn('API version 1.5', str(error))
