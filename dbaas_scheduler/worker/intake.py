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
"""The worker's intake of casts, paused while its database is unreachable.

oslo.messaging acknowledges a cast as it hands it to the endpoint, before
the worker can claim its executions; a worker whose database is away would
take casts off the queue only to fail their claims, and they would wait for
the engine to cast them again after ``[engine] dispatch_timeout``.  RPC
casts cannot be requeued (oslo.messaging's ``requeue`` is for
notifications), so instead the worker stops consuming: its RPC server is
stopped (``stop()`` and ``wait()``, public API) and the casts stay on the
broker for the workers whose database answers, or for this one once its
database is back.  The executions of the casts that had already been taken
are cast again to the workers' topic once the server has stopped; a
duplicate cast does nothing (the claim drops it).

While paused, the intake loop tries the database every
``[database] retry_interval`` seconds and starts a new RPC server as soon
as it answers.  One WARNING when the pause starts, one INFO when it ends.
"""

import threading
import time

from oslo_log import log as logging

LOG = logging.getLogger(__name__)

# Seconds between two passes of the loop while the database answers: it is
# woken at once by database_unreachable(); the delay only bounds a missed
# wake-up.
IDLE = 60.0


class Intake:
    """Stops the worker's RPC server while its database is unreachable.

    ``serve()`` starts a new RPC server, ``unserve()`` stops (and waits
    for) the running one; ``recast(execution_ids)`` casts executions to
    the workers' topic; ``ping()`` raises if the database does not
    answer; ``wake()`` runs the intake loop's next pass now.
    """

    def __init__(self, conf, serve, unserve, recast, ping, wake=None):
        self.conf = conf
        self.serve = serve
        self.unserve = unserve
        self.recast = recast
        self.ping = ping
        self.wake = wake or (lambda: None)
        self._lock = threading.Lock()
        self._held = set()
        self._paused_since = None
        self._error = None
        self._serving = True

    @property
    def paused(self):
        """True from the first failure until the database answers again."""
        return self._paused_since is not None

    def database_unreachable(self, error, execution_ids=()):
        """Pause the intake; cast ``execution_ids`` again once it is.

        Called from any thread (an RPC handler whose claim failed, a loop
        whose iteration failed): the RPC server is stopped by the intake
        loop, never by a thread of the server itself.
        """
        with self._lock:
            self._held.update(execution_ids)
            if self._paused_since is None:
                self._paused_since = time.monotonic()
                self._error = error
        self.wake()

    def run_pass(self, context):
        """Stop or resume the RPC server; seconds until the next pass."""
        if not self.paused:
            return IDLE
        if self._serving:
            self.unserve()
            self._serving = False
            LOG.warning('The database is unreachable (%s): this worker takes '
                        'no casts until it answers again; they wait on the '
                        'broker for the other workers or for this one',
                        self._error)
        self._recast_held()
        try:
            self.ping(context)
        except Exception as exc:
            LOG.debug('The database still does not answer: %s', exc)
            return self.conf.database.retry_interval
        with self._lock:
            since, self._paused_since = self._paused_since, None
        self.serve()
        self._serving = True
        LOG.info('The database answers again: this worker takes casts '
                 'again (it took none for %.1f s)', time.monotonic() - since)
        return IDLE

    def _recast_held(self):
        with self._lock:
            held, self._held = sorted(self._held), set()
        if not held:
            return
        try:
            self.recast(held)
        except Exception as exc:
            with self._lock:
                self._held.update(held)
            LOG.warning('Could not cast again executions %s (%s); trying '
                        'again at the next pass', ', '.join(held), exc)
            return
        LOG.info('Cast again to the workers the executions of casts taken '
                 'while the database was unreachable: %s', ', '.join(held))
