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
"""``openstack database backup policy``: arguments into API requests."""

from unittest import mock

from osc_lib.cli import format_columns
from osc_lib import exceptions

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.osc.v1 import backup_policy
from dbaasschedulerclient.tests.unit.osc import fakes
from dbaasschedulerclient.v1 import client


class TestFields(fakes.CommandTestCase):
    # That they are the service's is a functional test (test_cli.py of
    # the service): these tests run without it.

    def test_every_field_has_a_column_name(self):
        for field in backup_policy.FIELDS:
            self.assertIn(field, v1.LABELS)


class TestCreate(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.create_policy.return_value = fakes.POLICY

    def test_only_what_is_given_is_sent(self):
        self.run_command(backup_policy.CreateBackupPolicy,
                         '--instance', 'i-1', '--schedule', '30 2 * * *')
        self.api.create_policy.assert_called_once_with(
            {'instance_id': 'i-1', 'schedule': '30 2 * * *'})

    def test_every_option(self):
        self.run_command(
            backup_policy.CreateBackupPolicy,
            '--instance', 'i-1', '--schedule', '3600',
            '--schedule-type', 'interval', '--timezone', 'Asia/Tokyo',
            '--name', 'hourly', '--description', 'every hour',
            '--backend', 'fake', '--start-at', '2027-01-01T00:00:00Z',
            '--end-at', '2028-01-01T00:00:00Z', '--remaining-runs', '10',
            '--overlap-policy', 'queue', '--catchup-window', '600',
            '--keep-last', '3', '--keep-daily', '7', '--keep-weekly', '4',
            '--keep-monthly', '12', '--max-age-days', '90',
            '--start-window', '900', '--completion-window', '7200',
            '--exclusion', 'Fri 18:00-Mon 06:00', '--exclusion', '2027-12-24',
            '--backup-param', 'incremental=true',
            '--backup-param', 'fake_build_seconds=2',
            '--backup-param', 'swift_container=FALSE', '--disabled')
        self.api.create_policy.assert_called_once_with({
            'instance_id': 'i-1', 'schedule': '3600',
            'schedule_type': 'interval', 'timezone': 'Asia/Tokyo',
            'name': 'hourly', 'description': 'every hour', 'backend': 'fake',
            'start_at': '2027-01-01T00:00:00Z',
            'end_at': '2028-01-01T00:00:00Z', 'remaining_runs': 10,
            'overlap_policy': 'queue', 'catchup_window': 600,
            'keep_last': 3, 'keep_daily': 7, 'keep_weekly': 4,
            'keep_monthly': 12, 'max_age_days': 90,
            'start_window': 900, 'completion_window': 7200,
            'exclusions': ['Fri 18:00-Mon 06:00', '2027-12-24'],
            'backup_params': {'incremental': True,
                              'fake_build_seconds': '2',
                              'swift_container': False},
            'enabled': False})

    def test_shows_the_created_policy(self):
        columns, values = self.run_command(
            backup_policy.CreateBackupPolicy, '--instance', 'i-1',
            '--schedule', '@daily')
        self.assertEqual(len(backup_policy.FIELDS), len(columns))
        shown = dict(zip(columns, values))
        self.assertEqual('p-1', shown['ID'])
        self.assertEqual('Europe/Berlin', shown['Time Zone'])
        self.assertEqual('2027-01-31T01:30:00Z', shown['Next Execution Time'])
        self.assertEqual(format_columns.DictColumn({'incremental': True}),
                         shown['Backup Params'])
        self.assertEqual("incremental='True'",
                         shown['Backup Params'].human_readable())
        self.assertNotIn('links', columns)

    def test_instance_and_schedule_are_required(self):
        self.assertIn('--schedule', self.assertRefused(
            backup_policy.CreateBackupPolicy, '--instance', 'i-1'))
        self.assertIn('--instance', self.assertRefused(
            backup_policy.CreateBackupPolicy, '--schedule', '@daily'))

    def test_choices_and_numbers_are_checked_before_sending(self):
        required = ('--instance', 'i-1', '--schedule', '@daily')
        self.assertRefused(backup_policy.CreateBackupPolicy, *required,
                           '--schedule-type', 'weekly')
        self.assertRefused(backup_policy.CreateBackupPolicy, *required,
                           '--overlap-policy', 'wait')
        self.assertRefused(backup_policy.CreateBackupPolicy, *required,
                           '--keep-last', 'many')
        self.assertRefused(backup_policy.CreateBackupPolicy, *required,
                           '--backup-param', 'incremental')
        self.api.create_policy.assert_not_called()

    def test_api_errors_pass_through(self):
        self.api.create_policy.side_effect = client.APIError(
            400, "Invalid cron expression 'x': a cron expression has 5 "
                 "fields.")
        command, parsed_args = self.parse(
            backup_policy.CreateBackupPolicy, '--instance', 'i-1',
            '--schedule', 'x')
        error = self.assertRaises(client.APIError, command.take_action,
                                  parsed_args)
        self.assertEqual("Invalid cron expression 'x': a cron expression "
                         "has 5 fields.", str(error))


class TestList(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.list_policies.return_value = [fakes.POLICY]

    def test_no_filters(self):
        columns, rows = self.run_command(backup_policy.ListBackupPolicy)
        self.api.list_policies.assert_called_once_with(
            name=None, instance_id=None, enabled=None, all_projects=None,
            limit=None, marker=None)
        self.assertEqual(('ID', 'Name', 'Instance ID', 'Schedule Type',
                          'Schedule', 'Time Zone', 'Enabled',
                          'Next Execution Time'), columns)
        self.assertEqual([('p-1', 'nightly', 'i-1', 'cron', '30 2 * * *',
                           'Europe/Berlin', True, '2027-01-31T01:30:00Z')],
                         rows)

    def test_filters(self):
        self.run_command(backup_policy.ListBackupPolicy, '--instance', 'i-1',
                         '--name', 'nightly', '--disabled',
                         '--all-projects', '--limit', '5', '--marker', 'p-0')
        self.api.list_policies.assert_called_once_with(
            name='nightly', instance_id='i-1', enabled=False,
            all_projects=True, limit=5, marker='p-0')

    def test_enabled(self):
        self.run_command(backup_policy.ListBackupPolicy, '--enabled')
        self.assertIs(True,
                      self.api.list_policies.call_args.kwargs['enabled'])
        self.assertRefused(backup_policy.ListBackupPolicy, '--enabled',
                           '--disabled')

    def test_long(self):
        columns, rows = self.run_command(backup_policy.ListBackupPolicy,
                                         '--long')
        self.assertEqual(backup_policy.LONG_FIELDS[:8],
                         backup_policy.LIST_FIELDS)
        self.assertIn('Keep Last', columns)
        self.assertIn('Backup Params', columns)
        self.assertEqual(7, rows[0][columns.index('Keep Last')])


class TestShow(fakes.CommandTestCase):

    def test_show(self):
        columns, values = self.run_command(backup_policy.ShowBackupPolicy,
                                           'p-1')
        self.api.find_policy.assert_called_once_with('p-1')
        self.assertEqual(('ID', 'Name', 'Description'), columns[:3])
        self.assertEqual(('p-1', 'nightly', None), values[:3])

    def test_by_name(self):
        columns, values = self.run_command(backup_policy.ShowBackupPolicy,
                                           'nightly')
        self.assertEqual(('p-1', 'nightly'), values[:2])

    def test_unknown_and_ambiguous_names(self):
        for name, message in (
                ('orders', "No backup policy with a name or ID of 'orders' "
                           "exists."),
                ('twins', "More than one backup policy is named 'twins': "
                          "give the ID of the one you mean (p-2, p-3).")):
            command, parsed_args = self.parse(backup_policy.ShowBackupPolicy,
                                              name)
            error = self.assertRaises(exceptions.CommandError,
                                      command.take_action, parsed_args)
            self.assertEqual(message, str(error))


class TestSet(fakes.CommandTestCase):

    def test_only_what_is_given_is_sent(self):
        result = self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                                  '--schedule', '0 3 * * *', '--keep-last',
                                  '14')
        self.assertIsNone(result)
        self.api.update_policy.assert_called_once_with(
            'p-1', {'schedule': '0 3 * * *', 'keep_last': 14})

    def test_by_name(self):
        self.run_command(backup_policy.SetBackupPolicy, 'nightly',
                         '--name', 'nightly-berlin')
        self.api.update_policy.assert_called_once_with(
            'p-1', {'name': 'nightly-berlin'})

    def test_unknown_name_changes_nothing(self):
        command, parsed_args = self.parse(backup_policy.SetBackupPolicy,
                                          'orders', '--keep-last', '3')
        self.assertRaises(exceptions.CommandError, command.take_action,
                          parsed_args)
        self.api.update_policy.assert_not_called()

    def test_no_options_remove_values(self):
        self.run_command(backup_policy.SetBackupPolicy, 'p-1', '--no-end-at',
                         '--no-remaining-runs', '--no-description',
                         '--no-keep-last', '--no-catchup-window')
        self.api.update_policy.assert_called_once_with('p-1', {
            'end_at': None, 'remaining_runs': None, 'description': None,
            'keep_last': None, 'catchup_window': None})

    def test_a_value_and_its_removal_exclude_each_other(self):
        self.assertIn('not allowed with', self.assertRefused(
            backup_policy.SetBackupPolicy, 'p-1', '--end-at',
            '2028-01-01T00:00:00Z', '--no-end-at'))

    def test_required_fields_cannot_be_removed(self):
        self.assertRefused(backup_policy.SetBackupPolicy, 'p-1',
                           '--no-schedule')
        self.assertRefused(backup_policy.SetBackupPolicy, 'p-1',
                           '--no-instance')

    def test_backup_params_are_added_to_those_of_the_policy(self):
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--backup-param', 'swift_container=nightly')
        self.api.update_policy.assert_called_once_with('p-1', {
            'backup_params': {'incremental': True,
                              'swift_container': 'nightly'}})

    def test_no_backup_params_replaces_them(self):
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--no-backup-params', '--backup-param',
                         'incremental=false')
        self.api.update_policy.assert_called_once_with(
            'p-1', {'backup_params': {'incremental': False}})

    def test_no_backup_params_alone_removes_them(self):
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--no-backup-params')
        self.api.update_policy.assert_called_once_with(
            'p-1', {'backup_params': None})

    def test_nothing_to_change_sends_nothing(self):
        self.run_command(backup_policy.SetBackupPolicy, 'p-1')
        self.api.update_policy.assert_not_called()

    def test_enabled_is_not_set_here(self):
        # Pausing and resuming are actions with their own rules.
        self.assertRefused(backup_policy.SetBackupPolicy, 'p-1',
                           '--disabled')


class TestDelete(fakes.CommandTestCase):

    def test_several_by_name_or_id(self):
        self.assertIsNone(self.run_command(
            backup_policy.DeleteBackupPolicy, 'nightly', 'p-2'))
        self.assertEqual([mock.call('p-1'), mock.call('p-2')],
                         self.api.delete_policy.call_args_list)

    def test_delete_backups(self):
        self.run_command(backup_policy.DeleteBackupPolicy, 'p-1',
                         '--delete-backups')
        self.api.delete_policy.assert_called_once_with(
            'p-1', delete_backups=True)

    def test_one_failure_does_not_stop_the_others(self):
        self.api.delete_policy.side_effect = [
            client.APIError(409, 'Busy.'), None]
        command, parsed_args = self.parse(backup_policy.DeleteBackupPolicy,
                                          'p-1', 'nope', 'p-2')
        with self.assertLogs('dbaasschedulerclient.osc.v1', 'ERROR') as logs:
            error = self.assertRaises(exceptions.CommandError,
                                      command.take_action, parsed_args)
        self.assertEqual('Failed to delete 2 of 3 backup policies.',
                         str(error))
        self.assertEqual([mock.call('p-1'), mock.call('p-2')],
                         self.api.delete_policy.call_args_list)
        self.assertIn('Failed to delete backup policy p-1: Busy.',
                      logs.output[0])
        self.assertIn("Failed to delete backup policy nope: No backup "
                      "policy with a name or ID of 'nope' exists.",
                      logs.output[1])


class TestPauseResume(fakes.CommandTestCase):

    def test_pause_with_a_reason(self):
        self.assertIsNone(self.run_command(
            backup_policy.PauseBackupPolicy, 'p-1', 'p-2', '--reason',
            'maintenance'))
        self.assertEqual([mock.call('p-1', reason='maintenance'),
                          mock.call('p-2', reason='maintenance')],
                         self.api.pause_policy.call_args_list)

    def test_pause_without_a_reason(self):
        self.run_command(backup_policy.PauseBackupPolicy, 'p-1')
        self.api.pause_policy.assert_called_once_with('p-1', reason=None)

    def test_resume(self):
        self.run_command(backup_policy.ResumeBackupPolicy, 'p-1')
        self.api.resume_policy.assert_called_once_with('p-1')

    def test_by_name(self):
        self.run_command(backup_policy.PauseBackupPolicy, 'nightly')
        self.api.pause_policy.assert_called_once_with('p-1', reason=None)
        self.run_command(backup_policy.ResumeBackupPolicy, 'nightly')
        self.api.resume_policy.assert_called_once_with('p-1')

    def test_resume_failure(self):
        self.api.resume_policy.side_effect = client.APIError(
            400, 'the policy has no runs remaining.')
        command, parsed_args = self.parse(backup_policy.ResumeBackupPolicy,
                                          'p-1')
        with self.assertLogs('dbaasschedulerclient.osc.v1', 'ERROR'):
            error = self.assertRaises(exceptions.CommandError,
                                      command.take_action, parsed_args)
        self.assertEqual('Failed to resume 1 of 1 backup policies.',
                         str(error))


class TestRun(fakes.CommandTestCase):

    def test_shows_the_manual_execution(self):
        self.api.run_policy.return_value = dict(
            fakes.EXECUTION, trigger='manual', status='PENDING')
        columns, values = self.run_command(backup_policy.RunBackupPolicy,
                                           'p-1')
        self.api.run_policy.assert_called_once_with('p-1')
        self.run_command(backup_policy.RunBackupPolicy, 'nightly')
        self.assertEqual(2, self.api.run_policy.call_count)
        self.api.run_policy.assert_called_with('p-1')
        shown = dict(zip(columns, values))
        self.assertEqual(('e-1', 'p-1', 'manual', 'PENDING'),
                         (shown['ID'], shown['Policy ID'], shown['Trigger'],
                          shown['Status']))


class TestNextRuns(fakes.CommandTestCase):

    def test_local_time_in_the_policy_time_zone(self):
        self.api.next_runs.return_value = {
            'next_runs': ['2027-03-28T00:30:00Z', '2027-03-29T00:30:00Z'],
            'timezone': 'Europe/Berlin'}
        columns, rows = self.run_command(backup_policy.NextRunsBackupPolicy,
                                         'p-1', '--count', '2')
        self.api.next_runs.assert_called_once_with('p-1', count=2)
        self.assertEqual(('Run Time', 'Local Time'), columns)
        # Daylight saving time starts in Berlin on 2027-03-28 at 02:00.
        self.assertEqual(
            [('2027-03-28T00:30:00Z', '2027-03-28T01:30:00+01:00'),
             ('2027-03-29T00:30:00Z', '2027-03-29T02:30:00+02:00')], rows)

    def test_count_is_the_api_default_when_not_given(self):
        self.api.next_runs.return_value = {'next_runs': [],
                                           'timezone': 'UTC'}
        self.assertEqual((('Run Time', 'Local Time'), []), self.run_command(
            backup_policy.NextRunsBackupPolicy, 'p-1'))
        self.api.next_runs.assert_called_once_with('p-1', count=None)

    def test_by_name(self):
        self.api.next_runs.return_value = {'next_runs': [],
                                           'timezone': 'UTC'}
        self.run_command(backup_policy.NextRunsBackupPolicy, 'nightly')
        self.api.next_runs.assert_called_once_with('p-1', count=None)

    def test_time_zone_unknown_here(self):
        self.api.next_runs.return_value = {
            'next_runs': ['2027-01-31T01:30:00.250000Z'],
            'timezone': 'Mars/Olympus_Mons'}
        with self.assertLogs('dbaasschedulerclient.osc.v1', 'WARNING'):
            columns, rows = self.run_command(
                backup_policy.NextRunsBackupPolicy, 'p-1')
        self.assertEqual(
            [('2027-01-31T01:30:00.250000Z',
              '2027-01-31T01:30:00.250000+00:00')], rows)


class TestBackupParam(fakes.CommandTestCase):

    def test_booleans(self):
        self.assertIs(True, backup_policy.backup_param('true'))
        self.assertIs(True, backup_policy.backup_param('True'))
        self.assertIs(False, backup_policy.backup_param('FALSE'))

    def test_the_rest_is_text(self):
        for value in ('1', '0', 'yes', 'no', '', 'nightly'):
            self.assertEqual(value, backup_policy.backup_param(value))


class TestLifecycle(fakes.CommandTestCase):

    def test_retention_forecast(self):
        self.api.lifecycle.return_value = {'retention': [
            {'at': '2027-02-01T02:30:00Z', 'backup_id': 'next-run-1',
             'expires': [{'backup_id': 'b-1',
                          'delete_after': '2027-02-02T02:30:00Z'}],
             'deletes': [], 'remaining': 3},
            {'at': '2027-02-02T02:30:00Z', 'backup_id': 'next-run-2',
             'expires': [],
             'deletes': [{'backup_id': 'b-1', 'with': None},
                         {'backup_id': 'b-2', 'with': 'b-1'}],
             'remaining': 2}]}
        columns, rows = self.run_command(
            backup_policy.LifecycleBackupPolicy, 'nightly', '--count', '2',
            '--retention')
        self.api.lifecycle.assert_called_once_with('p-1', count=2)
        self.assertEqual(('Run at', 'New backup', 'Expires', 'Deletes',
                          'Remaining'), columns)
        self.assertEqual(
            [('2027-02-01T02:30:00Z', 'next-run-1',
              'b-1 (after 2027-02-02T02:30:00Z)', '', 3),
             ('2027-02-02T02:30:00Z', 'next-run-2', '',
              'b-1\nb-2 (with b-1)', 2)], rows)

    def test_min_keep_option(self):
        self.assertIn('min_keep', backup_policy.FIELDS)
        self.assertIn('min_keep', backup_policy.NULLABLE)


class TestWindows(fakes.CommandTestCase):

    def test_set_adds_exclusions_or_replaces_them(self):
        self.api.find_policy.side_effect = lambda name: dict(
            fakes.POLICY, id='p-1', exclusions=['Sun'])
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--exclusion', 'Sat')
        self.api.update_policy.assert_called_with(
            'p-1', {'exclusions': ['Sun', 'Sat']})
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--no-exclusions', '--exclusion', 'Sat')
        self.api.update_policy.assert_called_with(
            'p-1', {'exclusions': ['Sat']})
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--no-exclusions', '--no-start-window',
                         '--completion-window', '3600')
        self.api.update_policy.assert_called_with(
            'p-1', {'exclusions': [], 'start_window': None,
                    'completion_window': 3600})

    def test_lifecycle_shows_the_slots(self):
        self.api.lifecycle.return_value = {'slots': [
            {'scheduled_at': '2027-03-28T00:30:00Z',
             'start_window_ends_at': None,
             'completion_window_ends_at': None, 'excluded': 'Sun'},
            {'scheduled_at': '2027-03-29T00:30:00Z',
             'start_window_ends_at': '2027-03-29T08:30:00Z',
             'completion_window_ends_at': '2027-03-30T00:30:00Z',
             'excluded': None}]}
        columns, rows = self.run_command(
            backup_policy.LifecycleBackupPolicy, 'p-1', '--count', '2')
        self.api.lifecycle.assert_called_once_with('p-1', count=2)
        self.assertEqual(('Slot', 'Local Time', 'Start By', 'Finish By',
                          'Excluded'), columns)
        self.assertEqual(
            [('2027-03-28T00:30:00Z', '2027-03-28T01:30:00+01:00', None,
              None, 'Sun'),
             ('2027-03-29T00:30:00Z', '2027-03-29T02:30:00+02:00',
              '2027-03-29T08:30:00Z', '2027-03-30T00:30:00Z', '')],
            list(rows))


class TestVerification(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.create_policy.return_value = fakes.POLICY

    def test_create_with_a_check(self):
        self.run_command(backup_policy.CreateBackupPolicy,
                         '--instance', 'i-1', '--schedule', '@daily',
                         '--verify-every', '7', '--verify-sql',
                         'SELECT COUNT(*) FROM t', '--verify-expected', '3')
        self.api.create_policy.assert_called_once_with(
            {'instance_id': 'i-1', 'schedule': '@daily', 'verify_every': 7,
             'verify_check': {'sql': 'SELECT COUNT(*) FROM t',
                              'expected': '3'}})

    def test_set_turns_it_off(self):
        self.api.find_policy.side_effect = lambda name: dict(
            fakes.POLICY, id='p-1')
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--no-verify-every', '--no-verify-sql')
        self.api.update_policy.assert_called_with(
            'p-1', {'verify_every': None, 'verify_check': None})

    def test_shown(self):
        self.assertIn('verify_every', backup_policy.FIELDS)
        self.assertIn('verify_check', backup_policy.FIELDS)
        self.assertIn('verify_schedule', backup_policy.FIELDS)
        self.assertIn('verify_next_at', backup_policy.FIELDS)

    def test_create_on_a_schedule(self):
        self.run_command(backup_policy.CreateBackupPolicy,
                         '--instance', 'i-1', '--schedule', '@daily',
                         '--verify-schedule', '0 4 * * 0')
        self.api.create_policy.assert_called_once_with(
            {'instance_id': 'i-1', 'schedule': '@daily',
             'verify_schedule': '0 4 * * 0'})

    def test_set_switches_from_a_schedule_to_every_nth(self):
        self.api.find_policy.side_effect = lambda name: dict(
            fakes.POLICY, id='p-1')
        self.run_command(backup_policy.SetBackupPolicy, 'p-1',
                         '--no-verify-schedule', '--verify-every', '3')
        self.api.update_policy.assert_called_with(
            'p-1', {'verify_schedule': None, 'verify_every': 3})
