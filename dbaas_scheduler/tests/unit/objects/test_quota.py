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
"""The [quota] limits, the messages, Retry-After and their HTTP answers."""

import datetime
import json
import types
from unittest import mock

from oslo_utils import timeutils

from dbaas_scheduler.api import fault
from dbaas_scheduler import exception
from dbaas_scheduler.objects import quota
from dbaas_scheduler.tests import base

NOW = timeutils.utcnow(True)
POLICY = types.SimpleNamespace(id='p-1', project_id='project-a')


class TestConfiguredLimits(base.TestCase):

    def setUp(self):
        super().setUp()
        self.count_policies = self.patch(
            'dbaas_scheduler.db.quota.count_policies')
        self.run_times = self.patch(
            'dbaas_scheduler.db.quota.manual_run_times')

    def patch(self, target):
        patcher = mock.patch(target, autospec=True)
        self.addCleanup(patcher.stop)
        return patcher.start()

    def test_not_configured_without_an_endpoint(self):
        self.assertFalse(quota.unified_limits_configured(self.conf))

    def test_defaults(self):
        self.assertEqual(100, self.conf.quota.policies_per_project)
        self.assertEqual(10, self.conf.quota.manual_runs_per_policy_per_hour)

    def test_policies_under_and_at_the_limit(self):
        self.flags(group='quota', policies_per_project=3)
        self.count_policies.return_value = 2
        self.assertEqual(3, quota.check_policy_quota(None, self.conf, 'p'))
        self.count_policies.return_value = 3
        error = self.assertRaises(exception.QuotaExceeded,
                                  quota.check_policy_quota, None, self.conf,
                                  'project-a')
        self.assertEqual(
            'Quota exceeded: project project-a may have at most 3 backup '
            'policies and has 3. Delete a policy you no longer need, or ask '
            'the operator for a higher limit (resource backup_policies).',
            str(error))

    def test_minus_one_is_no_limit_and_counts_nothing(self):
        self.flags(group='quota', policies_per_project=-1,
                   manual_runs_per_policy_per_hour=-1)
        self.assertIsNone(quota.check_policy_quota(None, self.conf, 'p'))
        self.assertIsNone(quota.check_manual_run_rate(None, self.conf,
                                                      POLICY, NOW))
        self.count_policies.assert_not_called()
        self.run_times.assert_not_called()
        # Nor is anything counted again.
        quota.verify_policy_quota(None, 'p', None, 'id')
        quota.verify_manual_run_rate(None, POLICY, None, 'e', NOW)
        self.count_policies.assert_not_called()

    def test_retry_after_is_when_the_oldest_needed_run_leaves(self):
        self.flags(group='quota', manual_runs_per_policy_per_hour=2)
        minutes = datetime.timedelta(minutes=1)
        # Three runs (the limit was lowered): two must leave the hour.
        self.run_times.return_value = [NOW - 50 * minutes,
                                       NOW - 40 * minutes,
                                       NOW - 5 * minutes]
        error = self.assertRaises(exception.RateLimitExceeded,
                                  quota.check_manual_run_rate, None,
                                  self.conf, POLICY, NOW)
        self.assertEqual(20 * 60, error.retry_after)
        self.assertEqual(
            'Rate limit exceeded: policy p-1 was run by hand too often; at '
            'most 2 are allowed in an hour and 3 were taken. Try again in '
            '1200 seconds.', str(error))
        self.run_times.assert_called_with(None, 'p-1',
                                          NOW - quota.RATE_WINDOW)

    def test_a_limit_of_zero_turns_manual_runs_off(self):
        self.flags(group='quota', manual_runs_per_policy_per_hour=0)
        self.run_times.return_value = []
        error = self.assertRaises(exception.QuotaExceeded,
                                  quota.check_manual_run_rate, None,
                                  self.conf, POLICY, NOW)
        self.assertIn('Manual runs are turned off', str(error))

    def test_verify_deletes_a_policy_over_the_limit(self):
        self.count_policies.return_value = 4
        with mock.patch('dbaas_scheduler.db.api.delete_policy',
                        autospec=True) as delete:
            self.assertRaises(exception.QuotaExceeded,
                              quota.verify_policy_quota, None, 'p', 3, 'id')
        delete.assert_called_once_with(None, 'id')
        self.count_policies.return_value = 3
        with mock.patch('dbaas_scheduler.db.api.delete_policy',
                        autospec=True) as delete:
            quota.verify_policy_quota(None, 'p', 3, 'id')
        delete.assert_not_called()


class TestAnswers(base.TestCase):

    def test_quota_is_403(self):
        response = fault.FaultWrapper.response_for(exception.QuotaExceeded(
            project_id='p', limit=1, usage=1, what='backup policies',
            advice='Delete one.'), 'req-1')
        self.assertEqual(403, response.status_code)
        self.assertNotIn('Retry-After', response.headers)
        self.assertEqual('dbaas_scheduler.quota_exceeded',
                         json.loads(response.text)['errors'][0]['code'])

    def test_rate_is_429_with_retry_after(self):
        response = fault.FaultWrapper.response_for(
            exception.RateLimitExceeded(what='x', limit=1, usage=1,
                                        window='an hour', retry_after=42.2),
            'req-1')
        self.assertEqual(429, response.status_code)
        self.assertEqual('42', response.headers['Retry-After'])
        body = json.loads(response.text)['errors'][0]
        self.assertEqual('dbaas_scheduler.rate_limit_exceeded', body['code'])
        self.assertEqual('Too Many Requests', body['title'])
