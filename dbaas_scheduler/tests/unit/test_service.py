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

import signal
import threading
import types
from unittest import mock

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
        self.assertIsNone(made.parts)
        self._start(made)
        self.assertIsNotNone(made.service_id)
        self.assertEqual(made.service_id, made.parts.runner.owner)
        self.assertEqual(made.service_id, made.parts.recorder.owner)
        self.assertEqual(made.service_id, made.parts.poller.owner)
        self.assertEqual(['poller', 'leases', 'reconciler', 'expiry',
                          'orphans', 'heartbeat'],
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


class _Manager:
    """What StopSignals needs of cotyledon's ServiceManager."""

    def __init__(self):
        self.received = []
        self.hooks = []

    def _on_signal_received(self, sig):
        self.received.append(sig)

    def register_hooks(self, on_new_worker=None):
        self.hooks.append(on_new_worker)


class TestStopSignals(base.TestCase):

    def setUp(self):
        super().setUp()
        for signum in (signal.SIGINT,):
            self.addCleanup(signal.signal, signum, signal.getsignal(signum))
        self.manager = _Manager()
        self.signals = service.StopSignals.install(
            types.SimpleNamespace(_manager=self.manager))

    def test_the_first_ctrl_c_stops_as_sigterm_does(self):
        self.assertEqual(self.signals.interrupted,
                         signal.getsignal(signal.SIGINT))
        # The handler counts, cotyledon's loop dispatches.
        self.signals.interrupted(signal.SIGINT, None)
        self.manager._on_signal_received(signal.SIGINT)
        self.manager._on_signal_received(signal.SIGHUP)
        self.assertEqual([signal.SIGTERM, signal.SIGHUP],
                         self.manager.received)

    @mock.patch.object(service.os, '_exit', autospec=True)
    @mock.patch.object(service.os, 'kill', autospec=True)
    @mock.patch.object(service.multiprocessing, 'active_children',
                       autospec=True)
    def test_the_second_ctrl_c_exits_at_once(self, children, kill, exit_):
        children.return_value = [mock.Mock(pid=41), mock.Mock(pid=42)]
        self.signals.interrupted(signal.SIGINT, None)
        exit_.assert_not_called()
        self.signals.interrupted(signal.SIGINT, None)
        self.assertEqual([mock.call(41, signal.SIGKILL),
                          mock.call(42, signal.SIGKILL)],
                         kill.call_args_list)
        exit_.assert_called_once_with(1)
        # Its byte, read late by cotyledon's loop, starts nothing more.
        self.manager._on_signal_received(signal.SIGINT)
        self.assertEqual([], self.manager.received)

    def test_children_leave_ctrl_c_to_the_launcher(self):
        [hook] = self.manager.hooks
        hook('service', 0, None)
        self.assertEqual(signal.SIG_IGN, signal.getsignal(signal.SIGINT))

    def test_another_launcher_is_left_alone(self):
        before = signal.getsignal(signal.SIGINT)
        self.assertIsNone(service.StopSignals.install(object()))
        self.assertIs(before, signal.getsignal(signal.SIGINT))


class TestGracefulStop(base.TestCase):
    """The worker's drain: no new work, then what ends soon ends."""

    def setUp(self):
        super().setUp()
        self.flags(stop_wait=5, group='worker')
        self.worker = worker_service.WorkerService(self.conf)
        self.worker.parts = mock.Mock()
        self.worker.registration = mock.Mock(service_id='me')
        self.stop_servers = self.useFixture(fixtures.MockPatchObject(
            self.worker, 'stop_servers')).mock
        self.useFixture(fixtures.MockPatchObject(
            worker_service, 'STOP_POLL', 0.01))
        self.in_flight = self.useFixture(fixtures.MockPatchObject(
            worker_service.db_worker, 'list_backups_in_flight')).mock

    def _backup(self, execution_id, backend):
        return (types.SimpleNamespace(id=execution_id),
                types.SimpleNamespace(backend=backend))

    def test_waits_for_backups_whose_end_is_reported(self):
        local, fake = self._backup('e-local', 'local'), self._backup(
            'e-fake', 'fake')
        # The local one ends at the third look; the other is not waited
        # for (its backend does not report ends).
        self.in_flight.side_effect = [[local, fake], [local, fake], [fake]]
        self.worker.drain()
        self.stop_servers.assert_called_once_with()
        self.assertEqual(3, self.in_flight.call_count)

    def test_bounded_by_stop_wait(self):
        # A second of polls every 0.01 s: a stalled test process still
        # looks more than twice.
        self.flags(stop_wait=1, group='worker')
        self.in_flight.return_value = [self._backup('e-local', 'local')]
        self.worker.drain()
        self.assertGreater(self.in_flight.call_count, 2)

    def test_stop_wait_0_hands_back_at_once(self):
        self.flags(stop_wait=0, group='worker')
        self.in_flight.return_value = [self._backup('e-local', 'local')]
        self.worker.drain()
        self.assertEqual(1, self.in_flight.call_count)
