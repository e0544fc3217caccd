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
"""The quota holds over the engines' RPC API too (real RabbitMQ)."""

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.engine import test_rpc_api
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures


class TestRPCQuotaPostgreSQL(db_fixtures.DatabaseMixin, base.TestCase):

    # Not SQLite's in-memory database: one connection, which the RPC
    # server's thread and the test's cannot share.
    DRIVER = 'postgresql'

    def setUp(self):
        super().setUp()
        self.flags(group='quota', policies_per_project=2)
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        test_rpc_api.serve_engine_rpc(self)
        self.api = rpcapi.EngineAPI(self.conf, timeout=30)
        self.context = dbaas_context.RequestContext(
            project_id='trove-user', user_id='alice',
            roles=['member', 'reader'])

    def create(self, instance_id):
        return self.api.create_policy(self.context, {
            'instance_id': instance_id, 'backend': 'fake',
            'schedule': '0 3 * * *'})

    def test_a_create_over_the_quota_comes_back_as_quota_exceeded(self):
        self.create('db-1')
        self.create('db-2')
        error = self.assertRaises(exception.QuotaExceeded, self.create,
                                  'db-3')
        self.assertIn('may have at most 2 backup policies and has 2',
                      str(error))
        self.assertEqual(2, len(db_api.list_policies(
            dbaas_context.get_admin_context(), project_id='trove-user')))
