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
"""The RPC client and its endpoint speak the same version."""

from unittest import mock

from oslotest import base

from dbaas_scheduler.engine import manager as engine_manager
from dbaas_scheduler import rpcapi
from dbaas_scheduler.worker import manager


class TestWorkerRPCVersions(base.BaseTestCase):

    def test_client_and_endpoint_versions_agree(self):
        self.assertEqual(rpcapi.WorkerAPI.RPC_API_VERSION,
                         manager.WorkerManager.RPC_API_VERSION)
        self.assertEqual(rpcapi.WorkerAPI.RPC_API_VERSION,
                         manager.WorkerManager.target.version)

    def test_every_cast_has_an_endpoint_method(self):
        for method in ('backup_database_instance',
                       'backup_database_instances'):
            self.assertTrue(callable(getattr(manager.WorkerManager, method)))

    def test_endpoint_hands_executions_to_the_runner(self):
        runner = mock.Mock()
        endpoint = manager.WorkerManager(runner)
        endpoint.backup_database_instance('ctx', 'a')
        endpoint.backup_database_instances('ctx', ['b', 'c'])
        self.assertEqual([mock.call('ctx', ['a']),
                          mock.call('ctx', ['b', 'c'])],
                         runner.run.call_args_list)


class TestEngineRPCVersions(base.BaseTestCase):

    def test_client_and_endpoint_versions_agree(self):
        self.assertEqual(rpcapi.EngineAPI.RPC_API_VERSION,
                         engine_manager.EngineManager.RPC_API_VERSION)
        self.assertEqual(rpcapi.EngineAPI.RPC_API_VERSION,
                         engine_manager.EngineManager.target.version)

    def test_every_call_has_an_endpoint_method(self):
        for method in ('create_policy', 'update_policy', 'delete_policy',
                       'list_policies', 'delete_policies_for_instance'):
            self.assertTrue(callable(getattr(rpcapi.EngineAPI, method)))
            self.assertTrue(callable(getattr(engine_manager.EngineManager,
                                             method)))
