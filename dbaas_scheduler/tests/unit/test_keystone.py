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
"""Creating trusts: Keystone refusing is not Keystone being away."""

from unittest import mock

from keystoneauth1 import exceptions as ks_exc

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import exception
from dbaas_scheduler import keystone
from dbaas_scheduler.tests import base


class TestCreateTrust(base.TestCase):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='alice', auth_token='token')
        service = mock.Mock()
        service.get_user_id.return_value = 'service-user'
        self.user_session = mock.Mock()
        for name, value in (('service_session', service),
                            ('_user_session', self.user_session)):
            patcher = mock.patch.object(keystone, name, autospec=True,
                                        return_value=value)
            patcher.start()
            self.addCleanup(patcher.stop)

    def create_trust_failing_with(self, error):
        self.user_session.post.side_effect = error
        return keystone.create_trust(self.conf, self.context)

    def test_trust_is_created(self):
        self.user_session.post.return_value.json.return_value = {
            'trust': {'id': 'trust-1'}}
        self.assertEqual('trust-1',
                         keystone.create_trust(self.conf, self.context))

    def test_keystone_away_is_unavailable(self):
        for error in (ks_exc.ConnectFailure('connection refused'),
                      ks_exc.ConnectTimeout('timed out'),
                      ks_exc.SSLError('handshake failed'),
                      ks_exc.ServiceUnavailable(),
                      ks_exc.InternalServerError(),
                      ks_exc.GatewayTimeout(),
                      ks_exc.RequestTimeout()):
            raised = self.assertRaises(
                exception.KeystoneUnavailable,
                self.create_trust_failing_with, error)
            self.assertIsInstance(raised, exception.ServiceUnavailable)
            self.assertNotIsInstance(raised, exception.Invalid)
            self.assertIn('Keystone is unreachable, try again later',
                          str(raised))
            self.assertIn('The backup policy was not created', str(raised))

    def test_status_of_a_failing_keystone_is_shown(self):
        raised = self.assertRaises(
            exception.KeystoneUnavailable, self.create_trust_failing_with,
            ks_exc.ServiceUnavailable('maintenance'))
        self.assertIn('Keystone answered 503: maintenance', str(raised))

    def test_keystone_refusing_is_a_trust_error(self):
        for error in (ks_exc.Forbidden('you lack role admin'),
                      ks_exc.BadRequest('bad trust'),
                      ks_exc.NotFound('no such role')):
            raised = self.assertRaises(keystone.TrustError,
                                       self.create_trust_failing_with, error)
            self.assertIn('Could not delegate your roles member', str(raised))
            self.assertIn('Keystone answered %d' % error.http_status,
                          str(raised))

    def test_service_user_lookup_with_keystone_away(self):
        keystone.service_session.return_value.get_user_id.side_effect = (
            ks_exc.ConnectFailure('connection refused'))
        self.assertRaises(exception.KeystoneUnavailable,
                          keystone.create_trust, self.conf, self.context)
        self.user_session.post.assert_not_called()

    def test_service_user_refused_is_the_operators_problem(self):
        keystone.service_session.return_value.get_user_id.side_effect = (
            ks_exc.Unauthorized('The request you have made requires '
                                'authentication.'))
        raised = self.assertRaises(exception.ServiceCredentialsRefused,
                                   keystone.create_trust, self.conf,
                                   self.context)
        self.assertIsInstance(raised, exception.ServiceUnavailable)
        self.assertNotIsInstance(raised, exception.Invalid)
        self.assertIn('[service_credentials]', str(raised))
        self.assertIn('The backup policy was not created', str(raised))
        self.assertIn('tell its operators', str(raised))
        self.user_session.post.assert_not_called()

    def test_who_must_act_depends_on_the_deployment(self):
        self.assertIn('tell its operators', keystone.who_must_act(self.conf))
        self.flags(auth_strategy='noauth')
        self.assertIn('you are its operator',
                      keystone.who_must_act(self.conf))

    def test_trust_error_crosses_the_rpc_api_as_itself(self):
        # oslo.messaging re-raises remote exceptions of allowed modules
        # only; dbaas_scheduler.exception is the one the RPC API allows.
        self.assertEqual('dbaas_scheduler.exception',
                         keystone.TrustError.__module__)
