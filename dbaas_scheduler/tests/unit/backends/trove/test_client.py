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
"""Trove's URL for a project, and the keystoneauth session threads share."""

import concurrent.futures
from unittest import mock

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import client
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.unit.backends.trove import fakes


class TestEndpoints(base.TestCase):

    def test_project_placeholder(self):
        self.assertEqual(
            'http://trove:8779/v1.0/abc',
            client.trove_endpoint('http://trove:8779/v1.0/%(project_id)s',
                                  'abc'))
        self.assertEqual(
            'https://trove/v1.0/abc',
            client.trove_endpoint('https://trove/v1.0/%(tenant_id)s/', 'abc'))

    def test_without_placeholder(self):
        self.assertEqual('http://trove:8779/v1.0/fixed',
                         client.trove_endpoint('http://trove:8779/v1.0/fixed',
                                               'abc'))

    def test_percent_signs_survive_keystoneauth_formatting(self):
        endpoint = client.trove_endpoint(
            'http://trove/db%20api/v1.0/%(project_id)s', 'abc')
        # keystoneauth applies "endpoint_override % values" itself.
        self.assertEqual('http://trove/db%20api/v1.0/abc',
                         endpoint % {'project_id': 'token-project'})

    def test_not_a_url(self):
        for template in ('trove:8779/v1.0', '/v1.0/%(project_id)s', ''):
            self.assertRaises(ValueError, client.trove_endpoint, template,
                              'abc')

    def test_catalog_endpoint_moves_to_the_policy_project(self):
        self.assertEqual(
            'http://trove:8779/v1.0/user-project',
            client.catalog_endpoint('http://trove:8779/v1.0/service-project/',
                                    'service-project', 'user-project'))
        self.assertEqual(
            'http://trove:8779/v1.0/same',
            client.catalog_endpoint('http://trove:8779/v1.0/same', 'same',
                                    'same'))
        self.assertEqual(
            'http://trove/x%%y',
            client.catalog_endpoint('http://trove/x%y', None, 'p'))


class TestSharedConnection(base.TestCase):

    def test_one_adapter_for_all_threads(self):
        self.flags(group='service_credentials', auth_type='none')
        trove_client = client.TroveClient(self.conf)
        with mock.patch.object(client.ks_loading,
                               'load_auth_from_conf_options',
                               wraps=client.ks_loading.
                               load_auth_from_conf_options) as load_auth:
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                adapters = set(pool.map(trove_client.adapter,
                                        [fakes.make_policy()] * 32))
        self.assertEqual(1, len(adapters))
        self.assertEqual(1, load_auth.call_count)
        adapter = adapters.pop()
        self.assertEqual('database', adapter.service_type)
        self.assertEqual('internal', adapter.interface)
        # The session's pool holds a connection per worker thread.
        pool = adapter.session.session.get_adapter('http://')
        self.assertEqual(self.conf.worker.pool_size
                         + self.conf.worker.poll_concurrency,
                         pool._pool_maxsize)
        self.assertEqual(client.DEFAULT_TIMEOUT, adapter.session.timeout)

    def test_configured_timeout(self):
        self.flags(group='service_credentials', auth_type='none', timeout=7)
        adapter = client.TroveClient(self.conf).adapter(fakes.make_policy())
        self.assertEqual(7, adapter.session.timeout)

    def test_no_auth_type(self):
        exc = self.assertRaises(backends.PermanentBackendError,
                                client.TroveClient(self.conf).adapter,
                                fakes.make_policy())
        self.assertIn('auth_type', str(exc))
