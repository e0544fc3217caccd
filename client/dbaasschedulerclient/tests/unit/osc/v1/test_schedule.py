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
"""``openstack database backup schedule preview``."""

from dbaasschedulerclient.osc.v1 import schedule
from dbaasschedulerclient.tests.unit.osc import fakes


class TestPreview(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.preview_schedule.return_value = {
            'next_runs': ['2027-03-28T00:30:00Z'],
            'timezone': 'Europe/Berlin', 'example': False,
            'slots': [{'scheduled_at': '2027-03-28T00:30:00Z',
                       'start_window_ends_at': '2027-03-28T08:30:00Z',
                       'completion_window_ends_at': '2027-03-29T00:30:00Z',
                       'excluded': None}]}

    def test_every_option(self):
        columns, rows = self.run_command(
            schedule.PreviewSchedule, '--schedule', '30 2 * * *',
            '--schedule-type', 'cron', '--timezone', 'Europe/Berlin',
            '--start-at', '2027-03-01T00:00:00Z', '--end-at',
            '2027-04-01T00:00:00Z', '--count', '1', '--start-window', '600',
            '--completion-window', '7200', '--exclusion', 'Sat-Sun',
            '--exclusion', '2027-12-24')
        self.api.preview_schedule.assert_called_once_with(
            '30 2 * * *', schedule_type='cron', timezone='Europe/Berlin',
            start_at='2027-03-01T00:00:00Z', end_at='2027-04-01T00:00:00Z',
            count=1, start_window=600, completion_window=7200,
            exclusions=['Sat-Sun', '2027-12-24'])
        self.assertEqual(('Run Time', 'Local Time', 'Start By', 'Finish By',
                          'Excluded'), columns)
        self.assertEqual([('2027-03-28T00:30:00Z',
                           '2027-03-28T01:30:00+01:00',
                           '2027-03-28T08:30:00Z', '2027-03-29T00:30:00Z',
                           '')], list(rows))

    def test_only_the_schedule_is_required(self):
        self.run_command(schedule.PreviewSchedule, '--schedule', '@daily')
        self.api.preview_schedule.assert_called_once_with(
            '@daily', schedule_type=None, timezone=None, start_at=None,
            end_at=None, count=None, start_window=None,
            completion_window=None, exclusions=None)
        self.assertIn('--schedule', self.assertRefused(
            schedule.PreviewSchedule, '--timezone', 'UTC'))
        self.assertRefused(schedule.PreviewSchedule, '--schedule', '@daily',
                           '--schedule-type', 'weekly')

    def test_hashed_schedules_are_an_example(self):
        self.api.preview_schedule.return_value = dict(
            self.api.preview_schedule.return_value, example=True)
        with self.assertLogs('dbaasschedulerclient.osc.v1.schedule',
                             'WARNING') as logs:
            self.run_command(schedule.PreviewSchedule, '--schedule',
                             'H 2 * * *')
        self.assertIn('one possible ID', logs.output[0])
