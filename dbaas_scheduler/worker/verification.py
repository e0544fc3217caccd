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
"""Running a scheduled verification: scratch restore, checks, clean up.

A verification is a restore of kind ``verify`` (db/verifications.py),
cast and claimed like one, with a concurrency slot on top.  The scratch
target's name (:func:`~dbaas_scheduler.backends.base.scratch_name`) is
recorded under the claim *before* the backend makes it, so that whatever
happens next the service knows what to delete: the backend deletes it
after its checks; a worker that resumes a verification (its owner died)
replaces it; a scratch target a finished verification could not delete
is the scratch reconciler's (:func:`delete_leftover_scratch`).
"""

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler.db import verifications as db_verifications
from dbaas_scheduler import enums
from dbaas_scheduler import exception
from dbaas_scheduler import notifications
from dbaas_scheduler.worker import backend_calls
from dbaas_scheduler.worker import restores

LOG = logging.getLogger(__name__)

# What :meth:`VerificationRunner.run` returns for a verification whose
# backup was deleted while it ran (the restore ends CANCELLED).
CANCELLED = 'cancelled'


class RestoreDispatcher:
    """Hands a cast restore to the restore or the verification runner."""

    def __init__(self, conf, owner):
        self.restorer = restores.RestoreRunner(conf, owner)
        self.verifier = VerificationRunner(conf, owner)

    def run(self, context, restore_id):
        try:
            kind = db_restores.get_restore(context, restore_id).kind
        except exception.RestoreNotFound:
            LOG.warning('Restore %s does not exist; dropped.', restore_id)
            return None
        if kind == enums.RestoreKind.VERIFY:
            return self.verifier.run(context, restore_id)
        return self.restorer.run(context, restore_id)


class VerificationRunner:
    """Claims verifications and runs them to their end."""

    def __init__(self, conf, owner):
        self.conf = conf
        self.owner = owner

    def run(self, context, restore_id):
        """Claim and run one verification; its result, or None.

        None: nothing was claimed (a duplicate message, every
        concurrency slot taken) or the claim was lost.
        """
        claim_id = uuidutils.generate_uuid()
        if not db_verifications.claim_verification(
                context, restore_id, self.owner, claim_id,
                timeutils.utcnow(True), self.conf.worker.lease_duration,
                self.conf.verify.max_concurrent,
                self.conf.verify.max_concurrent_per_project):
            LOG.debug('Verification %s was not claimable (or every '
                      'concurrency slot is taken); dropped.', restore_id)
            return None
        restore = db_restores.get_restore(context, restore_id)
        scratch = backends.scratch_name(restore.id)
        with restores._LeaseRenewer(self.conf, context, restore_id,
                                    claim_id) as renewer:
            if not db_restores.record_restore_target(
                    context, restore_id, claim_id, scratch):
                return None
            reason, deleted = self._verify(context, restore, scratch)
            if renewer.lost.is_set():
                return None
            gone = reason is not None and self._backup_gone(context,
                                                            restore)
            now = timeutils.utcnow(True)
            recorded, transition = db_verifications.finish_verification(
                context, restore_id, claim_id, now, reason, deleted,
                backup_gone=gone)
        if not recorded:
            LOG.warning('Verification %s: the claim was superseded; its '
                        'outcome is not recorded by this worker.',
                        restore_id)
            return None
        done = db_restores.get_restore(context, restore_id)
        if done.status == enums.RestoreStatus.CANCELLED:
            LOG.info('Verification %(restore)s (policy %(policy)s) %(why)s',
                     {'restore': restore_id, 'policy': restore.policy_id,
                      'why': done.status_reason})
            return CANCELLED
        result = (enums.VerifyResult.PASSED if reason is None
                  else enums.VerifyResult.FAILED)
        (LOG.info if reason is None else LOG.warning)(
            'Verification %(restore)s of backup %(backup)s (execution '
            '%(execution)s, policy %(policy)s): %(result)s%(reason)s',
            {'restore': restore_id, 'backup': restore.backup_id,
             'execution': restore.execution_id,
             'policy': restore.policy_id, 'result': result,
             'reason': ' (%s)' % reason if reason else ''})
        notifications.notify_verification(
            self.conf, context, restore, result, reason, now, done.duration)
        if transition:
            notifications.notify_protection(self.conf, context, transition)
        return result

    def _verify(self, context, restore, scratch):
        """``(None or why it failed, whether no scratch target is left)``."""
        try:
            policy = db_api.get_policy(context, restore.policy_id)
        except exception.PolicyNotFound:
            return ('policy %s was deleted; its backend credentials are '
                    'gone' % restore.policy_id), True
        subject = 'Verification %s' % restore.id
        check = policy.verify_check or None
        try:
            backend = loader.get_backend(self.conf, restore.backend)
            reason = backend_calls.call(
                self.conf, subject, backend.verify_backup, policy,
                restore.backup_id, check, scratch)
        except backends.BackendError as e:
            reason = str(e)
        except Exception as e:
            LOG.exception('Verification %s: unexpected error.', restore.id)
            reason = 'internal error in the worker: %s' % e
        return reason, self._delete_scratch(policy, restore, scratch)

    def _backup_gone(self, context, restore):
        """Whether the backend no longer has the backup verified."""
        try:
            policy = db_api.get_policy(context, restore.policy_id)
            backend = loader.get_backend(self.conf, restore.backend)
            backend.get_backup(policy, restore.backup_id)
        except backends.BackupNotFound:
            return True
        except Exception as e:
            # Not known to be gone: the failure stands.
            LOG.debug('Verification %s: cannot tell whether backup %s '
                      'still exists: %s', restore.id, restore.backup_id, e)
        return False

    def _delete_scratch(self, policy, restore, scratch):
        try:
            backend = loader.get_backend(self.conf, restore.backend)
            backend.delete_scratch(policy, scratch)
        except Exception as e:
            LOG.warning('Verification %s: scratch target %s is not deleted '
                        'yet (%s); the scratch reconciler will.',
                        restore.id, scratch, e)
            return False
        return True


def delete_leftover_scratch(conf, context, limit=100):
    """Delete the scratch targets finished verifications left; how many.

    Only names recorded on a verification (so made by the service), and
    only once that verification is finished: a running one, or one whose
    worker died, is resumed by a claim that replaces its scratch target.
    """
    deleted = 0
    for row in db_verifications.scratch_to_delete(context, limit):
        try:
            policy = db_api.get_policy(context, row.policy_id)
            backend = loader.get_backend(conf, row.backend)
            backend.delete_scratch(policy, row.target_id)
        except exception.PolicyNotFound:
            # Its instance's database is not known any more: nothing the
            # service may still reach.
            LOG.warning('Verification %s: policy %s is gone; its scratch '
                        'target %s cannot be reached.', row.id,
                        row.policy_id, row.target_id)
        except Exception as e:
            LOG.warning('Verification %s: cannot delete scratch target %s '
                        'yet: %s', row.id, row.target_id, e)
            continue
        db_verifications.record_scratch_deleted(context, row.id,
                                                timeutils.utcnow(True))
        deleted += 1
    if deleted:
        LOG.info('Scratch reconciler: deleted %d scratch targets.', deleted)
    return deleted
