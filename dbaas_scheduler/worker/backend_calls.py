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
"""The worker's backend calls, and the one place their retries are decided.

What is worth another try is the backend's to say: it raises
``backends.base.TransientBackendError`` (retried here) or a
``PermanentBackendError`` (not).  For Trove that classification is in
``backends/trove/client.py`` (``TroveClient._send``: a connection error or
a timeout) and ``backends/trove/errors.py`` (``error_from_response``: by
HTTP status; ``json_body``: a cut answer); the client itself only waits
out Trove's rate limiting (``[trove] rate_limit_max_wait``).  Everything
else -- how often, how long between attempts, and what an attempt after a
lost answer must do first -- is decided here: :func:`call` for any call,
:func:`find_or_create_backup` for the create, the one call that is not
idempotent.
"""

import time

from oslo_log import log as logging
import tenacity

from dbaas_scheduler.backends import base as backends

LOG = logging.getLogger(__name__)


class RetriesExhausted(backends.BackendError):
    """Transient errors until ``[worker] max_attempts``; ``last`` the last.

    A permanent error for a caller without a start window; a caller with
    one tries again later, within it (``worker/lifecycle.py``).
    """

    def __init__(self, message, last):
        super().__init__(message=message)
        self.last = last


class StartWindowClosed(Exception):
    """The start window of an execution ended before its backup started."""

    def __init__(self, deadline):
        super().__init__('start window ended at %s' % deadline.isoformat())
        self.deadline = deadline


def call(conf, subject, function, *args, passed_on=()):
    """``function(*args)``, retried while it raises a transient error.

    At most ``[worker] max_attempts`` attempts, exponential backoff with
    jitter between them; ``subject`` (e.g. ``Execution <id>``) starts the
    log lines.  Giving up raises a (permanent) ``BackendError`` that says
    so.  Errors of the classes ``passed_on`` are raised as they are, at
    once.
    """
    # The first attempt without tenacity's machinery, which costs more
    # than the fake backend's whole create: nearly every call succeeds at
    # once.  A transient error of that attempt is handed to the same
    # retrying as before as its attempt 1 (raised again, the backend not
    # called), so the attempts, the waits and the log lines are the same.
    try:
        return function(*args)
    except passed_on:
        raise
    except backends.TransientBackendError as exc:
        first_error = exc
    attempts = []

    def attempt(*attempt_args):
        if not attempts:
            attempts.append(1)
            raise first_error
        return function(*attempt_args)

    def log_retry(state):
        LOG.warning('%s: %s (attempt %d of %d); retrying in %.1fs', subject,
                    state.outcome.exception(), state.attempt_number,
                    conf.worker.max_attempts, state.next_action.sleep)

    def worth_retrying(error):
        return (isinstance(error, backends.TransientBackendError)
                and not isinstance(error, passed_on))

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception(worth_retrying),
        stop=tenacity.stop_after_attempt(conf.worker.max_attempts),
        wait=tenacity.wait_exponential_jitter(
            initial=conf.worker.retry_initial_delay,
            max=conf.worker.retry_max_delay),
        before_sleep=log_retry, reraise=True)
    try:
        return retrying(attempt, *args)
    except passed_on:
        raise
    except backends.TransientBackendError as exc:
        raise RetriesExhausted('%s (gave up after %d attempts)' % (
            exc, conf.worker.max_attempts), exc)


def timed_out_create_wait(conf, backend):
    """Seconds to look for a backup whose create timed out.

    ``[worker] timed_out_create_wait``, or twice the backend's
    ``call_timeout`` (0 for a backend that does not wait on the network).
    """
    wait = conf.worker.timed_out_create_wait
    if wait is not None:
        return wait
    call_timeout = backend.call_timeout(conf)
    return 2.0 * call_timeout if call_timeout else 0.0


def _timed_out(error):
    return backends.error_kind(error) == 'timeout'


def find_or_create_backup(conf, backend, policy, execution, name,
                          description, before_create):
    """The backup of ``execution``: found by its tag, or created.

    Retried as one unit by :func:`call`: a create whose answer was lost
    (a timeout, a reset) may have been accepted, so every attempt after
    the first looks for the backup tagged with the execution id before it
    creates one.  After a create that timed out, that look is repeated
    for up to :func:`timed_out_create_wait` seconds: a slow backend may
    still be working on the request, and creating again at once would
    make a second backup for the slot once both land.  The very first
    attempt of a first claim need not look: nothing can have been created
    for this execution yet, and a listing per backup is what makes a
    burst of backups exceed Trove's rate limits.  ``before_create(first)``
    runs right before each create (``first``: no attempt before this
    one); the caller's fencing check, it raises to stop.
    """
    tries = []
    tag = backends.execution_tag(execution.id)

    def look():
        found = backend.find_backup(policy, tag)
        if found is not None:
            LOG.info('Execution %s: found backup %s it had started '
                     'before', execution.id, found.id)
        return found

    def look_a_while(seconds):
        # At retry_initial_delay, then doubling intervals, and once more
        # at the end: a create in flight that lands is found soon, and
        # a long wait costs a few listings only.
        deadline = time.monotonic() + seconds
        delay = max(conf.worker.retry_initial_delay, 0.05)
        LOG.info('Execution %s: its create timed out; looking for the '
                 'backup for up to %.0fs before creating another',
                 execution.id, seconds)
        while True:
            left = deadline - time.monotonic()
            time.sleep(max(0.0, min(delay, left)))
            found = look()
            if found is not None or left <= delay:
                return found
            delay *= 2

    def attempt():
        if tries and tries[-1] == 'timeout':
            wait = timed_out_create_wait(conf, backend)
            found = look_a_while(wait) if wait > 0 else look()
            if found is not None:
                return found
        elif tries or execution.attempts > 1:
            found = look()
            if found is not None:
                return found
        first = not tries
        tries.append('sent')
        before_create(first)
        try:
            return backend.create_backup(policy, name, description)
        except backends.TransientBackendError as exc:
            if _timed_out(exc):
                tries[-1] = 'timeout'
            raise

    # With [worker] project_backoff, the backend's limits on a project are
    # the worker's to act on (worker/lifecycle.py), not retried here.
    return call(conf, 'Execution %s' % execution.id, attempt,
                passed_on=(backends.PROJECT_OVER_LIMIT
                           if conf.worker.project_backoff else ()))
