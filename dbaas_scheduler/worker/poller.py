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
"""Watching started backups until they finish, for all of them at once.

A worker may have thousands of backups running for hours.  Instead of a
thread per backup, one pass every ``[worker] poll_interval`` seconds:

1. loads its RUNNING executions whose backup was started (one SELECT);
   their claims are held by the worker's lease keeper, which renews their
   leases on its own schedule, however long a pass takes;
2. asks the backend for the status of their backups, once per project
   (the trove backend lists the project's backups: a few requests however
   many backups run), on a small pool of ``[worker] poll_concurrency``
   threads;
3. finishes those that are done (``outcome.Outcomes.finish``) --
   SUCCEEDED (then retention, ``retention.apply_retention``), FAILED with
   the backend's reason, or FAILED after ``[worker] backup_timeout`` --
   each write conditional on the execution's claim.

The database is the only record of what this worker watches, so a worker
that restarts, or resumes another's executions, just finds them here.

A backend that knows when a backup ended reports it
(``BackupBackend.report_finished``): the poller notes the backup id
(:meth:`BackupPoller.backup_may_be_finished`) and wakes its loop, which
at once runs a pass limited to those backups -- the same query, claims
and checks as a full pass, so the fencing is the same.  A backup id not
recorded yet (the job ended before the worker recorded it) is looked for
again a little later.
"""

import collections
import datetime
import threading
import time

import futurist
from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
import sqlalchemy as sa

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import enums
from dbaas_scheduler.worker import retention

LOG = logging.getLogger(__name__)

# The database gone (restarted, failing over): every execution of a pass
# fails alike until it is back.  One line each, not a traceback each.
_DATABASE_UNAVAILABLE = (db_exc.DBConnectionError, sa.exc.OperationalError,
                         sa.exc.InterfaceError, sa.exc.DisconnectionError)


def _recording_failed(execution, exc):
    if isinstance(exc, _DATABASE_UNAVAILABLE):
        # oslo.db's error wraps SQLAlchemy's, which wraps the driver's.
        reason = getattr(exc, 'inner_exception', None) or exc
        reason = getattr(reason, 'orig', None) or reason
        LOG.warning('Execution %s: could not record the state of backup %s: '
                    'the database is unavailable (%s: %s); next pass',
                    execution.id, execution.backup_id,
                    type(reason).__name__,
                    ' '.join(str(reason).split())[:200])
    else:
        LOG.exception('Execution %s: recording the state of backup %s '
                      'failed', execution.id, execution.backup_id)


Status = enums.ExecutionStatus

# How long a reported backup id is looked for while it is not recorded
# yet, and how often, in seconds.
DUE_PATIENCE = 30
DUE_RETRY = 0.5


class BackupPoller:
    """Watching and retention (worker.rst, "The poller") for a worker."""

    def __init__(self, conf, owner, keeper, outcome):
        self.conf = conf
        # The worker's service id, its LeaseKeeper (which renews the
        # leases of the backups watched) and its outcome.Outcomes.
        self.owner = owner
        self.keeper = keeper
        self.outcome = outcome
        self._pool = futurist.ThreadPoolExecutor(
            max_workers=conf.worker.poll_concurrency)
        # {backup id: monotonic time it was reported} to check early.
        self._due = {}
        self._due_lock = threading.Lock()
        # Set by the service: wakes the poller loop.
        self.wake = None
        # Set by the service: true once it is stopping.  A pass then ends
        # before its next backup: a burst of outcomes takes minutes, and
        # what is not checked is given back with the leases (the stop's
        # release_all) and resumed by another worker.
        self.stopping = lambda: False

    def close(self):
        self._pool.shutdown(wait=True)

    def backup_may_be_finished(self, backup_id):
        """The backend's report: check ``backup_id`` now, not next pass."""
        with self._due_lock:
            self._due.setdefault(backup_id, time.monotonic())
        if self.wake is not None:
            self.wake()

    def take_due(self):
        """The backup ids reported since the last look (and forgets them)."""
        with self._due_lock:
            due, self._due = self._due, {}
        return due

    def has_due(self):
        with self._due_lock:
            return bool(self._due)

    def run_due(self, context, due):
        """A pass over the backups of ``due`` (see :meth:`take_due`).

        Those not found among this worker's started backups are kept for
        another look (until ``DUE_PATIENCE``): their id may not be
        recorded yet.  Returns how many backups it checked.
        """
        checked = self._pass(context, set(due))
        now = time.monotonic()
        with self._due_lock:
            for backup_id, reported in due.items():
                if backup_id not in checked and (
                        now - reported < DUE_PATIENCE):
                    self._due.setdefault(backup_id, reported)
        return len(checked)

    def run_pass(self, context):
        """One pass; returns how many backups it checked."""
        return len(self._pass(context))

    def _pass(self, context, backup_ids=None):
        """A pass (over ``backup_ids`` only, if given); the ids checked."""
        in_flight = db_worker.list_backups_in_flight(context, self.owner)
        self.keeper.adopt({execution.id: execution.claim_id
                           for execution, _ in in_flight})
        if backup_ids is not None:
            in_flight = [(execution, policy)
                         for execution, policy in in_flight
                         if execution.backup_id in backup_ids]
        # One backend question per project, not per backup: Trove limits
        # requests per project (200 GETs a minute by default).
        groups = collections.defaultdict(list)
        for execution, policy in in_flight:
            key = (policy.backend, policy.project_id) if policy else None
            groups[key].append((execution, policy))
        futures = []
        for key, pairs in groups.items():
            if key is None or len(pairs) == 1:
                futures.extend(self._pool.submit(self.check, context, *pair)
                               for pair in pairs)
            else:
                futures.append(self._pool.submit(self.check_project,
                                                 context, pairs))
        for future in futures:
            future.result()
        return {execution.backup_id for execution, _ in in_flight}

    def check_project(self, context, pairs):
        """:meth:`check` for the executions of one project, asked at once.

        If the backend cannot answer for all of them, each is checked by
        itself (and its error handled as :meth:`check` does).
        """
        policy = pairs[0][1]
        try:
            backend = loader.get_backend(self.conf, policy.backend)
            found = backend.get_backups(
                policy, [execution.backup_id for execution, _ in pairs])
        except backends.TransientBackendError as exc:
            # One by one would only ask more of a backend in trouble.
            LOG.warning('Could not check the %d backups of project %s (%s); '
                        'next pass', len(pairs), policy.project_id, exc)
            for execution, _ in pairs:
                self._fail_if_too_long(context, execution, 'still unknown',
                                       'the last check failed: %s' % exc)
            return
        except Exception as exc:
            LOG.warning('Could not check the %d backups of project %s at '
                        'once (%s); one by one', len(pairs),
                        policy.project_id, exc)
            found = {}
        for execution, policy in pairs:
            if self.stopping():
                return
            backup = found.get(execution.backup_id)
            if backup is None:
                self.check(context, execution, policy)
                continue
            try:
                self._update(context, execution, policy, backend, backup)
            except Exception as exc:
                _recording_failed(execution, exc)

    def check(self, context, execution, policy):
        """Look at one backup and finish its execution if it is done.

        Whatever happens -- the backend keeps failing, a bug -- an execution
        does not outlive ``[worker] backup_timeout``.
        """
        if self.stopping():
            return
        try:
            if policy is None:
                self.outcome.finish(
                    context, execution, Status.FAILED,
                    fault='the policy was deleted while backup %s was '
                          'running; the backup is left as it is'
                          % execution.backup_id)
                return
            backend = loader.get_backend(self.conf, policy.backend)
            backup = backend.get_backup(policy, execution.backup_id)
        except backends.BackupNotFound:
            self.outcome.finish(
                context, execution, Status.FAILED,
                fault='backup %s disappeared from the %s backend before it '
                      'completed' % (execution.backup_id, policy.backend))
            return
        except (backends.PermanentBackendError, loader.UnknownBackend) as exc:
            if isinstance(exc, backends.TrustBroken):
                self.outcome.pause_for_trust(context, policy, exc)
            self.outcome.finish(
                context, execution, Status.FAILED,
                fault='the status of backup %s cannot be read: %s'
                      % (execution.backup_id, exc))
            return
        except Exception as exc:
            if isinstance(exc, backends.TransientBackendError):
                LOG.warning('Execution %s: could not check backup %s (%s); '
                            'next pass', execution.id, execution.backup_id,
                            exc)
            else:
                LOG.exception('Execution %s: checking backup %s failed',
                              execution.id, execution.backup_id)
            self._fail_if_too_long(context, execution, 'still unknown',
                                   'the last check failed: %s' % exc)
            return
        try:
            self._update(context, execution, policy, backend, backup)
        except Exception as exc:
            _recording_failed(execution, exc)

    def _fail_if_too_long(self, context, execution, state, detail=None):
        elapsed = timeutils.utcnow(True) - execution.started_at
        if elapsed <= datetime.timedelta(
                seconds=self.conf.worker.backup_timeout):
            return False
        self.outcome.finish(
            context, execution, Status.FAILED,
            fault='timed out: backup %s is %s after %d seconds ([worker] '
                  'backup_timeout)%s' % (
                      execution.backup_id, state, elapsed.total_seconds(),
                      '; %s' % detail if detail else ''))
        return True

    def _update(self, context, execution, policy, backend, backup):
        if backup.status == backends.BackupStatus.COMPLETED:
            if self.outcome.finish(context, execution, Status.SUCCEEDED):
                retention.apply_retention(self.conf, context, execution,
                                          policy, backend)
        elif backup.finished:
            self.outcome.finish(
                context, execution, Status.FAILED,
                fault='the %s backend reports backup %s %s%s' % (
                    policy.backend, backup.id, backup.status,
                    ': %s' % backup.fault if backup.fault else ''))
        else:
            self._fail_if_too_long(
                context, execution, 'still %s at the %s backend' % (
                    backup.status, policy.backend))
