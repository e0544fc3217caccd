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
"""Running a restore in a worker: claim, restore, wait, record, fenced.

A restore is claimed like an execution (a conditional UPDATE writing a
new ``claim_id``); while it runs, a small thread renews its lease every
``[worker] lease_duration`` / 5 seconds, by id and token.  The target the
backend made is recorded at once, conditional on the claim and on no
other target being recorded; a worker that resumes a restore (its owner
died: the lease expired and the engine's sweep cast it again) asks the
backend for the target by the restore's tag before making another.  The
outcome and the duration are written conditional on the claim, so a
superseded worker records nothing.
"""

import threading
import time

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler import enums
from dbaas_scheduler import exception
from dbaas_scheduler.worker import backend_calls

LOG = logging.getLogger(__name__)

# Seconds between two looks at a target the backend is still making.
RESTORE_POLL = 5.0


class _LeaseRenewer:
    """Renews one restore's lease until stopped; notes a lost claim."""

    def __init__(self, conf, context, restore_id, claim_id):
        self.conf = conf
        self.context = context
        self.restore_id = restore_id
        self.claim_id = claim_id
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True,
                                        name='restore-lease-%s' % restore_id)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc_info):
        self._stop.set()
        self._thread.join()

    def _run(self):
        lease = self.conf.worker.lease_duration
        while not self._stop.wait(lease / 5.0):
            try:
                held = db_restores.renew_restore_lease(
                    self.context, self.restore_id, self.claim_id,
                    timeutils.utcnow(True), lease)
            except Exception as e:
                LOG.warning('Restore %s: cannot renew its lease (%s); trying '
                            'again.', self.restore_id, e)
                continue
            if not held:
                LOG.warning('Restore %s: the claim was superseded; this '
                            'worker stops.', self.restore_id)
                self.lost.set()
                return


class ClaimLost(Exception):
    """Another worker holds the restore now."""


class RestoreRunner:
    """Claims restores and runs them to their end."""

    def __init__(self, conf, owner, sleep=time.sleep, poll=RESTORE_POLL):
        self.conf = conf
        self.owner = owner
        self.sleep = sleep
        self.poll = poll

    def run(self, context, restore_id):
        """Claim ``restore_id`` and run it; a duplicate message does nothing.

        Returns the final status written, or None when nothing was claimed
        or the claim was lost.
        """
        claim_id = uuidutils.generate_uuid()
        if not db_restores.claim_restore(
                context, restore_id, self.owner, claim_id,
                timeutils.utcnow(True), self.conf.worker.lease_duration):
            LOG.debug('Restore %s was not claimable; dropped.', restore_id)
            return None
        restore = db_restores.get_restore(context, restore_id)
        with _LeaseRenewer(self.conf, context, restore_id,
                           claim_id) as renewer:
            try:
                status, reason, fault = self._restore(
                    context, restore, claim_id, renewer)
            except ClaimLost:
                return None
            except Exception as e:
                LOG.exception('Restore %s: unexpected error.', restore_id)
                status, reason, fault = (
                    enums.RestoreStatus.FAILED,
                    'internal error in the worker: %s' % e, str(e))
            if renewer.lost.is_set():
                return None
            if not db_restores.finish_restore(
                    context, restore_id, claim_id, status,
                    timeutils.utcnow(True), reason=reason, fault=fault):
                LOG.warning('Restore %s: the claim was superseded; its '
                            'outcome (%s) is not recorded by this worker.',
                            restore_id, status)
                return None
        LOG.info('Restore %(restore)s of backup %(backup)s (execution '
                 '%(execution)s, policy %(policy)s): %(status)s%(reason)s',
                 {'restore': restore_id, 'backup': restore.backup_id,
                  'execution': restore.execution_id,
                  'policy': restore.policy_id, 'status': status,
                  'reason': ' (%s)' % reason if reason else ''})
        return status

    def _restore(self, context, restore, claim_id, renewer):
        """Do it; return ``(status, reason, fault)``."""
        try:
            policy = db_api.get_policy(context, restore.policy_id)
        except exception.PolicyNotFound:
            return (enums.RestoreStatus.FAILED,
                    'policy %s was deleted; its backend credentials are '
                    'gone' % restore.policy_id, None)
        subject = 'Restore %s' % restore.id
        try:
            backend = loader.get_backend(self.conf, restore.backend)
            progress = None
            if restore.target_id is not None:
                progress = backend_calls.call(
                    self.conf, subject, backend.get_restore, policy,
                    restore.target_id)
            elif restore.attempts > 1:
                progress = backend_calls.call(
                    self.conf, subject, backend.find_restore, policy,
                    restore.id, restore.params or {})
            if progress is None:
                progress = backend_calls.call(
                    self.conf, subject, backend.restore_backup, policy,
                    restore.backup_id, restore.params or {}, restore.id)
            self._record_target(context, restore, claim_id, renewer,
                                progress)
            deadline = (restore.started_at or timeutils.utcnow(True))
            while not progress.done and not progress.failed:
                waited = (timeutils.utcnow(True) - deadline).total_seconds()
                if waited > self.conf.worker.restore_timeout:
                    return (enums.RestoreStatus.FAILED,
                            'timed out: %s not ready after %d seconds%s' % (
                                progress.target_id, waited,
                                ' (%s)' % progress.reason
                                if progress.reason else ''), None)
                self.sleep(self.poll)
                if renewer.lost.is_set():
                    raise ClaimLost()
                progress = backend_calls.call(
                    self.conf, subject, backend.get_restore, policy,
                    progress.target_id)
        except backends.BackendError as e:
            return enums.RestoreStatus.FAILED, str(e), str(e)
        if progress.failed:
            return (enums.RestoreStatus.FAILED,
                    progress.reason or 'the backend failed the restore',
                    progress.reason)
        return enums.RestoreStatus.SUCCEEDED, None, None

    def _record_target(self, context, restore, claim_id, renewer, progress):
        if renewer.lost.is_set():
            raise ClaimLost()
        if progress.target_id == restore.target_id:
            return
        if not db_restores.record_restore_target(
                context, restore.id, claim_id, progress.target_id):
            LOG.warning('Restore %s: could not record target %s: the claim '
                        'was superseded.', restore.id, progress.target_id)
            raise ClaimLost()
