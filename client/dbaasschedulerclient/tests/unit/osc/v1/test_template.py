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
"""``openstack database backup template ...``: arguments and answers."""

from osc_lib import exceptions

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.osc.v1 import template
from dbaasschedulerclient.tests.unit.osc import fakes


class TestFields(fakes.CommandTestCase):

    def test_every_field_has_a_column_name(self):
        for field in template.FIELDS + template.ENROLMENT_FIELDS:
            self.assertIn(field, v1.LABELS)


class TestCreate(fakes.CommandTestCase):

    def test_policy_fields_but_the_instance(self):
        self.api.create_template.return_value = {'id': 't-1'}
        self.run_command(template.CreateTemplate, '--name', 'nightly',
                         '--schedule', 'H 2 * * *', '--keep-daily', '7',
                         '--timezone', 'Europe/Berlin')
        self.api.create_template.assert_called_once_with({
            'name': 'nightly', 'schedule': 'H 2 * * *', 'keep_daily': 7,
            'timezone': 'Europe/Berlin'})
        self.assertRefused(template.CreateTemplate, '--name', 'n',
                           '--schedule', '@daily', '--instance', 'i-1')
        self.assertRefused(template.CreateTemplate, '--schedule', '@daily')

    def test_with_verification(self):
        self.api.create_template.return_value = {
            'id': 't-1', 'verify_schedule': '0 5 * * *'}
        columns, row = self.run_command(
            template.CreateTemplate, '--name', 'verified', '--schedule',
            '@daily', '--verify-schedule', '0 5 * * *', '--verify-sql',
            'SELECT 1', '--verify-expected', '1')
        self.api.create_template.assert_called_once_with({
            'name': 'verified', 'schedule': '@daily',
            'verify_schedule': '0 5 * * *',
            'verify_check': {'sql': 'SELECT 1', 'expected': '1'}})
        self.assertIn('0 5 * * *', row)
        self.assertIn('verify_every', template.FIELDS)

    def test_an_older_api_says_so(self):
        self.api.api_version = '1.5'
        error = self.assertRaises(
            exceptions.CommandError, self.run_command,
            template.CreateTemplate, '--name', 'n', '--schedule', '@daily')
        self.assertIn('1.6', str(error))


class TestApply(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.apply_template.return_value = {
            'dry_run': True, 'enrolments': [
                {'instance_id': 'i-1', 'action': 'create',
                 'policy_id': None}]}

    def test_a_dry_run_of_every_instance(self):
        columns, rows = self.run_command(
            template.ApplyTemplate, 't-1', '--all-instances', '--dry-run')
        self.api.apply_template.assert_called_once_with(
            't-1', instance_ids=None, dry_run=True)
        self.assertEqual(('Instance ID', 'Action', 'Policy ID'), columns)
        self.assertEqual([('i-1', 'create', None)], rows)

    def test_named_instances(self):
        self.run_command(template.ApplyTemplate, 't-1', '--instance', 'a',
                         '--instance', 'b')
        self.api.apply_template.assert_called_once_with(
            't-1', instance_ids=['a', 'b'], dry_run=False)

    def test_which_instances_must_be_said(self):
        self.assertRefused(template.ApplyTemplate, 't-1')
        self.assertRefused(template.ApplyTemplate, 't-1', '--all-instances',
                           '--instance', 'a')


class TestDelete(fakes.CommandTestCase):

    def test_each_is_deleted_and_a_failure_reported(self):
        self.api.delete_template.side_effect = [None, RuntimeError('gone')]
        self.assertRaises(exceptions.CommandError, self.run_command,
                          template.DeleteTemplate, 't-1', 't-2')
        self.assertEqual(2, self.api.delete_template.call_count)
