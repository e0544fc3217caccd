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
3. **Create, idempotently** (``backend_calls.find_or_create_backup``): if
   no backup id is recorded, look for a backup tagged with the execution
   id first (a worker may have died between the backend's create and the
   recording of its id); renew the lease, which also checks that the claim
   still holds, right before creating one; and record its id at once
   (``recorder.py``).  If the claim was lost meanwhile, the backup is one
   too many and the worker deletes it (``strays.Compensator``).

Watching the backup until it finishes (step 4) is the poller's job, so no
thread waits for hours.  Backend calls that fail with a transient error are
retried with exponential backoff and jitter up to ``[worker] max_attempts``
(``backend_calls.py``); then an execution with a start window is given
back and tried again later within it, and one whose window has ended is
EXPIRED (never once its backup id is recorded); a permanent error fails
the execution with a fault a person can read (``outcome.py``), and an
instance that no longer exists also disables its policy.

The runner is given its parts (``worker/service.py: build_parts`` makes
them): it calls them, none of them calls back into it, except the overlap
judge, which is handed :meth:`ExecutionRunner.start_taken_over` to start an
execution it took over.
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
from dbaas_scheduler.db import capacity as db_capacity
from dbaas_scheduler.db import leases as db_leases
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import enums
from dbaas_scheduler import exception
from dbaas_scheduler.worker import backend_calls
from dbaas_scheduler.worker import backup_request

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


# Seconds at most between two tries of an execution whose backup could not
# start for a transient reason, within its start window.
MAX_RETRY_GAP = 600

# Seconds after a claim was written during which a create of its first
# attempt goes without a renewal of its own (a tenth of the lease at most).
FRESH_CLAIM = 2.0


def log_started(started):
    """One INFO line for ``[(execution, policy, backup, instance id)]``.

    ``Execution <id> of policy <id>: backup <id> started on instance
    <id>`` for one; for several, ``<N> backups started: execution <id> of
    policy <id>: backup <id> on instance <id>; ...``.
    """
    if len(started) == 1:
        LOG.info('Execution %s of policy %s: backup %s started on instance '
                 '%s', *started[0])
        return
    LOG.info('%d backups started: %s', len(started), '; '.join(
        'execution %s of policy %s: backup %s on instance %s' % entry
        for entry in started))


class ExecutionRunner:
    """Claims executions and starts their backups (worker steps 1-3)."""

    def __init__(self, conf, owner, keeper, recorder, compensator, outcome,
                 overlap, check_soon=None, ready=None,
                 database_unreachable=None):
        """The parts are the worker's own (``service.build_parts``).

        ``keeper`` a ``leases.LeaseKeeper``, ``recorder`` a
        ``recorder.BackupIdRecorder``, ``compensator`` a
        ``strays.Compensator``, ``outcome`` an ``outcome.Outcomes``,
        ``overlap`` an ``overlap.OverlapJudge``.  ``check_soon`` is called
        with the backup id of a resumed execution: the poller looks at it
        now rather than at its next pass.  ``ready`` (a
        ``threading.Event``) is set once the owner's service row exists;
        claims wait for it.  ``database_unreachable(error, execution_ids)``
        is told of a claim that failed because the database did not answer
        (``worker/intake.py`` pauses the worker's intake and casts the
        executions again); without it, the error is raised.
        """
        self.conf = conf
        self.owner = owner
        self.keeper = keeper
        self.recorder = recorder
        self.compensator = compensator
        self.outcome = outcome
        self.overlap = overlap
        self.check_soon = check_soon
        self.database_unreachable = database_unreachable
        self.ready = ready
        if ready is None:
            self.ready = threading.Event()
            self.ready.set()
        # How long a just-written claim needs no renewal before a create.
        self.fresh_claim = min(FRESH_CLAIM,
                               conf.worker.lease_duration / 10.0)

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
        try:
            # The claim, its executions with their policies, and their
            # overlaps: one transaction for the whole message.
            claimed = db_worker.claim_and_load(
                context, list(execution_ids), self.owner, claim_id, now,
                self.conf.worker.lease_duration,
                limits=db_capacity.limits_from_conf(self.conf))
        except db_api.UNREACHABLE as exc:
            if self.database_unreachable is None:
                raise
            # Nothing was claimed: the executions are cast again.
            self.database_unreachable(exc, execution_ids)
            return []
        if len(claimed.ids) < len(execution_ids):
            for execution_id in set(execution_ids) - set(claimed.ids):
                LOG.debug('Execution %s is not claimable (taken by another '
                          'worker, finished, or not due yet): dropped',
                          execution_id)
        if not claimed.ids:
            return claimed.ids
        self.keeper.hold({execution_id: claim_id
                          for execution_id in claimed.ids})
        self._start_loaded(context, claimed.rows, claimed.overlaps,
                           claim_id, claiming + self.fresh_claim)
        return claimed.ids

    def start_claimed(self, context, claimed, claim_id, claimed_at=None):
        """Hold and start executions this worker claimed with ``claim_id``.

        A take-over of the executions of a worker found gone
        (``worker/orphans.py``); :meth:`run` claims and loads in one
        transaction instead.  ``claimed_at`` is the ``time.monotonic()``
        taken before the claim was written: for :data:`FRESH_CLAIM`
        seconds from it, a create needs no renewal of its own (see
        :meth:`_renew_before_create`).
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
        except Exception as exc:
            # Not renewed: the sweep hands them over once the leases expire.
            for execution_id in claimed:
                self.keeper.drop(execution_id, claim_id)
            if (isinstance(exc, db_api.UNREACHABLE)
                    and self.database_unreachable is not None):
                self.database_unreachable(exc)
                return
            raise
        self._start_loaded(context, rows, overlaps, claim_id, fresh_until)

    def _start_loaded(self, context, rows, overlaps, claim_id, fresh_until):
        """Start the executions of ``rows``, held under ``claim_id``.

        The backups started are logged in one line at the end (or when an
        error ends the loop): a line per backup was a tenth of the
        worker's CPU time at a thousand backups a second.
        """
        started = []
        try:
            for execution, policy in rows:
                if execution.claim_id != claim_id:
                    self._lost(execution, claim_id, 'before it started')
                    continue
                try:
                    self.start(context, execution, policy,
                               overlaps.get(execution.id, ()),
                               fresh_until=fresh_until, started=started)
                except Exception as exc:
                    LOG.exception('Execution %s: unexpected error while '
                                  'starting its backup', execution.id)
                    self._fail_unexpectedly(context, execution, exc)
        finally:
            if started:
                log_started(started)

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
                self.outcome.finish(
                    context, execution, Status.FAILED,
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
        if (isinstance(error, db_api.UNREACHABLE)
                and self.database_unreachable is not None):
            self.database_unreachable(error)
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
              fresh_until=None, started=None):
        """Steps 2 and 3 for one claimed execution; what it did.

        ``blockers`` are the other executions of the same instance that
        go first (see ``db_worker.find_overlaps``); this one waits for the
        first of them that is really running.  Returns STARTED, FINISHED,
        RELEASED or LOST.  A backup started is logged at once, or, given
        a list ``started``, added to it for :func:`log_started`.
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
            self.outcome.finish(context, execution, Status.SKIPPED,
                                reason='the policy was deleted before the '
                                       'backup started', reconcile=tried)
            return FINISHED
        deadline = getattr(execution, 'start_deadline', None)
        if (deadline is not None and not tried
                and timeutils.utcnow(True) > deadline):
            # Never claimed before: nothing can have been created for it.
            return self._expire(context, execution, deadline, None, tried)
        other_id = self.overlap.first_running(context, execution, blockers,
                                              self.start_taken_over)
        if other_id is not None:
            return self._yield_to(context, execution, policy, other_id,
                                  tried)
        try:
            policy = backup_request.chain_step(policy, functools.partial(
                db_worker.count_policy_backups, context, policy.id))
            backup = backend_calls.find_or_create_backup(
                self.conf, loader.get_backend(self.conf, policy.backend),
                policy, execution,
                backup_request.backup_name(policy, execution),
                backup_request.backup_description(policy, execution),
                functools.partial(self._renew_before_create, context,
                                  execution, fresh_until))
        except ClaimLost:
            return self._lost(execution, execution.claim_id,
                              'before its backup was created')
        except backend_calls.StartWindowClosed as closed:
            return self._expire(context, execution, closed.deadline, None,
                                tried)
        except backends.PROJECT_OVER_LIMIT as exc:
            if self.conf.worker.project_backoff and deadline is not None:
                return self._back_off(context, execution, deadline, exc)
            return self._backend_failed(context, execution, policy, exc)
        except backend_calls.RetriesExhausted as exc:
            if deadline is None:
                # No window (recorded before windows existed): it fails.
                self.outcome.finish(context, execution, Status.FAILED,
                                    fault=str(exc))
                return FINISHED
            return self._retry_later(context, execution, deadline, exc)
        except (backends.BackendError, loader.UnknownBackend) as exc:
            return self._backend_failed(context, execution, policy, exc)
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
        entry = (execution.id, policy.id, backup.id, policy.instance_id)
        if started is None:
            log_started([entry])
        else:
            started.append(entry)
        return STARTED

    def _backend_failed(self, context, execution, policy, error):
        """FAILED for a backend error that another try would not mend."""
        if isinstance(error, backends.InstanceNotFound):
            db_api.disable_policy(
                context, policy.id,
                'instance %s no longer exists' % policy.instance_id)
            LOG.warning('Execution %s: %s; policy %s is disabled',
                        execution.id, error, policy.id)
        elif isinstance(error, backends.TrustBroken):
            self.outcome.pause_for_trust(context, policy, error)
        self.outcome.finish(context, execution, Status.FAILED,
                            fault=str(error))
        return FINISHED

    def _back_off(self, context, execution, deadline, error):
        """The backend says the project is over a limit: slow it down.

        ``[worker] project_backoff``: the project's backoff is recorded in
        the database (``db_capacity.record_backoff``), so that no worker
        starts a new backup of the project before it ends, and this
        execution is queued until then -- EXPIRED if that is after its
        start window.  Other projects are not touched.
        """
        now = timeutils.utcnow(True)
        until = now + datetime.timedelta(
            seconds=self.conf.worker.project_backoff)
        db_capacity.record_backoff(context, execution.project_id, until,
                                   str(error))
        LOG.warning('Execution %s: the backend says project %s is over one '
                    'of its limits (%s); no new backup of the project '
                    'starts before %s', execution.id, execution.project_id,
                    error, until.isoformat())
        if until >= deadline:
            return self._expire(context, execution, deadline, error, True)
        released = db_worker.release_execution(
            context, execution.id, execution.claim_id, until,
            db_capacity.BACKED_OFF % (execution.project_id, until.isoformat(),
                                      error))
        self.keeper.drop(execution.id, execution.claim_id)
        if not released:
            return self._lost(execution, execution.claim_id,
                              'before it could be queued')
        return RELEASED

    def _expire(self, context, execution, deadline, last_error, tried):
        """EXPIRED: the start window ended before the backup started.

        Fenced like every final state, and only while no backup id is
        recorded (``db_worker.finish_execution``): an execution whose
        backup was taken is never EXPIRED.
        """
        reason = ('start window ended at %s before its backup could start'
                  % deadline.isoformat())
        if last_error is not None:
            reason += '; the last attempt failed: %s' % last_error
        if not self.outcome.finish(context, execution, Status.EXPIRED,
                                   reason=reason, reconcile=tried):
            return LOST
        return FINISHED

    def _retry_later(self, context, execution, deadline, error):
        """Give the execution back, to be tried again within its window.

        A transient failure that outlasted ``[worker] max_attempts``
        retries in this thread (the instance busy, the backend rate
        limiting or unreachable): released like a queued execution, cast
        again by the sweep at ``next_attempt_at`` -- ``[worker]
        retry_max_delay`` times the claims so far, at most
        :data:`MAX_RETRY_GAP` -- and EXPIRED if that falls after the start
        window.  Its next claim looks for a backup made under this one
        (the create may have landed) before it creates one.
        """
        now = timeutils.utcnow(True)
        delay = min(self.conf.worker.retry_max_delay
                    * max(execution.attempts, 1), MAX_RETRY_GAP)
        retry_at = min(now + datetime.timedelta(seconds=delay),
                       deadline - datetime.timedelta(seconds=1))
        if retry_at <= now:
            return self._expire(context, execution, deadline, error.last,
                                True)
        released = db_worker.release_execution(
            context, execution.id, execution.claim_id, retry_at,
            'retrying within its start window (until %s): %s'
            % (deadline.isoformat(), error.last))
        self.keeper.drop(execution.id, execution.claim_id)
        if not released:
            return self._lost(execution, execution.claim_id,
                              'before it could be retried')
        LOG.warning('Execution %s: %s; tried again at %s, within its start '
                    'window (until %s)', execution.id, error,
                    retry_at.isoformat(), deadline.isoformat())
        return RELEASED

    def start_taken_over(self, context, execution, policy):
        """Start an execution the overlap judge took over; if it runs."""
        return self.start(context, execution, policy) == STARTED

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
        self.outcome.finish(context, execution, Status.SKIPPED,
                            reason='overlap: ' + reason, reconcile=tried)
        return FINISHED

    def _renew_before_create(self, context, execution, fresh_until, first):
        """The checks right before a create: the start window, the claim.

        Past the start window nothing is created (StartWindowClosed).
        Then the claim (ClaimLost): the last moment to find out that the
        claim is gone, and a fresh lease for the create, which ends (or
        is given up) well within it -- unless the claim was written a
        moment ago (``fresh_until``) and this is the first create: its
        lease is then nearly whole, and nobody can have taken it over
        (that needs the lease expired, or this process's heartbeat
        stale), so a renewal would learn nothing.
        A pause after either point is the same risk, which the fenced
        record and the compensation cover.
        """
        deadline = getattr(execution, 'start_deadline', None)
        if deadline is not None and timeutils.utcnow(True) > deadline:
            # After the look for a backup made under an earlier claim: one
            # found is recorded, whenever it was made.
            raise backend_calls.StartWindowClosed(deadline)
        fresh = (first and fresh_until is not None
                 and time.monotonic() < fresh_until)
        if not fresh and not db_leases.renew_leases(
                context, {execution.id: execution.claim_id},
                timeutils.utcnow(True), self.conf.worker.lease_duration):
            raise ClaimLost()
