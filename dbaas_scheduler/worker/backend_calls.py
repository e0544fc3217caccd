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

from oslo_log import log as logging
import tenacity

from dbaas_scheduler.backends import base as backends

LOG = logging.getLogger(__name__)


def call(conf, subject, function, *args):
    """``function(*args)``, retried while it raises a transient error.

    At most ``[worker] max_attempts`` attempts, exponential backoff with
    jitter between them; ``subject`` (e.g. ``Execution <id>``) starts the
    log lines.  Giving up raises a (permanent) ``BackendError`` that says
    so.
    """
    def log_retry(state):
        LOG.warning('%s: %s (attempt %d of %d); retrying in %.1fs', subject,
                    state.outcome.exception(), state.attempt_number,
                    conf.worker.max_attempts, state.next_action.sleep)

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(
            backends.TransientBackendError),
        stop=tenacity.stop_after_attempt(conf.worker.max_attempts),
        wait=tenacity.wait_exponential_jitter(
            initial=conf.worker.retry_initial_delay,
            max=conf.worker.retry_max_delay),
        before_sleep=log_retry, reraise=True)
    try:
        return retrying(function, *args)
    except backends.TransientBackendError as exc:
        raise backends.BackendError(
            message='%s (gave up after %d attempts)' % (
                exc, conf.worker.max_attempts))


def find_or_create_backup(conf, backend, policy, execution, name,
                          description, before_create):
    """The backup of ``execution``: found by its tag, or created.

    Retried as one unit by :func:`call`: a create whose answer was lost
    (a timeout, a reset) may have been accepted, so every attempt after
    the first looks for the backup tagged with the execution id before it
    creates one.  The very first attempt of a first claim need not:
    nothing can have been created for this execution yet, and a listing
    per backup is what makes a burst of backups exceed Trove's rate
    limits.  ``before_create(first)`` runs right before each create
    (``first``: no attempt before this one); the caller's fencing check,
    it raises to stop.
    """
    tries = []

    def attempt():
        if tries or execution.attempts > 1:
            found = backend.find_backup(
                policy, backends.execution_tag(execution.id))
            if found is not None:
                LOG.info('Execution %s: found backup %s it had started '
                         'before', execution.id, found.id)
                return found
        first = not tries
        tries.append(True)
        before_create(first)
        return backend.create_backup(policy, name, description)

    return call(conf, 'Execution %s' % execution.id, attempt)
