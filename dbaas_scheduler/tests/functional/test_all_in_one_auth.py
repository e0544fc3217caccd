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
"""How dbaas-scheduler-all authenticates, as real processes.

A configuration written for a cloud (with ``[keystone_authtoken]``)
authenticates with Keystone when ``auth_strategy`` is left out; noauth on
an address other hosts reach is refused at start unless an option says so;
noauth always says so in the log; the upgrade check reports it.
"""

import os
import subprocess

from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional import test_operator_mistakes

NOAUTH_WARNING = 'The REST API serves WITHOUT AUTHENTICATION'


class _AuthTest(test_operator_mistakes.OperatorMistakeTest):

    def all_in_one_config(self, sections):
        sections = dict(sections)
        api = dict(sections.get('api', {}))
        api.setdefault('bind_host', '127.0.0.1')
        api['bind_port'] = ports.free_port()
        sections['api'] = api
        os.makedirs(os.path.join(self.tempdir, 'all'), exist_ok=True)
        return self.config(sections, os.path.join('all', 'all.conf'))

    def start_all_in_one(self, sections):
        directory = os.path.join(self.tempdir, 'started')
        os.makedirs(directory, exist_ok=True)
        self.service = self.useFixture(process_fixtures.AllInOneProcess(
            directory, sections))
        return self.service.config_file

    def upgrade_check(self, config):
        done = subprocess.run(
            [test_operator_mistakes.script('status'), '--config-file',
             config, 'upgrade', 'check'], capture_output=True, text=True,
            timeout=120)
        # The table wraps long lines: read it as one line of words.
        return done.returncode, ' '.join(
            done.stdout.replace('|', ' ').split())


class TestKeystoneByDefault(_AuthTest):

    def test_a_cloud_configuration_authenticates_with_keystone(self):
        # No auth_strategy, but [keystone_authtoken]: written for a cloud.
        # Nothing listens on the identity URL: every request without a
        # token is refused before Keystone would be asked.
        identity = 'http://127.0.0.1:%d/v3' % ports.free_port()
        self.start_all_in_one({'keystone_authtoken': {
            'www_authenticate_uri': identity, 'auth_url': identity,
            'auth_type': 'password'}})
        for method, path in (('GET', '/v1/backup-policies'),
                             ('GET', '/v1/services'),
                             ('POST', '/v1/backup-policies')):
            status, body = self.service.request(method, path)
            self.assertEqual(401, status, (method, path, body))
        # noauth's headers carry no weight.
        self.service.headers = {
            'Content-Type': 'application/json', 'X-Project-Id': 'admin',
            'X-Roles': 'admin', 'X-Identity-Status': 'Confirmed'}
        self.assertEqual(401, self.service.request('GET', '/v1/services')[0])
        log = self.service.log()
        self.assertIn('Authenticating with Keystone: auth_strategy is not '
                      'set', log)
        self.assertNotIn(NOAUTH_WARNING, log)


class TestNoauth(_AuthTest):

    def test_noauth_on_a_public_address_refuses_to_start(self):
        for sections in (
                {'api': {'bind_host': '0.0.0.0'}},
                # Explicit noauth, even with [keystone_authtoken].
                {'DEFAULT': {'auth_strategy': 'noauth'},
                 'api': {'bind_host': '0.0.0.0'},
                 'keystone_authtoken': {'auth_type': 'password'}}):
            config = self.all_in_one_config(sections)
            line = self.assertRefused(
                'all', config, 'the REST API would serve without '
                'authentication (auth_strategy = noauth) on [api] bind_host '
                '0.0.0.0, which is not a loopback address')
            self.assertIn('allow_unauthenticated_public_access = true', line)
        # dbaas-scheduler-api too, before it looks at the database.
        config = self.config({'DEFAULT': {'auth_strategy': 'noauth'},
                              'api': {'bind_host': '0.0.0.0'}}, 'api.conf')
        self.assertRefused('api', config, 'the REST API would serve '
                           'without authentication')
        # Refused before it made its state directory.
        self.assertFalse(os.path.exists(self.state))

    def test_noauth_on_loopback_starts_and_warns(self):
        config = self.start_all_in_one({})
        self.assertEqual(200, self.service.request('GET', '/v1/services')[0])
        log = self.service.log()
        self.assertIn(' WARNING dbaas_scheduler.api.auth ', log)
        self.assertIn(NOAUTH_WARNING, log)
        code, text = self.upgrade_check(config)
        self.assertIn('Check: Authentication Result: Success', text)

    def test_public_noauth_when_explicitly_allowed(self):
        config = self.start_all_in_one({'api': {
            'bind_host': '0.0.0.0',
            'allow_unauthenticated_public_access': 'true'}})
        self.assertEqual(200, self.service.request('GET', '/v1/services')[0])
        log = self.service.log()
        self.assertIn(NOAUTH_WARNING, log)
        self.assertIn('allow_unauthenticated_public_access is set', log)
        code, text = self.upgrade_check(config)
        self.assertEqual(1, code, text)
        self.assertIn('Check: Authentication Result: Warning Details: The '
                      'REST API would serve without authentication', text)


class TestUpgradeCheck(_AuthTest):

    def test_public_noauth_is_a_failure(self):
        for sections in ({'api': {'bind_host': '0.0.0.0'}},
                         {'DEFAULT': {'auth_strategy': 'noauth'},
                          'api': {'bind_host': '192.0.2.1'}}):
            config = self.all_in_one_config(sections)
            code, text = self.upgrade_check(config)
            self.assertEqual(2, code, text)
            self.assertIn('Check: Authentication Result: Failure Details: '
                          'The REST API would serve without authentication '
                          '(auth_strategy = noauth) on [api] bind_host', text)

    def test_keystone_on_a_public_address_is_fine(self):
        for sections in (
                {'DEFAULT': {'auth_strategy': 'keystone'},
                 'api': {'bind_host': '0.0.0.0'}},
                {'api': {'bind_host': '0.0.0.0'},
                 'keystone_authtoken': {'auth_type': 'password'}}):
            config = self.all_in_one_config(sections)
            code, text = self.upgrade_check(config)
            self.assertIn('Check: Authentication Result: Success', text)
