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
"""Watching many backups of one project within Trove's rate limits."""

import datetime
import threading
import time

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler.backends.trove import backend as trove
from dbaas_scheduler.backends.trove import client as trove_client
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import notifications
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import trove_fixtures
from dbaas_scheduler.worker import service as worker_service

INSTANCES = 20


class TestPollingOnTrove(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'mysql'

    def setUp(self):
        super().setUp()
        self.trove = trove_fixtures.use_trove(self)
        self.trove.configure(self)
        self.addCleanup(loader.reset)
        self.addCleanup(notifications.reset)
        self.context = dbaas_context.get_admin_context()
        parts = worker_service.build_parts(self.conf,
                                           uuidutils.generate_uuid())
        self.addCleanup(parts.close)
        self.runner, self.poller = parts.runner, parts.poller
        self.sent = []
        lock = threading.Lock()
        send = trove_client.TroveClient._send

        def counted(client, policy, method, path, *args, **kwargs):
            with lock:
                self.sent.append((method, path))
            return send(client, policy, method, path, *args, **kwargs)

        self.patch(trove_client.TroveClient, '_send', counted)

    def test_requests_grow_with_projects_not_backups(self):
        instances = [self.trove.start_instance('db%d' % n)
                     for n in range(INSTANCES)]
        for instance_id in instances:
            self.trove.wait_instance(instance_id)
        ids = []
        for instance_id in instances:
            policy = db_api.create_policy(self.context, dict(
                name='p-%s' % instance_id, project_id=self.trove.project_id,
                instance_id=instance_id, schedule_type='cron',
                schedule='30 2 * * *', timezone='UTC',
                next_execution_time=timeutils.utcnow(True)
                + datetime.timedelta(days=1)))
            ids.append(db_api.create_execution(self.context, dict(
                policy_id=policy.id, project_id=policy.project_id,
                instance_id=instance_id, scheduled_at=timeutils.utcnow(True),
                status='DISPATCHED')).id)
        self.assertEqual(set(ids), set(self.runner.run(self.context, ids)))
        # Each start: a look at the instance, the POST.
        self.assertEqual(2 * INSTANCES, len(self.sent))
        per_pass = []
        deadline = time.monotonic() + 60
        while True:
            del self.sent[:]
            watched = self.poller.run_pass(self.context)
            if not watched:
                break
            per_pass.append((watched, list(self.sent)))
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.5)
        self.assertEqual({'SUCCEEDED'}, {
            db_api.get_execution(self.context, i).status for i in ids})
        self.assertEqual(INSTANCES, per_pass[0][0])
        # Per pass one listing of the project, however many backups run;
        # the last few (SHOW_AT_MOST) are asked for one by one.
        for watched, sent in per_pass:
            if watched > trove.SHOW_AT_MOST:
                self.assertEqual([('GET', 'backups')], sent)
            else:
                self.assertEqual(watched, len(sent))
