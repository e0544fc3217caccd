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
"""The coverage report over real policy rows, on every database.

Mixed states in two projects; the fake backend lists the instances each
project has, local instances are known from their policies alone, and
one project's report names nothing of the other's.
"""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import fake
from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import coverage
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import coverage as db_coverage
from dbaas_scheduler.objects import coverage as coverage_obj
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

HOUR = datetime.timedelta(hours=1)
DAY = datetime.timedelta(days=1)


class _Coverage(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.get_admin_context()
        self.now = timeutils.utcnow(True)
        self.flags(group='api', enabled_backends=['fake', 'local'])
        self.flags(group='coverage', max_age=36 * 3600, min_daily=1,
                   min_keep=7)
        loader.reset()
        self.addCleanup(loader.reset)
        self.patch(fake.FakeBackend, 'instances', {
            'project-a': {'i-protected': 'orders', 'i-none': 'wiki',
                          'i-paused': 'crm', 'i-stale': 'shop',
                          'i-weekly': 'logs', 'i-few': 'metrics'},
            'project-b': {'i-other': 'theirs'},
        })

    def add_policy(self, instance_id, project_id='project-a',
                   backend='fake', **values):
        row = dict(name='p-%s' % uuidutils.generate_uuid(),
                   project_id=project_id, instance_id=instance_id,
                   backend=backend, schedule_type='cron',
                   schedule='0 1 * * *', timezone='UTC',
                   created_at=self.now - 30 * DAY,
                   next_execution_time=self.now + DAY,
                   last_success_at=self.now - HOUR, daily_runs=1.0,
                   keep_daily=7, enabled=True)
        row.update(values)
        return db_api.create_policy(self.context, row)

    def states(self, report):
        return {(i['backend'], i['instance_id']): i['state']
                for i in report['instances']}

    def make_mixed_states(self):
        self.add_policy('i-protected')
        self.add_policy('i-protected', keep_daily=None, keep_last=3,
                        daily_runs=0.99)
        self.add_policy('i-paused', enabled=False, next_execution_time=None)
        self.add_policy('i-stale', last_success_at=self.now - 3 * DAY)
        # A user's RPO shorter than max_age: stale sooner.
        self.add_policy('i-rpo', rpo=1800)
        self.add_policy('i-weekly', daily_runs=1 / 7.0, keep_daily=None,
                        keep_weekly=10)
        self.add_policy('i-few', keep_daily=3)
        # A backup older than max_age, and a paused policy: paused wins.
        self.add_policy('i-paused', enabled=False, next_execution_time=None,
                        last_success_at=self.now - 9 * DAY)
        self.add_policy('orders-db', backend='local', keep_daily=None)
        self.add_policy('i-other', project_id='project-b')

    def test_mixed_states_of_a_project(self):
        self.make_mixed_states()
        report = coverage_obj.report(self.context, self.conf, 'project-a',
                                     now=self.now)
        self.assertEqual({
            ('fake', 'i-protected'): 'protected',
            ('fake', 'i-none'): 'unprotected',
            ('fake', 'i-paused'): 'paused',
            ('fake', 'i-stale'): 'stale',
            ('fake', 'i-rpo'): 'stale',
            ('fake', 'i-weekly'): 'below_minimum',
            ('fake', 'i-few'): 'below_minimum',
            ('local', 'orders-db'): 'protected',
        }, self.states(report))
        self.assertEqual({'unprotected': 1, 'paused': 1, 'stale': 2,
                          'verification_failed': 0, 'below_minimum': 2,
                          'protected': 2}, report['counts'])
        self.assertEqual([], report['incomplete'])
        by_id = {i['instance_id']: i for i in report['instances']}
        self.assertEqual('wiki', by_id['i-none']['name'])
        self.assertEqual('backend', by_id['i-none']['source'])
        self.assertEqual(0, by_id['i-none']['policies'])
        # Not listed by Trove nor fake: known from its policy alone.
        self.assertEqual('policies', by_id['orders-db']['source'])
        self.assertEqual('policies', by_id['i-rpo']['source'])
        self.assertEqual(1800, by_id['i-rpo']['stale_after'])
        self.assertEqual(2, by_id['i-protected']['policies'])
        self.assertAlmostEqual(1.99, by_id['i-protected']['daily_runs'])

    def test_a_failed_verification(self):
        # An enabled policy whose newest verification failed: the
        # instance is verification_failed, after stale and before
        # below_minimum; a paused policy's failure says nothing.
        self.add_policy('i-protected', verify_every=1, verify_failing=True)
        self.add_policy('i-stale', verify_every=1, verify_failing=True,
                        last_success_at=self.now - 3 * DAY)
        self.add_policy('i-few', keep_daily=3, verify_every=1,
                        verify_failing=True)
        self.add_policy('i-weekly')
        self.add_policy('i-weekly', enabled=False, next_execution_time=None,
                        verify_every=1, verify_failing=True)
        report = coverage_obj.report(self.context, self.conf, 'project-a',
                                     now=self.now)
        reasons = {i['instance_id']: i['reasons']
                   for i in report['instances']}
        self.assertEqual(['verification_failed'], reasons['i-protected'])
        self.assertEqual(['stale', 'verification_failed'],
                         reasons['i-stale'])
        self.assertEqual(['verification_failed', 'below_minimum'],
                         reasons['i-few'])
        self.assertEqual(['protected'], reasons['i-weekly'])
        self.assertEqual(2, report['counts']['verification_failed'])
        failed = {i.instance_id for i in db_coverage.policy_instances(
            self.context, 'project-a') if i.verification_failed}
        self.assertEqual({'i-protected', 'i-stale', 'i-few'}, failed)

    def test_another_project_sees_none_of_it(self):
        self.make_mixed_states()
        report = coverage_obj.report(self.context, self.conf, 'project-b',
                                     now=self.now)
        self.assertEqual({('fake', 'i-other'): 'protected'},
                         self.states(report))
        self.assertEqual({'project-b'},
                         {i['project_id'] for i in report['instances']})
        nobody = coverage_obj.report(self.context, self.conf, 'project-c',
                                     now=self.now)
        self.assertEqual([], nobody['instances'])

    def test_all_projects_and_a_state(self):
        self.make_mixed_states()
        report = coverage_obj.report(self.context, self.conf, None,
                                     state='unprotected', now=self.now)
        self.assertEqual([('project-a', 'i-none')],
                         [(i['project_id'], i['instance_id'])
                          for i in report['instances']])
        self.assertEqual(1, report['counts']['unprotected'])
        self.assertEqual(9, sum(report['counts'].values()))

    def test_counts_are_stored_for_the_metrics(self):
        self.make_mixed_states()
        coverage_obj.report(self.context, self.conf, 'project-a',
                            now=self.now)
        stored = db_coverage.stored_counts(self.context, self.now - HOUR)
        self.assertIn(('project-a', 'unprotected', 1), stored)
        self.assertIn(('project-a', 'protected', 2), stored)
        self.assertEqual({'project-a'}, {row[0] for row in stored})
        # A later report replaces them.
        self.patch(fake.FakeBackend, 'instances', {})
        coverage_obj.report(self.context, self.conf, 'project-a',
                            now=self.now + HOUR)
        stored = db_coverage.stored_counts(self.context, self.now)
        self.assertIn(('project-a', 'unprotected', 0), stored)
        self.assertEqual(6, len(stored))

    def test_a_backend_that_fails_to_list_is_named(self):
        self.make_mixed_states()

        def refuse(backend, actor):
            raise RuntimeError('Trove is down')

        self.patch(fake.FakeBackend, 'list_instances', refuse)
        report = coverage_obj.report(self.context, self.conf, 'project-a',
                                     now=self.now)
        self.assertEqual([{'backend': 'fake', 'project_id': 'project-a',
                           'reason': 'Trove is down'}],
                         report['incomplete'])
        # The policies still say what they know; nothing is stored.
        self.assertEqual('protected', self.states(report)[
            ('fake', 'i-protected')])
        self.assertNotIn(('fake', 'i-none'), self.states(report))
        self.assertEqual([], db_coverage.stored_counts(
            self.context, self.now - HOUR))

    def test_rows_read_through_the_driver_are_the_instances(self):
        # What the report reads (plain tuples, times as text) says what
        # the typed read says: NULL times, microseconds or none, times
        # given in another zone, several policies an instance.
        tokyo = datetime.timezone(datetime.timedelta(hours=9))
        whole = datetime.datetime(2026, 11, 20, 9, 30, tzinfo=tokyo)
        self.make_mixed_states()
        self.add_policy('i-never', last_success_at=None,
                        created_at=whole, rpo=600)
        self.add_policy('i-micro', last_success_at=whole.replace(
            microsecond=1), created_at=whole.replace(microsecond=999999))
        self.add_policy('i-micro', last_success_at=whole - HOUR,
                        created_at=whole + HOUR, keep_daily=None,
                        max_age_days=10, daily_runs=2.0)
        self.add_policy('i-all', keep_daily=None, daily_runs=None,
                        last_success_at=whole.astimezone(
                            datetime.timezone.utc) + 3 * HOUR)
        self.add_policy('i-all', enabled=False, keep_daily=None,
                        next_execution_time=None, last_success_at=None)
        for project_id in ('project-a', None):
            expected = db_coverage.policy_instances(self.context,
                                                    project_id)
            rows = db_coverage.policy_rows(self.context, project_id)
            self.assertEqual(sorted(expected),
                             sorted(self._instance(row) for row in rows))
            for row in rows:
                for value in row[8:10]:
                    # JSON shows 1.0, not 1: floats as before.
                    self.assertIn(type(value), (float, type(None)), row)
        by_id = {row[2]: row for row in db_coverage.policy_rows(
            self.context, 'project-a')}
        self.assertEqual((None, '2026-11-20T00:30:00.000000'),
                         by_id['i-never'][5:7])
        self.assertEqual(('2026-11-20T00:30:00.000001',
                          '2026-11-20T00:30:00.999999'),
                         by_id['i-micro'][5:7])
        # The paused policy without rules keeps nothing (enabled only).
        self.assertEqual(('2026-11-20T03:30:00.000000', 0.0, 1),
                         (by_id['i-all'][5],) + by_id['i-all'][9:11])
        report = coverage_obj.report(self.context, self.conf, 'project-a',
                                     now=self.now)
        by_id = {i['instance_id']: i for i in report['instances']}
        self.assertEqual('2026-11-20T03:30:00Z',
                         by_id['i-all']['last_success_at'])
        self.assertEqual('2026-11-20T00:30:00.000001Z',
                         by_id['i-micro']['last_success_at'])
        self.assertIsNone(by_id['i-never']['last_success_at'])
        self.assertEqual(('stale', 600), (by_id['i-never']['state'],
                                          by_id['i-never']['stale_after']))

    @staticmethod
    def _instance(row):
        times = [None if text is None else datetime.datetime.fromisoformat(
            text).replace(tzinfo=datetime.timezone.utc) for text in row[5:7]]
        return coverage.Instance(*row[:5], *times, *row[7:])


class TestCoverageSQLite(_Coverage, base.TestCase):
    DRIVER = 'sqlite'


class TestCoverageMySQL(_Coverage, base.TestCase):
    DRIVER = 'mysql'


class TestCoveragePostgreSQL(_Coverage, base.TestCase):
    DRIVER = 'postgresql'
