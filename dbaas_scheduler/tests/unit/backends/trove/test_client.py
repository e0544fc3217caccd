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
import http.server
import logging
import threading
from unittest import mock

import fixtures
from keystoneauth1 import session as ks_session

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

    def test_every_worker_thread_keeps_its_connection(self):
        # requests' own pool keeps 10 connections per host: with more
        # worker threads, urllib3 discarded one ("Connection pool is
        # full") after every request, and the next opened a new one.
        self.flags(group='service_credentials', auth_type='none')
        self.flags(group='worker', pool_size=14, poll_concurrency=2)
        threads = 16
        ports = set()
        together = threading.Barrier(threads)

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def do_GET(self):
                ports.add(self.client_address[1])
                try:
                    together.wait(30)
                except threading.BrokenBarrierError:
                    pass
                self.send_response(200)
                self.send_header('Content-Length', '0')
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        server.daemon_threads = True
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = 'http://127.0.0.1:%d/' % server.server_address[1]
        urllib3_log = self.useFixture(fixtures.FakeLogger(
            name='urllib3.connectionpool', level=logging.WARNING))
        session = client.TroveClient(self.conf).adapter(
            fakes.make_policy()).session
        with concurrent.futures.ThreadPoolExecutor(threads) as pool:
            for _ in range(2):
                together.reset()
                list(pool.map(lambda _: session.get(url, authenticated=False),
                              range(threads)))
        self.assertEqual('', urllib3_log.output)
        # The second round reused the first round's connections (requests'
        # own pool of 10 opened six more).
        self.assertLessEqual(len(ports), threads)

    def test_the_larger_pool_keeps_keystoneauths_tls_settings(self):
        try:
            session = ks_session.Session(tls_min_version='1.3')
        except TypeError:
            self.skipTest('this keystoneauth has no TLS settings')
        client._mount_pools(session, 24)
        for scheme in ('https://', 'http://'):
            adapter = session.session.get_adapter(scheme)
            self.assertIsInstance(adapter, ks_session.TCPKeepAliveAdapter)
            self.assertEqual('1.3', adapter.tls_min_version)
