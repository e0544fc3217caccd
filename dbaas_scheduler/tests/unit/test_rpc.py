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
"""RPC plumbing: the bounded pool that keeps a worker from hoarding."""

import threading
import time

from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging import conffixture
from oslotest import base

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import rpc


class TestBoundedThreadPoolExecutor(base.BaseTestCase):

    def test_submit_waits_while_every_thread_is_busy(self):
        pool = rpc.BoundedThreadPoolExecutor(max_workers=2)
        self.addCleanup(pool.shutdown)
        release = threading.Event()
        for _ in range(2):
            pool.submit(release.wait)
        third = threading.Thread(target=pool.submit, args=(time.sleep, 0))
        third.start()
        third.join(0.3)
        self.assertTrue(third.is_alive(), 'submit did not wait')
        release.set()
        third.join(5)
        self.assertFalse(third.is_alive())

    def test_results_and_errors_pass_through(self):
        pool = rpc.BoundedThreadPoolExecutor(max_workers=1)
        self.addCleanup(pool.shutdown)
        self.assertEqual(4, pool.submit(lambda x: x * 2, 2).result())
        self.assertRaises(ZeroDivisionError,
                          pool.submit(lambda: 1 / 0).result)
        # The slot of a failed call was given back.
        self.assertEqual(1, pool.submit(lambda: 1).result(timeout=5))


class TestGetServer(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        conf = cfg.ConfigOpts()
        self.useFixture(conffixture.ConfFixture(conf,
                                                transport_url='fake:/'))
        conf([], default_config_files=[])
        rpc._TRANSPORT = messaging.get_rpc_transport(conf)
        self.addCleanup(rpc.cleanup)

    def test_server_uses_the_bounded_pool(self):
        # Guards the replacement of oslo.messaging's executor class: if a
        # release renames the attribute, the server would quietly hoard.
        server = rpc.get_server(messaging.Target(topic='t', server='h'),
                                [object()])
        server.start(override_pool_size=3)
        self.addCleanup(server.wait)
        self.addCleanup(server.stop)
        self.assertIsInstance(server._work_executor,
                              rpc.BoundedThreadPoolExecutor)

    def _wait_for(self, predicate, timeout=30):
        deadline = time.monotonic() + timeout
        while not predicate() and time.monotonic() < deadline:
            time.sleep(0.02)

    def test_a_busy_server_leaves_casts_to_the_others(self):
        # What the bounded pool is for, seen from outside: a server whose
        # threads all work stops taking casts, and another server of the
        # topic gets them.  With oslo.messaging's own pool the busy server
        # takes all ten (and would lose them if it died).
        release = threading.Event()

        class Endpoint:
            def __init__(self, block):
                self.block = block
                self.taken = []

            def work(self, ctxt, n):
                self.taken.append(n)
                if self.block:
                    release.wait(30)

        busy, free = Endpoint(block=True), Endpoint(block=False)
        client = rpc.get_client(messaging.Target(topic='t'))
        servers = []
        for name, endpoint in (('busy', busy), ('free', free)):
            server = rpc.get_server(
                messaging.Target(topic='t', server=name), [endpoint])
            self.addCleanup(server.wait)
            self.addCleanup(server.stop)
            servers.append(server)
        self.addCleanup(release.set)

        servers[0].start(override_pool_size=2)
        for n in range(10):
            client.cast(dbaas_context.get_admin_context(), 'work', n=n)
        self._wait_for(lambda: len(busy.taken) == 2)
        time.sleep(0.5)  # time enough for a hoarding server to take more
        servers[1].start(override_pool_size=2)
        # Two run on the busy server; one more waits in its listener.
        self._wait_for(lambda: len(free.taken) >= 7)
        self.assertEqual(2, len(busy.taken))
        self.assertGreaterEqual(len(free.taken), 7)


class TestRequestContextSerializer(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.RequestContext(
            project_id='p', user_id='u', roles=['member'],
            auth_token='users-secret', is_admin=True, request_id='req-1')

    def test_calls_carry_the_token_casts_do_not(self):
        call = rpc.RequestContextSerializer().serialize_context(self.context)
        self.assertEqual('users-secret', call['auth_token'])
        cast = rpc.RequestContextSerializer(secrets=False).serialize_context(
            self.context)
        self.assertNotIn('auth_token', cast)
        self.assertNotIn('users-secret', repr(cast))
        self.assertEqual(('p', 'u', ['member'], 'req-1'),
                         (cast['project_id'], cast['user'], cast['roles'],
                          cast['request_id']))

    def test_a_message_never_makes_itself_admin(self):
        serializer = rpc.RequestContextSerializer()
        received = serializer.deserialize_context(
            serializer.serialize_context(self.context))
        self.assertFalse(received.is_admin)
        self.assertEqual(('p', 'u', ['member']),
                         (received.project_id, received.user_id,
                          received.roles))

    def test_a_local_cast_gets_a_copy_without_the_token(self):
        received = []
        done = threading.Event()

        class Endpoint:
            def run(self, context, value):
                received.append((context, value))
                done.set()

        rpc.register_local_endpoint('topic', Endpoint(), 1)
        self.addCleanup(rpc.cleanup)
        rpc.LocalClient('topic').cast(self.context, 'run', value=1)
        self.assertTrue(done.wait(10))
        [(context, value)] = received
        self.assertEqual((None, 'p', 1), (context.auth_token,
                                          context.project_id, value))
        self.assertEqual('users-secret', self.context.auth_token)
