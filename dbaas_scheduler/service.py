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
"""The oslo.service services every dbaas-scheduler program runs.

:class:`Service` is what every program shares: its row in the ``service``
table, kept fresh by a heartbeat, and the RPC servers it serves.
:class:`LoopingService` adds the loops of the engine and the worker.

Everything runs from :meth:`Service.start`, which the launcher calls in the
forked child process: nothing runs before the fork.  A loop iteration
returns how many seconds to wait before the next one.  An iteration that
fails -- the database or the broker is away -- is logged and tried again
after an exponential backoff with jitter (tenacity); a loop only ends when
the service stops.  Stopping first stops the RPC servers (no new work),
then lets the iteration in flight of every loop finish.

Every program that runs services (-api, -engine, -worker, -all) writes a
Guru Meditation Report (oslo.reports: threads, configuration, versions)
on ``SIGUSR2``, the launcher's process and every child alike, to stderr
or to a file in ``[oslo_reports] log_dir``; a child also writes one when
the file of ``[oslo_reports] file_event_handler`` changes.  The launcher
(cotyledon) leaves ``SIGUSR2`` alone, whose default action would end the
process.
"""

import multiprocessing
import os
import signal
import threading

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_reports import guru_meditation_report as gmr
from oslo_reports import opts as gmr_opts
from oslo_service import service as oslo_service
import tenacity

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler import servicegroup
from dbaas_scheduler import version

LOG = logging.getLogger(__name__)

# Back-off between failed iterations of a loop, in seconds.
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 30


# The process whose Guru Meditation Reports are set up (one set-up per
# process, however many services it runs).
_reports_pid = None


def setup_reports(conf, name):
    """Write a Guru Meditation Report on SIGUSR2 (and on a file change).

    Once per process.  The launcher calls it before it forks: the handler
    of SIGUSR2, which only the main thread can set, is inherited by every
    child it forks (cotyledon's children leave SIGUSR2 alone, and without
    a handler its default action ends the process).  A child calls it
    again when its service starts (in a thread of its own), to watch the
    file of ``[oslo_reports] file_event_handler``: the watcher is a
    thread, which a fork does not copy, and a report is about the child.
    """
    global _reports_pid
    if _reports_pid == os.getpid():
        return
    _reports_pid = os.getpid()
    gmr_opts.set_defaults(conf)
    if threading.current_thread() is threading.main_thread():
        # setup_autorun with a file to watch would set up only the
        # watcher: the signal, always, first.
        gmr.TextGuruMeditation.setup_autorun(
            version.version_info, service_name=name,
            log_dir=conf.oslo_reports.log_dir, signum=signal.SIGUSR2)
        return
    if conf.oslo_reports.file_event_handler:
        try:
            gmr.TextGuruMeditation.setup_autorun(
                version.version_info, service_name=name, conf=conf,
                setup_signal=False)
        except OSError as exc:
            # A missing trigger file must not stop the service.
            LOG.error('No Guru Meditation Report on changes of '
                      '[oslo_reports] file_event_handler %s: %s',
                      conf.oslo_reports.file_event_handler, exc)


class StopSignals:
    """Ctrl-C stops gracefully, as ``SIGTERM`` does; a second one at once.

    oslo.service's launcher (cotyledon) takes ``SIGINT`` for an immediate
    exit of the launcher and of its children: a worker stopped with Ctrl-C
    gave nothing back, and its executions waited for their leases to
    expire.  A terminal's Ctrl-C goes to the whole process group, the
    launcher and its children alike.  So:

    * the children ignore ``SIGINT`` (set when cotyledon has made one, in
      its main thread): they stop when the launcher sends them
      ``SIGTERM``;
    * in the launcher, the first ``SIGINT`` is taken as ``SIGTERM`` -- the
      graceful stop of every child, then exit status 0;
    * a second ``SIGINT`` ends the children with ``SIGKILL`` and the
      launcher with status 1 at once, while the graceful stop is under
      way.  What that leaves RUNNING is taken over by the next worker
      started on this host (``worker/orphans.py``), or once its leases
      expire.

    cotyledon reads the signals it catches from its wake-up pipe in its
    main loop, which is blocked while the launcher waits for its children
    to stop; the second Ctrl-C is therefore acted on in the Python signal
    handler itself, which runs in any case.

    Two private names are reached, because no public way exists: the
    launcher's cotyledon ``ServiceManager`` (oslo.service's ``_manager``)
    and its ``_on_signal_received``.  A handler of our own for ``SIGINT``
    is not enough: cotyledon learns of every caught signal through
    ``signal.set_wakeup_fd`` and makes ``SIGINT`` a fast exit whatever the
    handler.  The upstream changes that would remove both: cotyledon, an
    option to take ``SIGINT`` as ``SIGTERM`` (or an ``on_sigint`` hook
    beside ``register_hooks``); oslo.service, the launcher's manager (or
    its hooks) made public.  If either is missing, :meth:`install` says
    so in a WARNING; the functional tests of Ctrl-C on a real worker
    (``tests/functional/worker/test_stop_restart.py``) fail too.
    """

    def __init__(self, manager):
        self.manager = manager
        self.interrupts = 0
        self._dispatch = manager._on_signal_received

    @classmethod
    def install(cls, launcher):
        """Set up the launcher's process (before it forks); None if not."""
        manager = getattr(launcher, '_manager', None)
        if manager is None or not hasattr(manager, '_on_signal_received'):
            LOG.warning('Ctrl-C (SIGINT) ends this program at once: the '
                        'launcher is not the one expected; stop it with '
                        'SIGTERM to stop gracefully')
            return None
        stop_signals = cls(manager)
        # cotyledon's own handler only wakes its loop; ours also counts.
        signal.signal(signal.SIGINT, stop_signals.interrupted)
        manager._on_signal_received = stop_signals.on_signal_received
        manager.register_hooks(on_new_worker=cls.in_child)
        return stop_signals

    @staticmethod
    def in_child(service_id, worker_id, service):
        # In the child's main thread: only there can a handler be set.
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    def interrupted(self, signum, frame):
        self.interrupts += 1
        if self.interrupts > 1:
            self.exit_now()

    def on_signal_received(self, sig):
        if sig == signal.SIGINT:
            if self.interrupts > 1:
                return
            LOG.warning('Caught SIGINT (Ctrl-C): stopping gracefully, as on '
                        'SIGTERM; press Ctrl-C again to exit at once')
            sig = signal.SIGTERM
        self._dispatch(sig)

    def exit_now(self):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        children = [child.pid for child in multiprocessing.active_children()]
        LOG.warning('Caught SIGINT (Ctrl-C) again: exiting at once; '
                    'killing service processes %s',
                    ', '.join(map(str, children)) or '-')
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os._exit(1)


def launch(conf, service):
    """Run ``service`` under oslo.service's launcher until it stops.

    SIGTERM stops gracefully, and so does a first SIGINT (Ctrl-C); a
    second one exits at once (:class:`StopSignals`).  SIGHUP re-reads the
    configuration files into ``conf`` (``mutate``); the services read it
    as they go.  SIGUSR2 writes a Guru Meditation Report of the process it
    is sent to (:func:`setup_reports`).
    """
    # The launcher's own process, before it forks.
    setup_reports(conf, getattr(service, 'binary', None) or 'dbaas-scheduler')
    launcher = oslo_service.launch(conf, service, restart_method='mutate')
    StopSignals.install(launcher)
    return launcher.wait()


class Service(oslo_service.Service):
    """A program's service: its service row, heartbeat and RPC servers.

    Subclasses set ``binary`` (and ``topic`` when they serve one) and fill
    in the hooks :meth:`on_start`, :meth:`on_stop` and :meth:`after_stop`.
    """

    binary = None
    #: The metrics of :mod:`dbaas_scheduler.stats` its heartbeat writes
    #: into its service row (in dbaas-scheduler-all, the parts share one
    #: registry: each publishes its own).
    stats_metrics = ()

    def __init__(self, conf):
        super().__init__()
        # Made in the launcher's process: a configuration error stops the
        # program before it forks, not in a child that would be restarted.
        rpcapi.check_upgrade_levels(conf)
        self.conf = conf
        self.servers = []
        self._stopping = threading.Event()
        self._threads = []
        # {loop name: Event} that ends the loop's wait early (wake()).
        self._wakeups = {}
        # This process's identity: made in start(), in the child process.
        # The launcher starts a new child when one dies, from this object
        # as it was before the fork; the new child is another process and
        # must not take the dead one's row (nor its executions' leases).
        self.registration = None

    @property
    def topic(self):
        return None

    @property
    def service_id(self):
        """This process's id in the service table (a worker's owner id).

        None until the service starts.
        """
        return self.registration and self.registration.service_id

    def on_start(self):
        """Set up and start serving (in the child process).

        ``service_id`` is this process's from here on.
        """

    def on_stop(self):
        """Stop taking new work; the RPC servers have stopped already."""

    def after_stop(self):
        """Clean up once every loop has ended."""

    def loop_failed(self, name, error):
        """An iteration of loop ``name`` raised ``error``; it is retried."""

    def drain(self):
        """On a graceful stop, before the loops end: finish what runs.

        The loops still run meanwhile; :meth:`stop_servers` takes no new
        work.
        """

    def stop_servers(self):
        """Stop the RPC servers; requests in flight finish first."""
        servers, self.servers = self.servers, []
        for server in servers:
            server.stop()
        for server in servers:
            server.wait()

    def serve_rpc(self, endpoints, pool_size=None):
        """Start an RPC server for ``endpoints`` on this service's topic.

        The server listens on the topic and on ``<topic>.<host>``, and runs
        requests on the threading executor (see :func:`rpc.get_server`).
        With ``pool_size``, it runs at most that many at once, and asks
        RabbitMQ for no more than that many unacknowledged messages
        besides, so that it does not hoard a burst that other servers of
        the topic could take.
        """
        if pool_size is not None:
            # The driver's options exist once the transport is loaded, and
            # the listener's connection reads them when it opens.
            try:
                self.conf.set_override('rabbit_qos_prefetch_count',
                                       pool_size,
                                       group='oslo_messaging_rabbit')
            except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
                LOG.debug('Not a RabbitMQ transport: no prefetch limit set')
        target = messaging.Target(topic=self.topic, server=self.conf.host)
        server = rpc.get_server(target, endpoints)
        self.add_server(server, pool_size)
        return server

    def add_server(self, server, pool_size=None):
        """Start ``server`` now; it is stopped first when the service is."""
        if pool_size is None:
            server.start()
        else:
            server.start(override_pool_size=pool_size)
        self.servers.append(server)

    def wake(self, name):
        """Run loop ``name``'s next iteration now, not after its delay."""
        event = self._wakeups.get(name)
        if event is not None:
            event.set()

    def _sleep(self, name, delay):
        event = self._wakeups.get(name)
        if event is None:
            self._stopping.wait(delay)
            return
        event.wait(delay)
        # Cleared before the iteration: whatever woke it, the iteration
        # that follows sees it.
        event.clear()

    def _loops(self):
        """``[(name, iteration)]`` of every loop this service runs."""
        return [('heartbeat', self._heartbeat)]

    def start(self):
        super().start()
        setup_reports(self.conf, self.binary)
        self.registration = servicegroup.ServiceRegistration(
            self.conf, dbaas_context.get_admin_context(), self.binary,
            self.topic, stats_metrics=self.stats_metrics)
        self.on_start()
        loops = self._loops()
        for name, _ in loops:
            self._wakeups[name] = threading.Event()
        for name, iteration in loops:
            thread = threading.Thread(
                target=self._run_loop, args=(name, iteration),
                name='%s-%s' % (self.binary, name), daemon=True)
            thread.start()
            self._threads.append(thread)
        LOG.info('%s started on %s (service %s)', self.binary,
                 self.conf.host, self.service_id)

    def stop(self, graceful=True):
        if self._stopping.is_set() and not self._threads:
            return
        if graceful and not self._stopping.is_set():
            try:
                self.drain()
            except Exception:
                LOG.exception('%s: stopping without finishing what runs',
                              self.binary)
        self._stopping.set()
        for event in self._wakeups.values():
            event.set()
        self.stop_servers()
        self.on_stop()
        for thread in self._threads:
            thread.join()
        self._threads = []
        self.after_stop()
        try:
            if self.registration is not None:
                self.registration.unregister()
        except Exception:
            LOG.exception('Could not remove the service row %s',
                          self.service_id)
        LOG.info('%s stopped', self.binary)
        super().stop(graceful)

    def wait(self):
        self._stopping.wait()
        for thread in list(self._threads):
            thread.join()

    def reset(self):
        # SIGHUP: the services read the (mutated) configuration as they go.
        pass

    def _heartbeat(self, context):
        self.registration.heartbeat()
        return self.conf.heartbeat_interval

    def _retrying(self, name):
        def log_failure(state):
            exc = state.outcome.exception()
            LOG.error('%s %s failed (attempt %d), retrying in %.1fs: %s: %s',
                      self.binary, name, state.attempt_number,
                      state.next_action.sleep, type(exc).__name__, exc)
            self.loop_failed(name, exc)

        return tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(Exception),
            wait=tenacity.wait_exponential_jitter(initial=BACKOFF_INITIAL,
                                                  max=BACKOFF_MAX),
            stop=tenacity.stop_when_event_set(self._stopping),
            sleep=self._stopping.wait,
            before_sleep=log_failure,
            reraise=True)

    def _run_loop(self, name, iteration):
        context = dbaas_context.get_admin_context()
        retrying = self._retrying(name)
        while not self._stopping.is_set():
            try:
                delay = retrying(iteration, context)
            except Exception:
                # Only reached once stopping: the retry gave up.
                break
            if delay and not self._stopping.is_set():
                self._sleep(name, delay)


class LoopingService(Service):
    """A service that also runs loops of its own: the engine, the worker."""

    def loops(self):
        """``[(name, iteration)]``: ``iteration(context)`` -> seconds."""
        raise NotImplementedError

    def _loops(self):
        return list(self.loops()) + super()._loops()
