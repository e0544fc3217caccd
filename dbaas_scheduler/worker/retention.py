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
"""Retention: the deletes, after a backup succeeded.

The decision is :mod:`dbaas_scheduler.retention` (pure maths).
:func:`apply_retention` acts on it after a backup succeeded (the poller
calls it once the execution's SUCCEEDED is recorded under its claim): it
lists the instance's backups and what the database records of them (the
owner policy, holds, expiries), decides, marks the backups it no longer
keeps ``expiring`` (to delete after ``[worker] retention_grace``) and
deletes those whose grace is over.  The expiry sweep (``worker/expiry.py``)
calls :func:`delete_expired` for the backups whose grace ends between two
such passes.  Every delete is claimed first by a
compare-and-set in the database (``db/retention.py``), which a hold
arriving meanwhile defeats; it is recorded once, on the execution whose
retention deleted it.
"""

import datetime
import typing

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base
from dbaas_scheduler.db import retention as db_retention
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import retention as maths
from dbaas_scheduler import timezones
from dbaas_scheduler.worker import backend_calls

LOG = logging.getLogger(__name__)

RetentionRules = maths.RetentionRules
RetentionDecision = maths.RetentionDecision
PolicyRetention = maths.PolicyRetention
InstanceDecision = maths.InstanceDecision
plan_retention = maths.plan_retention
plan_instance_retention = maths.plan_instance_retention
plan_grace = maths.plan_grace


class _Pass(typing.NamedTuple):
    """What one look at an instance found and decided."""

    backups: list
    # {backup id: record} (``db_retention.list_instance_backups``).
    records: dict
    decision: maths.InstanceDecision
    plan: maths.GracePlan


def _plan(conf, context, label, policy, backend, now):
    """List the instance's backups, decide, and cancel what stays.

    The data retention reasons over (:func:`plan_instance_retention`):
    every backup of the instance, which of them this service made and for
    which policy, and the rules of every policy of the instance.
    """
    backups = backend_calls.call(conf, label, backend.list_backups, policy)
    records = db_retention.list_instance_backups(
        context, policy.project_id, policy.instance_id)
    owners = {backup_id: record.policy_id
              for backup_id, record in records.items()}
    held = {backup_id for backup_id, record in records.items()
            if record.held_at is not None}
    policies = {
        other.id: PolicyRetention.from_policy(
            other, timezones.get_timezone(other.timezone))
        for other in db_retention.list_instance_policies(
            context, policy.backend, policy.project_id,
            policy.instance_id)}
    decision = plan_instance_retention(
        backups, policy.id, owners, policies, now, held,
        maths.newest_verified(records, policies))
    plan = plan_grace(
        decision, {backup_id: (record.backup_state,
                               record.backup_delete_after)
                   for backup_id, record in records.items()},
        now, datetime.timedelta(seconds=conf.worker.retention_grace))
    db_retention.cancel_expiring(context, policy.id, plan.cancel)
    return _Pass(backups, records, decision, plan)


def _delete(conf, context, label, policy, backend, found, to_delete):
    """Delete ``to_delete`` (of ``found``, a :class:`_Pass`), each once.

    Returns ``[(backup id, entries)]``: each backup this caller deleted,
    with the ``deleted_backups`` entries of it and the backups the backend
    deleted with it (those this service did not make included).
    """
    deleted = []
    by_id = {backup.id: backup for backup in found.backups}
    for backup in to_delete:
        # The compare-and-set that a hold arriving since the decision
        # defeats; exactly one deleter wins it.
        if not db_retention.claim_deletion(context, policy.id, backup.id,
                                           timeutils.utcnow(True)):
            continue
        try:
            backend_calls.call(conf, label, backend.delete_backup, policy,
                               backup.id)
        except base.BackupNotFound:
            pass
        except base.BackendError as exc:
            # Stays claimed (``deleting``): retried once the claim is
            # stale, never held meanwhile.
            LOG.warning('%s: retention could not delete backup %s: %s',
                        label, backup.id, exc)
            continue
        gone = {backup.id: {'id': backup.id,
                            'created_at': backup.created_at.isoformat()}}
        # The backend deleted the backups built on it too.
        for child_id, parent_id in sorted(found.decision.cascade.items()):
            created_at = by_id[child_id].created_at
            if parent_id == backup.id:
                gone[child_id] = {
                    'id': child_id, 'with': backup.id,
                    'created_at': created_at and created_at.isoformat()}
        recorded = set(db_retention.record_deletion(
            context, policy.project_id, policy.instance_id, list(gone)))
        # Backups this service did not make have no row: recorded here.
        entries = [entry for backup_id, entry in gone.items()
                   if backup_id in recorded or backup_id not in found.records]
        if entries:
            deleted.append((backup.id, entries))
    return deleted


def apply_retention(conf, context, execution, policy, backend):
    """Delete what retention no longer keeps, over the instance's chains.

    The ids deleted are recorded on ``execution``; returns those entries.
    """
    rules = RetentionRules.from_policy(policy)
    if not rules.any:
        return []
    now = timeutils.utcnow(True)
    label = 'Execution %s' % execution.id
    try:
        found = _plan(conf, context, label, policy, backend, now)
        expiring = db_retention.mark_expiring(
            context, policy.id, [b.id for b in found.plan.expire],
            now + datetime.timedelta(seconds=conf.worker.retention_grace))
    except Exception as exc:
        LOG.warning('Execution %s: retention of policy %s skipped this '
                    'time: %s', execution.id, policy.id, exc)
        return []
    LOG.debug('Execution %s: retention of policy %s over %d backups of '
              'instance %s keeps %s, marks %s expiring and deletes %s',
              execution.id, policy.id, len(found.backups),
              policy.instance_id, found.decision.keep, expiring,
              [b.id for b in found.plan.delete])
    deleted = [entry for _, entries in _delete(
        conf, context, label, policy, backend, found, found.plan.delete)
        for entry in entries]
    if deleted:
        db_worker.record_deleted_backups(context, execution.id, deleted)
        LOG.info('Execution %s: retention of policy %s deleted %d '
                 'backups and keeps %d', execution.id, policy.id,
                 len(deleted), len(found.decision.keep))
    return deleted


# Why the expiry sweep deleted a backup, as recorded in ``deleted_backups``.
EXPIRED_REASON = 'retention'


def delete_expired(conf, context, policy, backend, now):
    """The expiry sweep's work on one policy: delete what is due now.

    The backups of ``policy`` that are ``expiring`` and whose grace is
    over (or whose deleter died), if retention, deciding again now over
    the instance's chains, holds and floors, still deletes them: those it
    keeps after all are no longer expiring, and nothing new is marked
    (that is the next retention pass's).  Each delete is claimed by the
    same compare-and-set as :func:`apply_retention`'s, so a hold that
    arrives meanwhile wins and two sweepers delete a backup once; it is
    recorded on the execution that made the backup, with the reason
    ``retention``.  Returns the entries recorded.
    """
    label = 'Expiry sweep of policy %s' % policy.id
    found = _plan(conf, context, label, policy, backend, now)
    due = [backup for backup in found.plan.delete
           if found.records.get(backup.id) is not None
           and found.records[backup.id].backup_state is not None]
    recorded = []
    for backup_id, entries in _delete(conf, context, label, policy,
                                      backend, found, due):
        entries = [dict(entry, reason=EXPIRED_REASON,
                        deleted_at=now.isoformat()) for entry in entries]
        recorded.extend(db_worker.record_deleted_backups(
            context, found.records[backup_id].execution_id, entries))
    if recorded or found.plan.cancel:
        LOG.info('%s: deleted %d backups whose grace was over; %d '
                 'expiring ones are kept after all', label, len(recorded),
                 len(found.plan.cancel))
    return recorded
