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
"""The coverage report of real Trove instances in several states.

``dbaas-scheduler-all`` in a process of its own lists the project's
instances from Trove with the service's credentials (``[service_
credentials] auth_type = admin_token``, as test_all_in_one.py), and
GET /v1/coverage names each with its state: one no policy names
(unprotected), one whose policy is paused, one whose policy took a backup
at Trove (protected), one whose policy has not yet and whose RPO (the
shortest there is, a minute) has passed (stale).  A single-time policy
is finished (disabled) once it ran: the protected one is a daily policy
run at once through the API.  And ``below_minimum`` under ``[coverage]
min_daily`` and ``min_keep``: a weekly policy, and one keeping too few.
"""

import time

import fixtures

from dbaas_scheduler.backends.trove import backend as trove
from dbaas_scheduler.objects import coverage as coverage_obj
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.fixtures import trove_fixtures

RPO = 60


class _CoverageOfTrove(base.TestCase):

    NAMES = ()
    # [coverage] options of the service.
    COVERAGE = {}

    def setUp(self):
        super().setUp()
        self.trove = trove_fixtures.use_trove(self)
        names = self.NAMES
        started = {name: self.trove.start_instance(name) for name in names}
        for instance_id in started.values():
            self.trove.wait_instance(instance_id)
        self.instances = started
        tempdir = self.useFixture(fixtures.TempDir()).path
        self.service = self.useFixture(process_fixtures.AllInOneProcess(
            tempdir, {
                'DEFAULT': {'debug': True},
                'api': {'default_backend': 'trove',
                        'enabled_backends': 'trove'},
                'engine': {'scan_interval': 0.5},
                'worker': {'poll_interval': 1},
                'service_credentials': {'auth_type': 'admin_token',
                                        'token': self.trove.project_id},
                'trove': {'endpoint_override': self.trove.endpoint_override},
                'coverage': dict(self.COVERAGE),
            }, headers={'X-Project-Id': self.trove.project_id,
                        'X-User-Id': 'someone',
                        'X-Roles': 'member,reader',
                        'OpenStack-API-Version': 'backup-scheduler 1.5'}))

    def policy(self, instance_id, **values):
        status, body = self.service.request('POST', '/v1/backup-policies', {
            'backup_policy': dict({
                'name': 'of-%s' % instance_id, 'instance_id': instance_id,
                'schedule': '30 2 * * *', 'keep_last': 3}, **values)})
        self.assertEqual(201, status, body)
        return body['backup_policy']['id']

    def report(self):
        status, body = self.service.request('GET', '/v1/coverage')
        self.assertEqual(200, status, body)
        return body['coverage']

    def states(self, report):
        return {item['name']: item['state'] for item in report['instances']}


class TestCoverageOfTroveInstances(_CoverageOfTrove):

    NAMES = ('bare', 'paused', 'backed-up', 'late')

    def test_each_instance_in_its_state(self):
        paused = self.policy(self.instances['paused'])
        status, body = self.service.request(
            'POST', '/v1/backup-policies/%s/pause' % paused)
        self.assertIn(status, (200, 202), body)
        backed_up = self.policy(self.instances['backed-up'])
        status, body = self.service.request(
            'POST', '/v1/backup-policies/%s/run' % backed_up)
        self.assertEqual(202, status, body)
        late_created = time.monotonic()
        self.policy(self.instances['late'], rpo=RPO)

        def succeeded():
            executions = self.service.request(
                'GET', '/v1/executions?policy_id=%s' % backed_up)[1][
                'executions']
            done = [e for e in executions if e['status'] == 'SUCCEEDED']
            failed = [e for e in executions if e['status'] in (
                'FAILED', 'EXPIRED')]
            self.assertEqual([], failed)
            return done
        process_fixtures.wait_until(succeeded, 120, 0.5)
        # The late one's policy has taken nothing for longer than its RPO.
        time.sleep(max(0, RPO + 2 - (time.monotonic() - late_created)))

        report = self.report()
        self.assertEqual([], report['incomplete'], report)
        self.assertEqual({'bare': 'unprotected', 'paused': 'paused',
                          'backed-up': 'protected', 'late': 'stale'},
                         self.states(report), report)
        by_id = {item['instance_id']: item for item in report['instances']}
        self.assertEqual(set(self.instances.values()), set(by_id))
        self.assertIsNotNone(
            by_id[self.instances['backed-up']]['last_success_at'])
        self.assertEqual(1, report['counts'].get('unprotected'), report)

        # One state only: the instances it names.
        status, body = self.service.request(
            'GET', '/v1/coverage?state=unprotected')
        self.assertEqual(200, status, body)
        self.assertEqual([self.instances['bare']], [
            item['instance_id'] for item in body['coverage']['instances']])


class TestBelowMinimumOfTroveInstances(_CoverageOfTrove):
    """below_minimum: covered today, by less than the operator requires.

    ``[coverage] min_daily`` 1 (the default) and ``min_keep`` 7: a weekly
    policy takes too few backups a day, a daily one keeping 3 keeps too
    few; a daily one keeping 7 is protected (none has taken a backup yet,
    and all are younger than ``max_age``: none is stale).
    """

    NAMES = ('weekly', 'keeps-few', 'enough')
    COVERAGE = {'min_daily': 1, 'min_keep': 7}

    def test_too_rare_and_keeping_too_few(self):
        self.policy(self.instances['weekly'], schedule='30 2 * * 1',
                    keep_last=10)
        self.policy(self.instances['keeps-few'], keep_last=3)
        self.policy(self.instances['enough'], keep_last=7)
        report = self.report()
        self.assertEqual([], report['incomplete'], report)
        self.assertEqual({'weekly': 'below_minimum',
                          'keeps-few': 'below_minimum',
                          'enough': 'protected'},
                         self.states(report), report)
        reasons = {item['name']: item['reasons']
                   for item in report['instances']}
        self.assertEqual(['below_minimum'], reasons['weekly'])
        self.assertEqual(['protected'], reasons['enough'])
        self.assertEqual(2, report['counts'].get('below_minimum'), report)
        self.assertEqual(1, report['counts'].get('protected'), report)

        status, body = self.service.request(
            'GET', '/v1/coverage?state=below_minimum')
        self.assertEqual(200, status, body)
        self.assertEqual(
            {self.instances['weekly'], self.instances['keeps-few']},
            {item['instance_id'] for item in body['coverage']['instances']})

        # A second policy of the weekly one's instance, daily: together
        # they take enough a day (and one of them keeps enough).
        self.policy(self.instances['weekly'], keep_last=7,
                    name='daily-of-weekly')
        self.assertEqual('protected',
                         self.states(self.report())['weekly'])


class TestListingPagesThroughTrove(base.TestCase):

    def test_every_instance_across_pages(self):
        self.trove = trove_fixtures.use_trove(self)
        self.trove.configure(self)
        started = {self.trove.start_instance('db-%d' % n): 'db-%d' % n
                   for n in range(5)}
        # Two a page: three pages, the last one short.
        self.useFixture(fixtures.MockPatch(
            'dbaas_scheduler.backends.trove.backend.PAGE_SIZE', 2))
        pages = []
        backend = trove.TroveBackend(self.conf)
        real_request = backend._client.request

        def counting(actor, method, path, action, **kwargs):
            response = real_request(actor, method, path, action, **kwargs)
            if path == 'instances':
                pages.append(len(response.json()['instances']))
            return response
        backend._client.request = counting
        found = backend.list_instances(
            coverage_obj.Actor(self.trove.project_id))
        self.assertEqual(started, found)
        self.assertEqual([2, 2, 1], pages)
