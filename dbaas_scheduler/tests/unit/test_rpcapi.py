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
"""The RPC clients: their versions, and the pins of [upgrade_levels]."""

import threading
import time
from unittest import mock

import fixtures
import oslo_messaging as messaging
from oslo_messaging import conffixture
from oslo_utils import versionutils
from oslotest import base

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.engine import manager as engine_manager
from dbaas_scheduler import exception
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests import base as test_base
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


class TestReleases(base.BaseTestCase):

    def test_no_release_speaks_a_version_this_code_does_not(self):
        newest = {'engine': rpcapi.EngineAPI.RPC_API_VERSION,
                  'worker': rpcapi.WorkerAPI.RPC_API_VERSION}
        for release, versions in rpcapi.RELEASES.items():
            self.assertEqual(set(newest), set(versions), release)
            for api, version in versions.items():
                self.assertTrue(versionutils.is_compatible(
                    version, newest[api], same_major=True),
                    '%s %s %s' % (release, api, version))


class _ClientTest(test_base.TestCase):
    """Real oslo.messaging clients on the fake driver."""

    def setUp(self):
        super().setUp()
        self.useFixture(conffixture.ConfFixture(self.conf,
                                                transport_url='fake:/'))
        self.flags(rpc_transport='oslo')
        rpc.init(self.conf)
        self.addCleanup(rpc.cleanup)
        self.context = dbaas_context.get_admin_context()


class TestVersionCap(_ClientTest):

    def test_unset_is_the_newest_version(self):
        self.assertEqual('1.2', rpcapi.WorkerAPI(self.conf).client.version_cap)
        self.assertEqual('1.1', rpcapi.EngineAPI(self.conf).client.version_cap)

    def test_a_version(self):
        self.flags(worker='1.0', engine='1.0', group='upgrade_levels')
        self.assertEqual('1.0', rpcapi.WorkerAPI(self.conf).client.version_cap)
        self.assertEqual('1.0', rpcapi.EngineAPI(self.conf).client.version_cap)

    def test_a_release_name(self):
        self.useFixture(fixtures.MockPatchObject(rpcapi, 'RELEASES', {
            'old': {'engine': '1.0', 'worker': '1.0'},
            'new': {'engine': '1.0', 'worker': '1.1'}}))
        self.flags(worker='old', group='upgrade_levels')
        self.assertEqual('1.0', rpcapi.WorkerAPI(self.conf).client.version_cap)
        self.flags(worker='new', group='upgrade_levels')
        self.assertEqual('1.1', rpcapi.WorkerAPI(self.conf).client.version_cap)

    def test_every_release_of_the_table_is_accepted(self):
        for release, versions in rpcapi.RELEASES.items():
            self.flags(worker=release, group='upgrade_levels')
            self.assertEqual(versions['worker'],
                             rpcapi.WorkerAPI(self.conf).client.version_cap)

    def test_an_unknown_release_is_refused_with_what_would_do(self):
        self.flags(worker='zed', group='upgrade_levels')
        error = self.assertRaises(exception.InvalidUpgradeLevel,
                                  rpcapi.WorkerAPI, self.conf)
        message = str(error)
        self.assertIn("[upgrade_levels] worker = 'zed'", message)
        self.assertIn('neither a version nor a release this code knows',
                      message)
        self.assertIn('between 1.0 and 1.2', message)
        for release in rpcapi.RELEASES:
            self.assertIn(release, message)
        # Programs check at start, before they fork.
        self.assertRaises(exception.InvalidUpgradeLevel,
                          rpcapi.check_upgrade_levels, self.conf)

    def test_a_version_this_code_cannot_send_is_refused(self):
        for value in ('1.3', '2.0', '0.9'):
            self.flags(worker=value, group='upgrade_levels')
            error = self.assertRaises(exception.InvalidUpgradeLevel,
                                      rpcapi.WorkerAPI, self.conf)
            self.assertIn('cannot send that version', str(error))
        self.flags(engine='1.2', group='upgrade_levels')
        self.assertRaises(exception.InvalidUpgradeLevel, rpcapi.EngineAPI,
                          self.conf)

    def test_restores_need_workers_of_1_2(self):
        self.flags(worker='1.1', group='upgrade_levels')
        api = rpcapi.WorkerAPI(self.conf)
        api.client = mock.Mock(wraps=api.client)
        error = self.assertRaises(exception.ServiceUnavailable,
                                  api.restore_backup, self.context, 'r-1')
        self.assertIn('pinned to an RPC version without restores',
                      str(error))
        api.client.prepare.assert_not_called()

    def test_a_restore_is_a_cast_of_1_2(self):
        api = rpcapi.WorkerAPI(self.conf)
        api.client = mock.Mock()
        api.client.can_send_version.return_value = True
        api.restore_backup(self.context, 'r-1')
        api.client.prepare.assert_called_once_with(version='1.2',
                                                   retry=rpcapi.CAST_RETRY)
        api.client.prepare.return_value.cast.assert_called_once_with(
            self.context, 'restore_backup', restore_id='r-1')

    def test_the_in_process_worker_is_never_pinned(self):
        self.flags(rpc_transport='none')
        self.flags(worker='1.0', group='upgrade_levels')
        api = rpcapi.WorkerAPI(self.conf)
        self.assertTrue(api.client.can_send_version('1.1'))


class _Endpoint:
    """Records each message it gets: (method, execution ids)."""

    def __init__(self, version):
        self.target = messaging.Target(version=version)
        self.messages = []
        self.received = threading.Event()

    def backup_database_instance(self, context, execution_id):
        self._record('backup_database_instance', [execution_id])

    def backup_database_instances(self, context, execution_ids):
        self._record('backup_database_instances', execution_ids)

    def _record(self, method, execution_ids):
        self.messages.append((method, execution_ids))
        self.received.set()


class TestWorkerAPIFallback(_ClientTest):
    """Casts through oslo.messaging's fake driver to an in-process server."""

    def _send(self, execution_ids, endpoint_version='1.1'):
        endpoint = _Endpoint(endpoint_version)
        server = rpc.get_server(
            messaging.Target(topic=self.conf.worker.topic, server='h'),
            [endpoint])
        server.start()
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        rpcapi.WorkerAPI(self.conf).backup_database_instances(
            self.context, execution_ids)
        deadline = time.monotonic() + 60
        while (sum(len(ids) for _, ids in endpoint.messages)
               < len(execution_ids) and time.monotonic() < deadline):
            time.sleep(0.01)
        return endpoint.messages

    def test_newest_sends_one_message(self):
        self.assertEqual([('backup_database_instances', ['a', 'b', 'c'])],
                         self._send(['a', 'b', 'c']))

    def test_pinned_to_1_0_sends_one_message_per_execution(self):
        self.flags(worker='1.0', group='upgrade_levels')
        self.assertEqual(
            sorted(('backup_database_instance', [id_]) for id_ in 'abc'),
            sorted(self._send(['a', 'b', 'c'], endpoint_version='1.0')))

    def test_oslo_messaging_enforces_the_cap(self):
        # What the fallback avoids: a 1.1 message from a pinned client.
        self.flags(worker='1.0', group='upgrade_levels')
        api = rpcapi.WorkerAPI(self.conf)
        self.assertFalse(api.client.can_send_version('1.1'))
        self.assertRaises(messaging.RPCVersionCapError,
                          api.client.prepare(version='1.1').cast,
                          self.context, 'backup_database_instances',
                          execution_ids=['a'])
