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
"""Creating policies: defaults, validation and the first run time."""

import datetime

from oslo_utils import uuidutils

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import exception
from dbaas_scheduler import policies
from dbaas_scheduler import schedule
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional import db_fixtures

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class TestCreatePolicy(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'sqlite'

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='user-a')

    def create(self, **values):
        values.setdefault('instance_id', 'instance-1')
        values.setdefault('schedule', '30 2 * * *')
        return policies.create_policy(self.context, self.conf, values,
                                      now=NOW)

    def test_defaults(self):
        policy = self.create()
        self.assertEqual(('trove', 'cron', 'UTC', 'skip', True),
                         (policy.backend, policy.schedule_type,
                          policy.timezone, policy.overlap_policy,
                          policy.enabled))
        self.assertEqual(('project-a', 'user-a', 'backup-instance-1'),
                         (policy.project_id, policy.user_id, policy.name))
        self.assertEqual(datetime.datetime(2026, 11, 23, 2, 30, tzinfo=UTC),
                         policy.next_execution_time)

    def test_time_zone(self):
        policy = self.create(timezone='Asia/Tokyo')
        # 02:30 in Tokyo is 17:30 UTC the day before.
        self.assertEqual(datetime.datetime(2026, 11, 22, 17, 30, tzinfo=UTC),
                         policy.next_execution_time)

    def test_hashed_schedule_uses_the_policy_id(self):
        policy_id = uuidutils.generate_uuid()
        policy = self.create(id=policy_id, schedule='H 3 * * *')
        again = policies.next_runs(self.conf, policy, 1, now=NOW)
        self.assertEqual(again, [policy.next_execution_time])
        self.assertEqual(3, policy.next_execution_time.hour)

    def test_hashed_schedule_is_stored_resolved(self):
        policy = self.create(schedule='H H * * *')
        self.assertEqual(
            schedule.resolve_hashed_fields('cron', 'H H * * *', policy.id),
            policy.resolved_schedule)
        changed = policies.update_policy(self.context, self.conf, policy,
                                         {'schedule': '0 4 * * *'}, now=NOW)
        self.assertIsNone(changed.resolved_schedule)
        self.assertIsNone(self.create().resolved_schedule)

    def test_interval_is_counted_from_creation_by_default(self):
        policy = self.create(schedule_type='interval', schedule='3600')
        self.assertEqual(NOW, policy.start_at)
        # Nothing runs at creation: the first run is one interval later.
        self.assertEqual(NOW + datetime.timedelta(hours=1),
                         policy.next_execution_time)

    def test_created_paused(self):
        policy = self.create(enabled=False)
        self.assertFalse(policy.enabled)
        self.assertIsNone(policy.next_execution_time)

    def test_next_runs_preview(self):
        policy = self.create(schedule='0 */6 * * *')
        runs = policies.next_runs(self.conf, policy, 3, now=NOW)
        self.assertEqual([18, 0, 6], [r.hour for r in runs])
        self.flags(max_next_runs=2, group='api')
        self.assertEqual(2, len(policies.next_runs(self.conf, policy, 50,
                                                   now=NOW)))

    def test_invalid_input(self):
        cases = [
            (dict(color='blue'), 'unknown field(s): color'),
            (dict(instance_id=''), 'instance_id must not be empty'),
            (dict(overlap_policy='wait'), 'overlap_policy must be one of'),
            (dict(backend='tape'), "unknown backend 'tape'"),
            (dict(keep_last=0), 'keep_last must be a whole number of at '
                                'least 1'),
            (dict(catchup_window=-1), 'catchup_window must be a whole '
                                      'number of at least 0'),
            (dict(remaining_runs=True), 'remaining_runs must be'),
            (dict(backup_params=[1]), 'backup_params must be an object'),
            (dict(schedule='*/1 * * * *'), 'more often than the minimum'),
            (dict(timezone='Mars/Base'), 'Unknown time zone'),
            (dict(schedule=None), 'schedule is required'),
        ]
        for values, message in cases:
            error = self.assertRaises(exception.Invalid, self.create,
                                      **values)
            self.assertIn(message, str(error), values)

    def test_project_is_required(self):
        self.context = dbaas_context.RequestContext()
        error = self.assertRaises(exception.Invalid, self.create)
        self.assertIn('belongs to a project', str(error))
