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

Steps 1 to 3 and 7 of doc/source/contributor/worker.rst:

1. **Claim** with one conditional update for a message's executions
   (``db_worker.claim_executions``), under a new fencing token (the claim
   id) that every later write about them is conditional on.  An execution
   someone else holds, or one already finished, is dropped: a duplicate or
   repeated cast does nothing.  The claims are held by the worker's
   :class:`~dbaas_scheduler.worker.leases.LeaseKeeper`, which renews their
   leases while they wait for this thread and while their backups are
   created, however slow the backend is.
2. **Overlap**: another execution of the same instance that goes first
   and is really running (``worker/overlap.py``) -- the policy's ``skip``
   makes this one SKIPPED with the reason, ``queue`` gives it back to be
   cast again after ``[worker] queue_retry_interval``.
3. **Create, idempotently**: if no backup id is recorded, look for a backup
   tagged with the execution id first (a worker may have died between the
   backend's create and the recording of its id); renew the lease, which
   also checks that the claim still holds, right before creating one; and
   record its id at once.  If the claim was lost meanwhile, the backup is
   one too many and the worker deletes it (``strays.Compensator``).

Watching the backup until it finishes (step 4) is the poller's job, so no
thread waits for hours.  Backend calls that fail with a transient error are
retried with exponential backoff and jitter up to ``[worker] max_attempts``
(tenacity); a permanent error fails the execution with a fault a person can
read, and an instance that no longer exists also disables its policy.
"""

import datetime
import functools
import threading
import time

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import leases as db_leases
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import enums
from dbaas_scheduler import exception
from dbaas_scheduler import notifications
from dbaas_scheduler.worker import backend_calls
from dbaas_scheduler.worker import backup_request
from dbaas_scheduler.worker import leases
from dbaas_scheduler.worker import overlap
from dbaas_scheduler.worker import recorder
from dbaas_scheduler.worker import strays

LOG = logging.getLogger(__name__)

Status = enums.ExecutionStatus

# What ExecutionRunner.start did with an execution.
STARTED = 'started'      # its backup runs (just started, or resumed)
FINISHED = 'finished'    # it ended (SUCCEEDED is never decided here)
RELEASED = 'released'    # queued behind another backup of its instance
LOST = 'lost'            # its claim was superseded meanwhile


class ClaimLost(Exception):
    """The claim of an execution is no longer current."""


def check_backend_timeouts(conf):
    """Refuse a backend whose calls may outlast ``[worker] lease_duration``.

    A call that outlasts the lease could create a backup after another
    worker has taken the execution over.  Raises ``InvalidConfiguration``
    with one line that says what to change.
    """
    lease = conf.worker.lease_duration
    for name, timeout in sorted(loader.call_timeouts(conf).items()):
        if timeout is not None and timeout >= lease:
            raise exception.InvalidConfiguration(reason=(
                '[worker] lease_duration (%g s) must be longer than one '
                'request of the %s backend may take (%g s, [service_'
                'credentials] timeout): raise lease_duration or lower the '
                'timeout' % (lease, name, timeout)))


# Seconds after a claim was written during which a create of its first
# attempt goes without a renewal of its own (a tenth of the lease at most).
FRESH_CLAIM = 2.0


class ExecutionRunner:
    """Claims executions and starts their backups (worker steps 1-3)."""

    STARTED = STARTED

    def __init__(self, conf, owner, keeper=None, compensator=None,
                 ready=None):
        self.conf = conf
        self.owner = owner
        # Set once the owner's service row exists; claims wait for it.
        self.ready = ready
        if ready is None:
            self.ready = threading.Event()
            self.ready.set()
        self.keeper = keeper or leases.LeaseKeeper(conf)
        # How long a just-written claim needs no renewal before a create.
        self.fresh_claim = min(FRESH_CLAIM,
                               conf.worker.lease_duration / 10.0)
        self.compensator = compensator or strays.Compensator(conf)
        self.recorder = recorder.BackupIdRecorder(owner)
        self.overlap = overlap.OverlapJudge(conf, self)
        # Called with the backup id of a resumed execution: the poller
        # looks at it now rather than at its next pass.
        self.check_soon = None

    def run(self, context, execution_ids):
        """Claim and start what this worker can get of ``execution_ids``."""
        if not self.ready.wait(self.conf.worker.lease_duration):
            LOG.warning('Executions %s dropped: this worker is not '
                        'registered yet; they are cast again later',
                        ', '.join(execution_ids))
            return []
        # Taken before the claim, so that it never makes the claim look
        # younger than it is.
        claiming = time.monotonic()
        now = timeutils.utcnow(True)
        claim_id = uuidutils.generate_uuid()
        claimed = db_worker.claim_executions(
            context, list(execution_ids), self.owner, claim_id, now,
            self.conf.worker.lease_duration)
        for execution_id in set(execution_ids) - set(claimed):
            LOG.debug('Execution %s is not claimable (taken by another '
                      'worker, finished, or not due yet): dropped',
                      execution_id)
        if not claimed:
            return claimed
        self.start_claimed(context, claimed, claim_id,
                           claimed_at=claiming)
        return claimed

    def start_claimed(self, context, claimed, claim_id, claimed_at=None):
        """Hold and start executions this worker claimed with ``claim_id``.

        A claim made by :meth:`run`, or a take-over of the executions of a
        worker found gone (``worker/orphans.py``).  ``claimed_at`` is the
        ``time.monotonic()`` taken before the claim was written: for
        :data:`FRESH_CLAIM` seconds from it, a create needs no renewal of
        its own (see :meth:`_find_or_create`).
        """
        fresh_until = (None if claimed_at is None
                       else claimed_at + self.fresh_claim)
        claims = {execution_id: claim_id for execution_id in claimed}
        self.keeper.hold(claims)
        try:
            # One query each for the whole message, not per execution.
            rows = db_worker.get_executions_and_policies(context, claimed)
            overlaps = db_worker.find_overlaps(
                context, [execution for execution, _ in rows])
        except Exception:
            # Not renewed: the sweep hands them over once the leases expire.
            for execution_id in claimed:
                self.keeper.drop(execution_id, claim_id)
            raise
        for execution, policy in rows:
            if execution.claim_id != claim_id:
                self._lost(execution, claim_id, 'before it started')
                continue
            try:
                self.start(context, execution, policy,
                           overlaps.get(execution.id, ()),
                           fresh_until=fresh_until)
            except Exception as exc:
                LOG.exception('Execution %s: unexpected error while starting '
                              'its backup', execution.id)
                self._fail_unexpectedly(context, execution, exc)

    def _lost(self, execution, claim_id, when):
        self.keeper.drop(execution.id, claim_id)
        LOG.warning('Execution %s: its claim was superseded %s (its lease '
                    'had expired and another claim took it); left to that '
                    'claim', execution.id, when)
        return LOST

    def _fail_unexpectedly(self, context, execution, error):
        if isinstance(error, (db_exc.DBConnectionError, db_exc.DBDeadlock)):
            # The database went away (restarted, the writer address
            # moved): nothing is wrong with the run.
            return self._hand_back(context, execution, error)
        try:
            current = db_api.get_execution(context, execution.id)
            if (current.backup_id is None
                    and current.claim_id == execution.claim_id):
                self.finish(context, execution, Status.FAILED,
                            fault='internal error in the worker: %s: %s' % (
                                type(error).__name__, error))
        except Exception:
            # Not renewed any more: once the lease expires, another
            # worker resumes it (and finds its backup by its tag).
            self.keeper.drop(execution.id, execution.claim_id)
            LOG.exception('Execution %s: could not record the failure; it '
                          'will be resumed when its lease expires',
                          execution.id)

    def _hand_back(self, context, execution, error):
        """Give back an execution the database failed while it started.

        Cast again after ``[worker] retry_initial_delay``; its next claim
        looks for a backup made under this one (by its tag) before it
        creates one.  If the database is still away, the lease runs out
        and the sweep hands it over then.
        """
        self.keeper.drop(execution.id, execution.claim_id)
        retry_at = timeutils.utcnow(True) + datetime.timedelta(
            seconds=self.conf.worker.retry_initial_delay)
        try:
            released = db_worker.release_execution(
                context, execution.id, execution.claim_id, retry_at,
                'the database was unreachable while its backup was being '
                'started')
        except Exception:
            released = None
        if released:
            LOG.warning('Execution %s: the database was unreachable while '
                        'its backup was being started (%s); it starts again '
                        'at %s', execution.id, error, retry_at.isoformat())
        elif released is None:
            LOG.warning('Execution %s: the database was unreachable while '
                        'its backup was being started (%s); it is resumed '
                        'when its lease expires', execution.id, error)
        else:
            self._lost(execution, execution.claim_id, 'while the database '
                       'was unreachable')

    def start(self, context, execution, policy, blockers=(),
              fresh_until=None):
        """Steps 2 and 3 for one claimed execution; what it did.

        ``blockers`` are the other executions of the same instance that
        go first (see ``db_worker.find_overlaps``); this one waits for the
        first of them that is really running.  Returns STARTED, FINISHED,
        RELEASED or LOST.
        """
        if execution.backup_id is not None:
            # Resumed after its worker died: the poller takes it from here.
            LOG.info('Execution %s of policy %s: resuming; backup %s was '
                     'started before', execution.id, execution.policy_id,
                     execution.backup_id)
            if self.check_soon is not None:
                self.check_soon(execution.backup_id)
            return STARTED
        # A claim beyond the first may have had backups created for it.
        tried = execution.attempts > 1
        if policy is None:
            self.finish(context, execution, Status.SKIPPED,
                        reason='the policy was deleted before the backup '
                               'started', reconcile=tried)
            return FINISHED
        other_id = self.overlap.first_running(context, execution, blockers)
        if other_id is not None:
            return self._yield_to(context, execution, policy, other_id,
                                  tried)
        try:
            policy = backup_request.chain_step(policy, functools.partial(
                db_worker.count_policy_backups, context, policy.id))
            backup = self._find_or_create(context, execution, policy,
                                          fresh_until)
        except ClaimLost:
            return self._lost(execution, execution.claim_id,
                              'before its backup was created')
        except backends.InstanceNotFound as exc:
            db_api.disable_policy(
                context, policy.id,
                'instance %s no longer exists' % policy.instance_id)
            LOG.warning('Execution %s: %s; policy %s is disabled',
                        execution.id, exc, policy.id)
            return self._failed(context, execution, exc)
        except backends.TrustBroken as exc:
            self.pause_for_trust(context, policy, exc)
            return self._failed(context, execution, exc)
        except (backends.BackendError, loader.UnknownBackend) as exc:
            return self._failed(context, execution, exc)
        try:
            recorded = self.recorder.record(execution.id, execution.claim_id,
                                            backup.id)
        except Exception:
            # The lease runs out; whoever resumes finds the backup by tag.
            self.keeper.drop(execution.id, execution.claim_id)
            LOG.exception('Execution %s: backup %s was started but its id '
                          'could not be recorded; it will be resumed when '
                          'its lease expires', execution.id, backup.id)
            return LOST
        if not recorded:
            self._lost(execution, execution.claim_id,
                       'while its backup was being created')
            self.compensator.claim_lost(context, execution, policy, backup)
            return LOST
        LOG.info('Execution %s of policy %s: backup %s started on instance '
                 '%s', execution.id, policy.id, backup.id,
                 policy.instance_id)
        return STARTED

    def _failed(self, context, execution, error):
        self.finish(context, execution, Status.FAILED, fault=str(error))
        return FINISHED

    def pause_for_trust(self, context, policy, error):
        """A broken trust fails every run: stop until someone acts."""
        db_api.disable_policy(
            context, policy.id,
            'its Keystone trust no longer works; delete the policy and '
            'create it again as a user of the project: %s' % error)
        LOG.warning('Policy %s paused: %s', policy.id, error)

    def _yield_to(self, context, execution, policy, other_id, tried):
        now = timeutils.utcnow(True)
        reason = ('execution %s of the same instance is still running'
                  % other_id)
        if policy.overlap_policy == enums.OverlapPolicy.QUEUE:
            retry_at = now + datetime.timedelta(
                seconds=self.conf.worker.queue_retry_interval)
            released = db_worker.release_execution(
                context, execution.id, execution.claim_id, retry_at,
                'queued: ' + reason)
            self.keeper.drop(execution.id, execution.claim_id)
            if not released:
                return self._lost(execution, execution.claim_id,
                                  'before it could be queued')
            LOG.info('Execution %s queued until %s: %s', execution.id,
                     retry_at.isoformat(), reason)
            return RELEASED
        self.finish(context, execution, Status.SKIPPED,
                    reason='overlap: ' + reason, reconcile=tried)
        return FINISHED

    def _find_or_create(self, context, execution, policy, fresh_until=None):
        backend = loader.get_backend(self.conf, policy.backend)
        # Retried as one unit: a create whose answer was lost (timeout,
        # reset) may have been accepted, so every attempt after the first
        # looks for the tagged backup before it creates one.  The very
        # first attempt of a first claim need not: nothing can have been
        # created for this execution yet, and a listing per backup is what
        # makes a burst of backups exceed Trove's rate limits.
        tries = []

        def find_or_create():
            if tries or execution.attempts > 1:
                found = backend.find_backup(
                    policy, backends.execution_tag(execution.id))
                if found is not None:
                    LOG.info('Execution %s: found backup %s it had started '
                             'before', execution.id, found.id)
                    return found
            first = not tries
            tries.append(True)
            # The last moment to find out that the claim is gone, and a
            # fresh lease for the create, which ends (or is given up) well
            # within it -- unless the claim was written a moment ago: its
            # lease is then nearly whole, and nobody can have taken it
            # over (that needs the lease expired, or this process's
            # heartbeat stale), so a renewal would learn nothing.  A pause
            # after either point is the same risk, which the fenced record
            # and the compensation cover.
            fresh = (first and fresh_until is not None
                     and time.monotonic() < fresh_until)
            if not fresh and not db_leases.renew_leases(
                    context, {execution.id: execution.claim_id},
                    timeutils.utcnow(True), self.conf.worker.lease_duration):
                raise ClaimLost()
            return backend.create_backup(
                policy, backup_request.backup_name(policy, execution),
                backup_request.backup_description(policy, execution))

        return self.call_backend(execution, find_or_create)

    def call_backend(self, execution, function, *args):
        """Call the backend, retrying transient errors with backoff."""
        return backend_calls.call(self.conf, 'Execution %s' % execution.id,
                                  function, *args)

    def reconcile_schedule(self, execution, now):
        """When to look for extra backups of ``execution``'s instance."""
        worker = self.conf.worker
        return db_reconciliation.Schedule(
            execution.instance_id, execution.policy_id,
            now + datetime.timedelta(seconds=worker.reconcile_interval),
            now + datetime.timedelta(seconds=worker.reconcile_window))

    def finish(self, context, execution, status, reason=None, fault=None,
               reconcile=True):
        """Record the final state (if the claim holds) and notify.

        ``reconcile``: queue the instance for reconciliation -- always,
        unless no backup can have been created for this execution (this
        was its first claim and it did not get as far as the backend).
        """
        now = timeutils.utcnow(True)
        finished = db_worker.finish_execution(
            context, execution.id, execution.claim_id, status, now,
            reason=reason, fault=fault,
            reconcile=(self.reconcile_schedule(execution, now)
                       if reconcile else None))
        self.keeper.drop(execution.id, execution.claim_id)
        if not finished:
            LOG.warning('Execution %s: its claim was superseded; its %s '
                        'state was not recorded', execution.id, status)
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
