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
"""An execution's life in a worker, up to the backup being started.

DESIGN section 5, steps 1 to 3 and 7:

1. **Claim** with one conditional update for a message's executions
   (``db_worker.claim_executions``); an execution someone else holds, or
   one already finished, is dropped: a duplicate or repeated cast does
   nothing.  The claimed executions, their policies and their overlaps are
   then loaded with one query each.
2. **Overlap**: another execution of the same instance goes first (see
   ``db_worker.find_overlaps``) -- the policy's ``skip`` makes this one
   SKIPPED with the reason, ``queue`` gives it back to be cast again after
   ``[worker] queue_retry_interval``.
3. **Create, idempotently**: if no backup id is recorded, look for a backup
   tagged with the execution id first (a worker may have died between the
   backend's create and the recording of its id), create one otherwise,
   and record its id at once.

Watching the backup until it finishes (step 4) is the poller's job, so no
thread waits for hours.  Backend calls that fail with a transient error are
retried with exponential backoff and jitter up to ``[worker] max_attempts``
(tenacity); a permanent error fails the execution with a fault a person can
read, and an instance that no longer exists also disables its policy.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils
import tenacity

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import enums
from dbaas_scheduler import notifications
from dbaas_scheduler.worker import recorder

LOG = logging.getLogger(__name__)

Status = enums.ExecutionStatus


def backup_name(policy, execution):
    """``<policy name>-<scheduled_at in UTC, ISO basic>``."""
    return '%s-%s' % (policy.name,
                      execution.scheduled_at.strftime('%Y%m%dT%H%M%SZ'))


_TRIGGER_WORDS = {
    enums.ExecutionTrigger.SCHEDULE: 'Scheduled',
    enums.ExecutionTrigger.MANUAL: 'Manual',
    enums.ExecutionTrigger.BACKFILL: 'Backfill',
}


def backup_description(policy, execution):
    return ('%s backup of policy %s (%s) for %s. %s' % (
        _TRIGGER_WORDS.get(execution.trigger, 'Scheduled'), policy.name,
        policy.id, execution.scheduled_at.isoformat(),
        backends.execution_tag(execution.id)))


class ExecutionRunner:
    """Claims executions and starts their backups (worker steps 1-3)."""

    def __init__(self, conf, owner):
        self.conf = conf
        self.owner = owner
        self.recorder = recorder.BackupIdRecorder(owner)

    def run(self, context, execution_ids):
        """Claim and start what this worker can get of ``execution_ids``."""
        now = timeutils.utcnow(True)
        claimed = db_worker.claim_executions(
            context, list(execution_ids), self.owner, now,
            self.conf.worker.lease_duration)
        for execution_id in set(execution_ids) - set(claimed):
            LOG.debug('Execution %s is not claimable (taken by another '
                      'worker, finished, or not due yet): dropped',
                      execution_id)
        if not claimed:
            return claimed
        # One query each for the whole message, not per execution.
        rows = db_worker.get_executions_and_policies(context, claimed)
        overlaps = db_worker.find_overlaps(
            context, [execution for execution, _ in rows], now)
        for execution, policy in rows:
            try:
                self.start(context, execution, policy,
                           overlaps.get(execution.id))
            except Exception as exc:
                LOG.exception('Execution %s: unexpected error while starting '
                              'its backup', execution.id)
                self._fail_unexpectedly(context, execution.id, exc)
        return claimed

    def _fail_unexpectedly(self, context, execution_id, error):
        # Its lease is not renewed before a backup id is recorded, so if
        # this fails too (the database is away) another worker resumes it
        # once the lease expires.
        try:
            execution = db_api.get_execution(context, execution_id)
            if execution.backup_id is None:
                self.finish(context, execution, Status.FAILED,
                            fault='internal error in the worker: %s: %s' % (
                                type(error).__name__, error))
        except Exception:
            LOG.exception('Execution %s: could not record the failure; it '
                          'will be resumed when its lease expires',
                          execution_id)

    def start(self, context, execution, policy, goes_first=None):
        """Steps 2 and 3 for one claimed execution.

        ``goes_first`` is the id of another execution of the same instance
        this one yields to, if any (see ``db_worker.find_overlaps``).
        """
        if execution.backup_id is not None:
            # Resumed after its worker died: the poller takes it from here.
            LOG.info('Execution %s of policy %s: resuming; backup %s was '
                     'started before', execution.id, execution.policy_id,
                     execution.backup_id)
            return
        if policy is None:
            self.finish(context, execution, Status.SKIPPED,
                        reason='the policy was deleted before the backup '
                               'started')
            return
        if goes_first is not None:
            self._yield_to(context, execution, policy, goes_first)
            return
        try:
            backup = self._find_or_create(execution, policy)
        except backends.InstanceNotFound as exc:
            db_api.disable_policy(
                context, policy.id,
                'instance %s no longer exists' % policy.instance_id)
            LOG.warning('Execution %s: %s; policy %s is disabled',
                        execution.id, exc, policy.id)
            self.finish(context, execution, Status.FAILED, fault=str(exc))
            return
        except backends.TrustBroken as exc:
            self.pause_for_trust(context, policy, exc)
            self.finish(context, execution, Status.FAILED, fault=str(exc))
            return
        except backends.BackendError as exc:
            self.finish(context, execution, Status.FAILED, fault=str(exc))
            return
        except loader.UnknownBackend as exc:
            self.finish(context, execution, Status.FAILED, fault=str(exc))
            return
        if self.recorder.record(execution.id, backup.id):
            LOG.info('Execution %s of policy %s: backup %s started on '
                     'instance %s', execution.id, policy.id, backup.id,
                     policy.instance_id)
        else:
            # Our lease expired meanwhile; the worker that resumes finds
            # this backup by its tag.
            LOG.warning('Execution %s: lost its lease before backup %s '
                        'could be recorded', execution.id, backup.id)

    def pause_for_trust(self, context, policy, error):
        """A broken trust fails every run: stop until someone acts."""
        db_api.disable_policy(
            context, policy.id,
            'its Keystone trust no longer works; delete the policy and '
            'create it again as a user of the project: %s' % error)
        LOG.warning('Policy %s paused: %s', policy.id, error)

    def _yield_to(self, context, execution, policy, other_id):
        now = timeutils.utcnow(True)
        reason = ('execution %s of the same instance is still running'
                  % other_id)
        if policy.overlap_policy == enums.OverlapPolicy.QUEUE:
            retry_at = now + datetime.timedelta(
                seconds=self.conf.worker.queue_retry_interval)
            db_worker.release_execution(context, execution.id, self.owner,
                                        retry_at, 'queued: ' + reason)
            LOG.info('Execution %s queued until %s: %s', execution.id,
                     retry_at.isoformat(), reason)
        else:
            self.finish(context, execution, Status.SKIPPED,
                        reason='overlap: ' + reason)

    def _find_or_create(self, execution, policy):
        backend = loader.get_backend(self.conf, policy.backend)
        # Retried as one unit: a create whose answer was lost (timeout,
        # reset) may have been accepted, so every attempt looks for the
        # tagged backup before it creates one.
        return self.call_backend(execution, self._find_or_create_once,
                                 backend, execution, policy)

    def _find_or_create_once(self, backend, execution, policy):
        found = backend.find_backup(policy,
                                    backends.execution_tag(execution.id))
        if found is not None:
            LOG.info('Execution %s: found backup %s it had started before',
                     execution.id, found.id)
            return found
        return backend.create_backup(policy, backup_name(policy, execution),
                                     backup_description(policy, execution))

    def call_backend(self, execution, function, *args):
        """Call the backend, retrying transient errors with backoff."""
        def log_retry(state):
            LOG.warning('Execution %s: %s (attempt %d of %d); retrying in '
                        '%.1fs', execution.id, state.outcome.exception(),
                        state.attempt_number, self.conf.worker.max_attempts,
                        state.next_action.sleep)

        retrying = tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(
                backends.TransientBackendError),
            stop=tenacity.stop_after_attempt(self.conf.worker.max_attempts),
            wait=tenacity.wait_exponential_jitter(
                initial=self.conf.worker.retry_initial_delay,
                max=self.conf.worker.retry_max_delay),
            before_sleep=log_retry, reraise=True)
        try:
            return retrying(function, *args)
        except backends.TransientBackendError as exc:
            raise backends.BackendError(
                message='%s (gave up after %d attempts)' % (
                    exc, self.conf.worker.max_attempts))

    def finish(self, context, execution, status, reason=None, fault=None):
        """Record the final state (if still ours) and notify."""
        now = timeutils.utcnow(True)
        if not db_worker.finish_execution(context, execution.id,
                                          self.owner, status, now,
                                          reason=reason, fault=fault):
            LOG.warning('Execution %s: no longer owned by this worker; its '
                        '%s state was not recorded', execution.id, status)
            return False
        LOG.info('Execution %s of policy %s: %s%s', execution.id,
                 execution.policy_id, status,
                 ' (%s)' % (fault or reason) if fault or reason else '')
        notifications.notify_execution(
            self.conf, context, status.lower(),
            notifications.execution_payload(
                execution, status=status, finished_at=now,
                status_reason=reason, fault=fault))
        return True
