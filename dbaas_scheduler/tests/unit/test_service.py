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
"""The services' shared scaffolding: heartbeat, loops, RPC servers."""

import threading

import fixtures
import oslo_messaging as messaging
from oslo_messaging import conffixture

from dbaas_scheduler.api import service as api_service
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler import exception
from dbaas_scheduler import rpc
from dbaas_scheduler import service
from dbaas_scheduler import servicegroup
from dbaas_scheduler.tests import base
from dbaas_scheduler.worker import service as worker_service


class _Service(service.LoopingService):
    binary = 'dbaas-scheduler-test'

    def __init__(self, conf, iteration):
        super().__init__(conf)
        self.iteration = iteration
        self.events = []

    @property
    def topic(self):
        return 'test-topic'

    def loops(self):
        return [('work', self.iteration)]

    def on_start(self):
        self.events.append('on_start')

    def on_stop(self):
        self.events.append('on_stop')

    def after_stop(self):
        self.events.append('after_stop')


class TestLoops(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(fixtures.MockPatchObject(
            service, 'BACKOFF_INITIAL', 0.01))
        self.useFixture(fixtures.MockPatchObject(service, 'BACKOFF_MAX', 0.02))
        self.useFixture(fixtures.MockPatchObject(
            servicegroup, 'ServiceRegistration'))

    def _make(self, iteration):
        made = _Service(self.conf, iteration)
        self.addCleanup(made.stop)
        return made

    def test_a_failing_iteration_is_retried_until_it_works(self):
        calls, worked = [], threading.Event()

        def iteration(context):
            calls.append(context)
            if len(calls) < 3:
                raise ConnectionError('database away')
            worked.set()
            return 60

        made = self._make(iteration)
        made.start()
        self.assertTrue(worked.wait(10))
        self.assertEqual(3, len(calls))
        self.assertTrue(calls[0].is_admin)

    def test_heartbeat_runs_beside_the_loops(self):
        beat = threading.Event()
        servicegroup.ServiceRegistration.return_value.heartbeat.side_effect = (
            beat.set)
        made = self._make(lambda context: 60)
        made.start()
        self.assertTrue(beat.wait(10))
        self.assertEqual(
            ['dbaas-scheduler-test-heartbeat', 'dbaas-scheduler-test-work'],
            sorted(thread.name for thread in made._threads))

    def test_stop_lets_the_iteration_in_flight_finish(self):
        running, release = threading.Event(), threading.Event()
        finished = []

        def iteration(context):
            running.set()
            release.wait(10)
            finished.append(True)
            return 0

        made = self._make(iteration)
        made.start()
        self.assertTrue(running.wait(10))
        stopper = threading.Thread(target=made.stop)
        stopper.start()
        stopper.join(0.2)
        self.assertTrue(stopper.is_alive(), 'stop did not wait')
        release.set()
        stopper.join(10)
        self.assertEqual([True], finished)
        self.assertEqual(['on_start', 'on_stop', 'after_stop'], made.events)
        made.registration.unregister.assert_called_once_with()
        made.wait()  # returns at once once stopped


class TestServiceIdentity(base.TestCase):
    """A process's service id is made in the process, when it starts."""

    def setUp(self):
        super().setUp()
        self.inserted = []
        self.useFixture(fixtures.MockPatchObject(
            db_services, 'register_service',
            side_effect=lambda context, values: self.inserted.append(values)))
        self.useFixture(fixtures.MockPatchObject(
            db_services, 'update_service_heartbeat', return_value=True))
        self.useFixture(fixtures.MockPatchObject(db_services,
                                                 'delete_service'))

    def _start(self, made):
        made.start()
        self.addCleanup(made.stop)
        return made

    def test_no_id_before_start(self):
        made = _Service(self.conf, lambda context: 60)
        self.assertIsNone(made.registration)
        self.assertIsNone(made.service_id)

    def test_each_start_is_a_new_identity(self):
        # The launcher starts a new child from the object it made before
        # forking: every start is another process, with another id.
        first = self._start(_Service(self.conf, lambda context: 60))
        second = self._start(_Service(self.conf, lambda context: 60))
        self.assertIsNotNone(first.service_id)
        self.assertNotEqual(first.service_id, second.service_id)

    def test_the_worker_owns_executions_as_the_started_process(self):
        # In memory, and with no database behind its loops.
        self.flags(rpc_transport='none')
        self.useFixture(fixtures.MockPatchObject(
            worker_service.poller.BackupPoller, 'run_pass', return_value=0))
        self.useFixture(fixtures.MockPatchObject(
            worker_service.reconciler.Reconciler, 'run_pass',
            return_value={}))
        self.useFixture(fixtures.MockPatchObject(
            worker_service.leases.LeaseKeeper, 'release_all',
            return_value=[]))
        self.useFixture(fixtures.MockPatchObject(
            worker_service.orphans.OrphanTaker, 'run_pass',
            return_value=[]))
        made = worker_service.WorkerService(self.conf)
        self.assertIsNone(made.runner)
        self._start(made)
        self.assertIsNotNone(made.service_id)
        self.assertEqual(made.service_id, made.runner.owner)
        self.assertEqual(made.service_id, made.runner.recorder.owner)
        self.assertEqual(made.service_id, made.poller.owner)
        self.assertEqual(['poller', 'leases', 'reconciler', 'orphans',
                          'heartbeat'],
                         [name for name, _ in made._loops()])
        rpc.cleanup()

    def test_the_worker_refuses_a_backend_timeout_beyond_the_lease(self):
        # A Trove request may wait 60 s (the default timeout): a lease of
        # 60 s could expire while a create is still on its way.
        self.flags(lease_duration=60, group='worker')
        error = self.assertRaises(exception.InvalidConfiguration,
                                  worker_service.WorkerService, self.conf)
        self.assertEqual(
            'Invalid configuration: [worker] lease_duration (60 s) must be '
            'longer than one request of the trove backend may take (60 s, '
            '[service_credentials] timeout): raise lease_duration or lower '
            'the timeout.', str(error))
        self.flags(timeout=30, group='service_credentials')
        worker_service.WorkerService(self.conf)


class TestAPIService(base.TestCase):

    def test_only_the_heartbeat_runs(self):
        made = api_service.APIService(self.conf)
        self.assertEqual(['heartbeat'], [name for name, _ in made._loops()])


class TestServeRPC(base.TestCase):

    def setUp(self):
        super().setUp()
        self.useFixture(conffixture.ConfFixture(self.conf,
                                                transport_url='fake:/'))
        rpc._TRANSPORT = messaging.get_rpc_transport(self.conf)
        self.addCleanup(rpc.cleanup)
        self.flags(host='host-a')

    def _serve(self, **kwargs):
        made = _Service(self.conf, lambda context: 60)
        server = made.serve_rpc([object()], **kwargs)
        self.addCleanup(made.stop)
        return made, server

    def test_server_on_the_topic_and_host(self):
        get_server = self.useFixture(fixtures.MockPatchObject(
            rpc, 'get_server', wraps=rpc.get_server)).mock
        made, server = self._serve()
        [target, endpoints] = get_server.call_args.args
        self.assertEqual(('test-topic', 'host-a'),
                         (target.topic, target.server))
        self.assertEqual([server], made.servers)
        self.assertIsInstance(server._work_executor,
                              rpc.BoundedThreadPoolExecutor)
        # Without a pool size, oslo.messaging's defaults hold.
        self.assertEqual(0, self.conf.oslo_messaging_rabbit
                         .rabbit_qos_prefetch_count)
        self.assertEqual(self.conf.executor_thread_pool_size,
                         server._work_executor._max_workers)

    def test_pool_size_bounds_the_pool_and_the_prefetch(self):
        _, server = self._serve(pool_size=3)
        self.assertEqual(3, server._work_executor._max_workers)
        self.assertEqual(3, self.conf.oslo_messaging_rabbit
                         .rabbit_qos_prefetch_count)

    def test_stop_stops_the_servers_first(self):
        made, server = self._serve()
        made.stop()
        self.assertEqual([], made.servers)
        self.assertFalse(server._started)
