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

1. renews the lease of every execution this worker owns (one UPDATE);
2. loads its RUNNING executions whose backup was started (one SELECT);
3. asks the backend for each backup's status, on a small pool of
   ``[worker] poll_concurrency`` threads;
4. finishes those that are done -- SUCCEEDED (then retention), FAILED with
   the backend's reason, or FAILED after ``[worker] backup_timeout``.

The database is the only record of what this worker watches, so a worker
that restarts, or resumes another's executions, just finds them here.
"""

import datetime

import futurist
from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import enums
from dbaas_scheduler import schedule
from dbaas_scheduler.worker import retention

LOG = logging.getLogger(__name__)

Status = enums.ExecutionStatus


class BackupPoller:
    """Step 4 of DESIGN section 5 (and 5, retention) for one worker."""

    def __init__(self, conf, runner):
        self.conf = conf
        self.runner = runner
        self.owner = runner.owner
        self._pool = futurist.ThreadPoolExecutor(
            max_workers=conf.worker.poll_concurrency)

    def close(self):
        self._pool.shutdown(wait=True)

    def run_pass(self, context):
        """One pass; returns how many backups it checked."""
        now = timeutils.utcnow(True)
        db_worker.renew_leases(context, self.owner, now,
                               self.conf.worker.lease_duration)
        in_flight = db_worker.list_backups_in_flight(context, self.owner)
        futures = [self._pool.submit(self.check, context, execution, policy)
                   for execution, policy in in_flight]
        for future in futures:
            future.result()
        return len(in_flight)

    def check(self, context, execution, policy):
        """Look at one backup and finish its execution if it is done.

        Whatever happens -- the backend keeps failing, a bug -- an execution
        does not outlive ``[worker] backup_timeout``.
        """
        try:
            if policy is None:
                self.runner.finish(
                    context, execution, Status.FAILED,
                    fault='the policy was deleted while backup %s was '
                          'running; the backup is left as it is'
                          % execution.backup_id)
                return
            backend = loader.get_backend(self.conf, policy.backend)
            backup = backend.get_backup(policy, execution.backup_id)
        except backends.BackupNotFound:
            self.runner.finish(
                context, execution, Status.FAILED,
                fault='backup %s disappeared from the %s backend before it '
                      'completed' % (execution.backup_id, policy.backend))
            return
        except (backends.PermanentBackendError, loader.UnknownBackend) as exc:
            if isinstance(exc, backends.TrustBroken):
                self.runner.pause_for_trust(context, policy, exc)
            self.runner.finish(
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
        except Exception:
            LOG.exception('Execution %s: recording the state of backup %s '
                          'failed', execution.id, execution.backup_id)

    def _fail_if_too_long(self, context, execution, state, detail=None):
        elapsed = timeutils.utcnow(True) - execution.started_at
        if elapsed <= datetime.timedelta(
                seconds=self.conf.worker.backup_timeout):
            return False
        self.runner.finish(
            context, execution, Status.FAILED,
            fault='timed out: backup %s is %s after %d seconds ([worker] '
                  'backup_timeout)%s' % (
                      execution.backup_id, state, elapsed.total_seconds(),
                      '; %s' % detail if detail else ''))
        return True

    def _update(self, context, execution, policy, backend, backup):
        if backup.status == backends.BackupStatus.COMPLETED:
            if self.runner.finish(context, execution, Status.SUCCEEDED):
                self.apply_retention(context, execution, policy, backend)
        elif backup.finished:
            self.runner.finish(
                context, execution, Status.FAILED,
                fault='the %s backend reports backup %s %s%s' % (
                    policy.backend, backup.id, backup.status,
                    ': %s' % backup.fault if backup.fault else ''))
        else:
            self._fail_if_too_long(
                context, execution, 'still %s at the %s backend' % (
                    backup.status, policy.backend))

    def apply_retention(self, context, execution, policy, backend):
        """Delete what the policy's retention rules no longer keep."""
        rules = retention.RetentionRules.from_policy(policy)
        if not rules.any:
            return []
        try:
            ours = db_worker.list_policy_backup_ids(context, policy.id)
            backups = [b for b in self.runner.call_backend(
                execution, backend.list_backups, policy) if b.id in ours]
            decision = retention.plan_retention(
                backups, rules, schedule.get_timezone(policy.timezone),
                timeutils.utcnow(True))
        except Exception as exc:
            LOG.warning('Execution %s: retention of policy %s skipped this '
                        'time: %s', execution.id, policy.id, exc)
            return []
        deleted = []
        for backup in decision.delete:
            try:
                self.runner.call_backend(execution, backend.delete_backup,
                                         policy, backup.id)
            except backends.BackendError as exc:
                LOG.warning('Execution %s: retention could not delete '
                            'backup %s: %s', execution.id, backup.id, exc)
                continue
            deleted.append({'id': backup.id,
                            'created_at': backup.created_at.isoformat()})
        if deleted:
            db_worker.record_deleted_backups(context, execution.id, deleted)
            LOG.info('Execution %s: retention of policy %s deleted %d '
                     'backups and keeps %d', execution.id, policy.id,
                     len(deleted), len(decision.keep))
        return deleted
