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
"""Backend calls retried on transient errors, with backoff and jitter."""

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
