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
"""The poller asks Trove per project, not per backup."""

import datetime
import time

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import notifications
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.worker import service as worker_service


class TestPollingByProject(db_fixtures.DatabaseMixin, base.TestCase):

    # Not SQLite's in-memory database: one connection, which the poller's
    # threads (one per project) cannot share.
    DRIVER = 'postgresql'

    def setUp(self):
        super().setUp()
        self.clock = [time.time()]
        self.trove = self.useFixture(fake_trove.FakeTrove(
            clock=lambda: self.clock[0],
            behaviour=fake_trove.BackupBehaviour(build_seconds=600)))
        self.flags(group='trove', endpoint_override=self.trove.url)
        self.flags(group='service_credentials', auth_type='none')
        self.addCleanup(loader.reset)
        self.addCleanup(notifications.reset)
        self.context = dbaas_context.get_admin_context()
        parts = worker_service.build_parts(self.conf,
                                           uuidutils.generate_uuid())
        self.addCleanup(parts.close)
        self.runner, self.poller = parts.runner, parts.poller

    def start(self, count, project):
        ids = []
        for number in range(count):
            policy = db_api.create_policy(self.context, dict(
                name='p%d' % number, project_id=project,
                instance_id=self.trove.add_instance(),
                schedule_type='cron', schedule='30 2 * * *',
                timezone='UTC', next_execution_time=timeutils.utcnow(True)
                + datetime.timedelta(days=1)))
            ids.append(db_api.create_execution(self.context, dict(
                policy_id=policy.id, project_id=project,
                instance_id=policy.instance_id,
                scheduled_at=timeutils.utcnow(True),
                status='DISPATCHED')).id)
        self.assertEqual(set(ids), set(self.runner.run(self.context, ids)))
        return ids

    def test_one_listing_per_project_and_pass(self):
        ids = self.start(30, 'project-a') + self.start(3, 'project-b')
        # Starting 33 backups: a look at the instance and a POST each;
        # no listing (nothing can have been made for a first claim).
        self.assertEqual(66, len(self.trove.requests))
        self.assertEqual({'POST', 'GET'},
                         {r.method for r in self.trove.requests})
        self.assertFalse([r for r in self.trove.requests
                          if r.path.endswith('/backups')
                          and r.method == 'GET'])
        del self.trove.requests[:]
        for _ in range(3):
            self.assertEqual(33, self.poller.run_pass(self.context))
        self.assertEqual(
            [('GET', '/v1.0/project-a/backups')] * 3
            + [('GET', '/v1.0/project-b/backups')] * 3,
            sorted((r.method, r.path) for r in self.trove.requests))
        self.clock[0] += 3600
        self.poller.run_pass(self.context)
        self.assertEqual({'SUCCEEDED'}, {
            db_api.get_execution(self.context, i).status for i in ids})
