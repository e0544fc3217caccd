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
"""TroveBackend's requests and answers, with the adapter faked."""

from unittest import mock

from keystoneauth1 import exceptions as ks_exc
from oslo_context import context

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import backend as trove
from dbaas_scheduler import exception
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.unit.backends.trove import fakes


class TestBackendPlumbing(base.TestCase):

    def setUp(self):
        super().setUp()
        self.backend = trove.TroveBackend(self.conf)
        self.adapter = mock.Mock()
        patcher = mock.patch.object(self.backend._client, 'adapter',
                                    autospec=True, return_value=self.adapter)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.flags(group='trove',
                   endpoint_override='http://trove/v1.0/%(project_id)s')
        # A policy without a trust, in the service user's own project.
        self.adapter.get_project_id.return_value = 'project-1'

    def test_requests_go_to_the_policy_project(self):
        self.adapter.request.return_value = fakes.make_response(
            200, {'backup': fakes.TROVE_BACKUP})
        context.RequestContext(global_request_id='req-g', overwrite=True)
        self.addCleanup(context.RequestContext, overwrite=True)
        backup = self.backend.get_backup(fakes.make_policy(), 'b/1')
        self.assertEqual('snapshot', backup.name)
        self.adapter.request.assert_called_once_with(
            'backups/b%2F1', 'GET',
            endpoint_override='http://trove/v1.0/project-1', raise_exc=False,
            headers={'Accept': 'application/json'},
            global_request_id='req-g')

    def test_catalog_endpoint(self):
        self.flags(group='trove', endpoint_override=None)
        self.adapter.get_endpoint.return_value = 'http://t/v1.0/service'
        self.adapter.get_project_id.return_value = 'service'
        self.adapter.request.return_value = fakes.make_response(202)
        policy = fakes.make_policy()
        policy.trust_id = 'trust-1'
        self.backend.delete_backup(policy, 'b')
        self.assertEqual(
            'http://t/v1.0/project-1',
            self.adapter.request.call_args.kwargs['endpoint_override'])

    def test_no_trust_never_sends_the_service_token_elsewhere(self):
        self.adapter.get_project_id.return_value = 'service'
        exc = self.assertRaises(backends.PermanentBackendError,
                                self.backend.get_backup, fakes.make_policy(),
                                'b')
        self.assertIn('the policy has no Keystone trust', str(exc))
        self.assertIn('never uses its own token', str(exc))
        self.adapter.request.assert_not_called()

    def test_no_endpoint_in_catalog(self):
        self.flags(group='trove', endpoint_override=None)
        self.adapter.get_endpoint.return_value = None
        exc = self.assertRaises(backends.PermanentBackendError,
                                self.backend.get_backup, fakes.make_policy(),
                                'b')
        self.assertIn('endpoint_override', str(exc))

    def test_no_service_credentials_is_the_users_error(self):
        # An Invalid the API answers 400 with, not a backend error the
        # policy check would log and pass over.
        exc = self.assertRaises(exception.BackendNotConfigured,
                                self.backend.check_instance,
                                fakes.make_policy())
        self.assertNotIsInstance(exc, backends.BackendError)
        self.assertIn('has no auth_type', str(exc))
        self.assertIn('tell its operators', str(exc))
        self.adapter.request.assert_not_called()

    def test_keystoneauth_errors(self):
        cases = [
            (ks_exc.ConnectFailure('refused'), backends.TransientBackendError),
            (ks_exc.ConnectTimeout('slow'), backends.TransientBackendError),
            (ks_exc.SSLError('bad cert'), backends.TransientBackendError),
            (ks_exc.EndpointNotFound(), backends.PermanentBackendError),
            (ks_exc.Unauthorized('bad password'),
             backends.PermanentBackendError),
            (ks_exc.ServiceUnavailable('keystone down'),
             backends.TransientBackendError),
            (ks_exc.MissingRequiredOptions([]),
             backends.PermanentBackendError),
        ]
        for error, expected in cases:
            self.adapter.request.side_effect = error
            exc = self.assertRaises(backends.BackendError,
                                    self.backend.list_backups,
                                    fakes.make_policy())
            self.assertEqual(expected, type(exc), error)
            self.assertIn('list the backups of instance %s' % fakes.INSTANCE,
                          str(exc))

    def test_delete_missing_is_no_error(self):
        self.adapter.request.return_value = fakes.make_response(
            404, {'itemNotFound': {'code': 404, 'message': 'gone'}})
        self.assertIsNone(self.backend.delete_backup(fakes.make_policy(), 'b'))

    def test_list_instances_page_by_page(self):
        first = {'instances': [{'id': 'i-1', 'name': 'orders'},
                               {'id': 'i-2', 'name': 'wiki'}],
                 'links': [{'rel': 'next',
                            'href': 'https://t/instances?marker=i-2'}]}
        last = {'instances': [{'id': 'i-3', 'name': 'crm'}], 'links': []}
        self.adapter.request.side_effect = [
            fakes.make_response(200, first), fakes.make_response(200, last)]
        actor = mock.Mock(project_id='project-1', trust_id=None,
                          user_auth=None, instance_id=None)
        self.assertEqual({'i-1': 'orders', 'i-2': 'wiki', 'i-3': 'crm'},
                         self.backend.list_instances(actor))
        second = self.adapter.request.call_args_list[1]
        self.assertEqual(('instances', 'GET'), second.args)
        self.assertEqual('i-2', second.kwargs['params']['marker'])

    def test_pagination_stops_on_a_repeated_marker(self):
        page = {'backups': [fakes.TROVE_BACKUP],
                'links': [{'rel': 'next', 'href': 'https://t/b?marker=20'}]}
        self.adapter.request.side_effect = [
            fakes.make_response(200, page), fakes.make_response(200, page)]
        backups = self.backend.list_backups(fakes.make_policy())
        self.assertEqual([fakes.TROVE_BACKUP['id']], [b.id for b in backups])
        self.assertEqual(2, self.adapter.request.call_count)
