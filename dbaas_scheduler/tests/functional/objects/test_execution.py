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
"""Executions as the interfaces read them: lists, pages and one by ID."""

import datetime

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler.objects import execution as execution_obj
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class _ExecutionTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.get_admin_context()
        # Three slots of policy p-a (project a), one of p-b (project b),
        # an hour apart: p-a's at 09:00, 10:00 and 11:00, p-b's at 10:30.
        self.made = {}
        for policy_id, project_id, hour, minute, status in (
                ('p-a', 'project-a', 9, 0, 'SUCCEEDED'),
                ('p-a', 'project-a', 10, 0, 'FAILED'),
                ('p-a', 'project-a', 11, 0, 'SUCCEEDED'),
                ('p-b', 'project-b', 10, 30, 'SUCCEEDED')):
            scheduled_at = NOW.replace(hour=hour, minute=minute)
            made = db_api.create_execution(self.context, {
                'policy_id': policy_id, 'project_id': project_id,
                'instance_id': 'instance-' + policy_id,
                'scheduled_at': scheduled_at, 'status': status,
                'created_at': scheduled_at, 'owner': 'worker-1',
                'claim_id': 'claim-1'})
            self.made[(policy_id, hour)] = made.id

    def ids(self, executions):
        return [execution.id for execution in executions]

    def test_every_project_newest_slot_first(self):
        self.assertEqual(
            [self.made[key] for key in (('p-a', 11), ('p-b', 10),
                                        ('p-a', 10), ('p-a', 9))],
            self.ids(execution_obj.list_executions(self.context)))

    def test_filters(self):
        self.assertEqual(
            [self.made[('p-a', 11)], self.made[('p-a', 9)]],
            self.ids(execution_obj.list_executions(
                self.context, project_id='project-a', status='SUCCEEDED')))
        self.assertEqual(
            [self.made[('p-b', 10)]],
            self.ids(execution_obj.list_executions(
                self.context, instance_id='instance-p-b')))
        self.assertEqual(
            [self.made[('p-a', 11)], self.made[('p-a', 10)]],
            self.ids(execution_obj.list_executions(
                self.context, policy_id='p-a',
                since=NOW.replace(hour=10))))

    def test_pages(self):
        first = execution_obj.list_executions(
            self.context, project_id='project-a', limit=2)
        self.assertEqual([self.made[('p-a', 11)], self.made[('p-a', 10)]],
                         self.ids(first))
        rest = execution_obj.list_executions(
            self.context, project_id='project-a', limit=2,
            marker=first[-1].id)
        self.assertEqual([self.made[('p-a', 9)]], self.ids(rest))

    def test_a_marker_of_another_project_is_no_marker(self):
        # Its place in the order is not project a's to learn.
        self.assertRaises(exception.Invalid, execution_obj.list_executions,
                          self.context, project_id='project-a',
                          marker=self.made[('p-b', 10)])

    def test_get(self):
        found = execution_obj.get_execution(self.context,
                                            self.made[('p-b', 10)])
        self.assertEqual(('p-b', 'project-b'),
                         (found.policy_id, found.project_id))
        self.assertRaises(exception.ExecutionNotFound,
                          execution_obj.get_execution, self.context,
                          'no-such-execution')

    def test_as_dict_shows_no_claim(self):
        shown = execution_obj.as_dict(execution_obj.get_execution(
            self.context, self.made[('p-a', 9)]))
        self.assertEqual(list(execution_obj.VISIBLE_FIELDS) + ['held'],
                         list(shown))
        self.assertEqual(NOW.replace(hour=9), shown['scheduled_at'])
        # The worker's fencing token and lease are its own business.
        for field in ('owner', 'claim_id', 'lease_expires_at'):
            self.assertNotIn(field, shown)


class TestExecutionsSQLite(_ExecutionTests, base.TestCase):
    DRIVER = 'sqlite'


class TestExecutionsMySQL(_ExecutionTests, base.TestCase):
    DRIVER = 'mysql'


class TestExecutionsPostgreSQL(_ExecutionTests, base.TestCase):
    DRIVER = 'postgresql'
