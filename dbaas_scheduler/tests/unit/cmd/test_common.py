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
"""The broker check every program makes before it starts; masked URLs."""

import amqp.exceptions
import fixtures
from oslo_messaging import conffixture

from dbaas_scheduler.cmd import auth_checks
from dbaas_scheduler.cmd import common
from dbaas_scheduler.tests import base

CLUSTER = ('rabbit://guest:secret@10.0.0.1:5672,guest:secret@10.0.0.2:5672,'
           'guest:secret@10.0.0.3:5672/')


class TestCheckTransport(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(conffixture.ConfFixture(self.conf,
                                                transport_url=CLUSTER))
        self.flags(rpc_transport='oslo')
        self.answers = {}
        self.tried = []
        self.useFixture(fixtures.MockPatchObject(common, '_log_in',
                                                 self._log_in))
        self.sleep = self.useFixture(fixtures.MockPatch(
            'dbaas_scheduler.cmd.common.time.sleep')).mock
        self.log = self.useFixture(fixtures.FakeLogger(
            name='dbaas_scheduler.cmd.common'))

    def _log_in(self, conf, url, host):
        self.tried.append(host.hostname)
        error = self.answers.get(host.hostname)
        if error is not None:
            raise error

    def test_every_node_answers(self):
        common.check_transport(self.conf)
        self.assertEqual(['10.0.0.1', '10.0.0.2', '10.0.0.3'], self.tried)
        self.assertEqual('', self.log.output)

    def test_one_node_of_a_cluster_down_is_a_warning(self):
        self.answers['10.0.0.2'] = ConnectionRefusedError(111, 'refused')
        common.check_transport(self.conf)
        self.sleep.assert_not_called()
        self.assertEqual('Message broker node 10.0.0.2:5672 unreachable, '
                         'using the other nodes of transport_url: [Errno '
                         '111] refused\n', self.log.output)
        self.assertNotIn('secret', self.log.output)

    def test_every_node_down_is_retried_then_refused(self):
        for number in (1, 2, 3):
            self.answers['10.0.0.%d' % number] = ConnectionRefusedError(
                111, 'refused')
        self.assertRaises(common.StartupRefused, common.check_transport,
                          self.conf, attempts=2)
        self.assertEqual(6, len(self.tried))
        self.assertEqual(1, self.sleep.call_count)

    def test_refused_credentials_end_it_at_once(self):
        self.answers['10.0.0.1'] = amqp.exceptions.AccessRefused('login')
        exc = self.assertRaises(common.StartupRefused,
                                common.check_transport, self.conf)
        self.assertIn('refused to log in', str(exc))
        self.assertEqual(['10.0.0.1'], self.tried)


class TestMaskedURL(base.TestCase):

    def test_every_password_of_a_cluster_is_masked(self):
        self.assertEqual(
            'rabbit://guest:***@10.0.0.1:5672,guest:***@10.0.0.2:5672,'
            'guest:***@10.0.0.3:5672/', common.masked_url(CLUSTER))

    def test_one_broker(self):
        self.assertEqual('rabbit://guest:***@10.0.0.1:5672/vhost',
                         common.masked_url(
                             'rabbit://guest:p%40ss@10.0.0.1:5672/vhost'))

    def test_database(self):
        self.assertEqual(
            'mysql+pymysql://root:***@127.0.0.1/dbaas_scheduler',
            common.masked_url('mysql+pymysql://root:pw@127.0.0.1/'
                              'dbaas_scheduler'))

    def test_nonsense_says_so(self):
        self.assertEqual('<unparseable URL>', common.masked_url('not a url'))


class TestAuthentication(base.TestCase):

    def test_loopback_addresses_and_names(self):
        for host in ('127.0.0.1', '127.1.2.3', '::1', 'localhost'):
            self.assertTrue(auth_checks.is_loopback(host), host)
        for host in ('0.0.0.0', '::', '192.0.2.1', '10.0.0.1',
                     'no-such-host.invalid'):
            self.assertFalse(auth_checks.is_loopback(host), host)

    def test_the_all_in_one_strategy(self):
        self.assertEqual('noauth',
                         auth_checks.all_in_one_auth_strategy(self.conf))
        self.flags(auth_strategy='keystone')
        self.assertEqual('keystone',
                         auth_checks.all_in_one_auth_strategy(self.conf))
        self.flags(auth_strategy='noauth')
        self.assertEqual('noauth',
                         auth_checks.all_in_one_auth_strategy(self.conf))

    def test_noauth_off_loopback_is_refused_unless_allowed(self):
        self.flags(auth_strategy='noauth')
        self.flags(group='api', bind_host='0.0.0.0')
        error = self.assertRaises(common.StartupRefused,
                                  auth_checks.check_authentication, self.conf)
        self.assertIn('allow_unauthenticated_public_access = true',
                      str(error))
        self.flags(group='api', allow_unauthenticated_public_access=True)
        auth_checks.check_authentication(self.conf)

    def test_keystone_and_loopback_are_fine(self):
        self.flags(group='api', bind_host='0.0.0.0')
        auth_checks.check_authentication(self.conf)
        self.flags(auth_strategy='noauth')
        self.flags(group='api', bind_host='127.0.0.1')
        auth_checks.check_authentication(self.conf)
