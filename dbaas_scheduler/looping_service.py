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
"""An oslo.service Service made of loops that survive outages.

Each loop is a thread started in :meth:`LoopingService.start`, which the
launcher calls in the forked child process (nothing runs before the fork).
A loop iteration returns how many seconds to wait before the next one.  An
iteration that fails -- the database or the broker is away -- is logged
and tried again after an exponential backoff with jitter (tenacity); a loop
only ends when the service stops.  Stopping lets the iteration in flight
finish.  Every service also keeps its row in the ``service`` table fresh.
"""

import threading

from oslo_log import log as logging
from oslo_service import service
import tenacity

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import servicegroup

LOG = logging.getLogger(__name__)

# Back-off between failed iterations of a loop, in seconds.
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 30


class LoopingService(service.Service):
    """Subclasses set ``binary`` and ``topic`` and implement ``loops()``."""

    binary = None

    def __init__(self, conf):
        super().__init__()
        self.conf = conf
        self._stopping = threading.Event()
        self._threads = []
        self.registration = servicegroup.ServiceRegistration(
            conf, dbaas_context.get_admin_context(), self.binary, self.topic)

    @property
    def topic(self):
        return None

    @property
    def service_id(self):
        """This process's id in the service table (a worker's owner id)."""
        return self.registration.service_id

    def loops(self):
        """``[(name, iteration)]``: ``iteration(context)`` -> seconds."""
        raise NotImplementedError

    def on_start(self):
        """Set up what the loops use (in the child process)."""

    def on_stop(self):
        """Stop taking new work; called before the loops are joined."""

    def after_stop(self):
        """Clean up once the loops have ended."""

    def start(self):
        super().start()
        self.on_start()
        loops = list(self.loops()) + [('heartbeat', self._heartbeat)]
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
        self._stopping.set()
        self.on_stop()
        for thread in self._threads:
            thread.join()
        self._threads = []
        self.after_stop()
        try:
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
        # SIGHUP: the loops read the (mutated) configuration as they go.
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
            if delay:
                self._stopping.wait(delay)
