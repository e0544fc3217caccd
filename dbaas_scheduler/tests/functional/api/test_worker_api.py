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
"""The API's RPC client: built with the application and passed in."""

import json

import fixtures
import webob

from dbaas_scheduler.api import deploy
from dbaas_scheduler.api import service as api_service
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.objects import execution as execution_obj
from dbaas_scheduler import policy as api_policy
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

HEADERS = {'X-Project-Id': 'project-a', 'X-User-Id': 'user-a',
           'X-Roles': 'member,reader', 'Content-Type': 'application/json'}


class RecordingWorkerAPI:
    """Takes casts and does nothing with them."""

    def __init__(self):
        self.cast = []

    def backup_database_instance(self, context, execution_id):
        self.cast.append(execution_id)


class TestWorkerAPI(db_fixtures.DatabaseMixin, base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(auth_strategy='noauth', rpc_transport='none')
        self.flags(group='api', default_backend='fake')
        api_policy.reset()
        self.addCleanup(api_policy.reset)
        api_policy.get_enforcer(self.conf)
        self.useFixture(backend_fixtures.OpenBackends(self.conf))

    def call(self, app, method, path, body=None):
        request = webob.Request.blank(
            path, method=method, headers=HEADERS,
            body=json.dumps(body).encode() if body is not None else b'')
        return request.get_response(app)

    def run_a_policy(self, app):
        """Create a policy and run it through ``app``; the answer."""
        created = self.call(app, 'POST', '/v1/backup-policies', {
            'backup_policy': {'instance_id': 'i-1', 'schedule': '@daily'}})
        self.assertEqual(201, created.status_int, created.text)
        return self.call(app, 'POST', '/v1/backup-policies/%s/run'
                         % created.json['backup_policy']['id'], {})

    def test_each_application_casts_with_its_own_client(self):
        first, second = RecordingWorkerAPI(), RecordingWorkerAPI()
        deploy.deploy(self.conf, worker_api=first)
        ran = self.run_a_policy(deploy.deploy(self.conf, worker_api=second))
        self.assertEqual(202, ran.status_int, ran.text)
        self.assertEqual([ran.json['execution']['id']], second.cast)
        self.assertEqual([], first.cast)

    def test_make_application_builds_the_client(self):
        client = RecordingWorkerAPI()
        made = self.useFixture(fixtures.MockPatch(
            'dbaas_scheduler.rpcapi.WorkerAPI', return_value=client)).mock
        app = api_service.make_application(self.conf)
        made.assert_called_once_with(self.conf)
        ran = self.run_a_policy(app)
        self.assertEqual(202, ran.status_int, ran.text)
        self.assertEqual([ran.json['execution']['id']], client.cast)

    def test_without_a_client_no_run_is_recorded(self):
        # deploy() alone, as some tests assemble the API: every other
        # request is served, and a run fails before it records anything.
        self.useFixture(fixtures.FakeLogger(name='dbaas_scheduler.api'))
        ran = self.run_a_policy(deploy.deploy(self.conf))
        self.assertEqual(500, ran.status_int, ran.text)
        self.assertEqual([], execution_obj.list_executions(
            dbaas_context.get_admin_context()))
