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
"""Reconciliation: find and delete the extra backups of executions.

Every worker runs a pass every ``[worker] reconcile_interval / 10``
seconds.  A pass takes the instances that are due from the reconciliation
queue (``SKIP LOCKED``: workers share them), and for each lists its
backups at the backend.  A backup whose description carries the tag of one
of this service's executions (an execution id in its database) but is not
that execution's recorded backup is a stray (``strays.stray_reason``): it
is deleted once the backend reports it finished, and the deletion is
recorded on the execution with the reason ``duplicate`` or ``orphan``.
Backups without a tag, or with the tag of an execution this service does
not know, are never touched.

An instance is queued when one of its executions finishes (see
``outcome.Outcomes.finish``), first due ``reconcile_interval`` later and
then every ``reconcile_interval`` until ``reconcile_window`` seconds after
its last execution finished; while a stray is still being made, it stays
queued.
"""

import collections
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.worker import backend_calls
from dbaas_scheduler.worker import strays

LOG = logging.getLogger(__name__)

# Instances claimed per transaction.
BATCH = 50
# Passes per reconcile_interval.
PASSES_PER_INTERVAL = 10


class Reconciler:
    """The reconciliation passes of one worker."""

    def __init__(self, conf):
        self.conf = conf

    @property
    def pass_interval(self):
        return self.conf.worker.reconcile_interval / PASSES_PER_INTERVAL

    def run_pass(self, context):
        """Reconcile every due instance; returns the counts of the pass.

        ``instances``, ``duplicate`` and ``orphan`` (backups deleted),
        ``waiting`` (strays still being made), ``failed`` (instances whose
        backups could not be listed).
        """
        totals = collections.Counter()
        while True:
            claimed = db_reconciliation.claim_due(
                context, timeutils.utcnow(True), BATCH,
                self.conf.worker.lease_duration)
            for item in claimed:
                totals['instances'] += 1
                try:
                    self.reconcile(context, item, totals)
                except Exception:
                    # It comes due again when its claim runs out.
                    totals['failed'] += 1
                    LOG.exception('Reconciliation of instance %s failed',
                                  item.instance_id)
            if len(claimed) < BATCH:
                break
        if totals[strays.DUPLICATE] or totals[strays.ORPHAN]:
            LOG.info('Reconciliation: %d instances, deleted %d duplicate '
                     'and %d orphan backups, %d still being made',
                     totals['instances'], totals[strays.DUPLICATE],
                     totals[strays.ORPHAN], totals['waiting'])
        return totals

    def reconcile(self, context, item, totals):
        """One claimed instance (a ``db_reconciliation.Claimed``)."""
        policy = db_reconciliation.find_policy(context, item)
        if policy is None:
            # No policy left to act through (and no credentials): nothing
            # of this instance can be listed any more.
            LOG.info('Instance %s has no backup policy any more; not '
                     'reconciled', item.instance_id)
            db_reconciliation.forget(context, item)
            return
        backend = loader.get_backend(self.conf, policy.backend)
        try:
            listed = backend_calls.call(
                self.conf, 'Reconciliation of instance %s' % item.instance_id,
                backend.list_backups, policy)
        except backends.BackendError as exc:
            totals['failed'] += 1
            LOG.warning('Reconciliation of instance %s: cannot list its '
                        'backups (%s); trying again later', item.instance_id,
                        exc)
            return
        waiting = self._delete_strays(context, item, backend, policy,
                                      listed, totals)
        now = timeutils.utcnow(True)
        if waiting:
            db_reconciliation.reschedule(
                context, item, now + datetime.timedelta(
                    seconds=self.conf.worker.reconcile_interval))
        else:
            db_reconciliation.finish(context, item, now,
                                     self.conf.worker.reconcile_interval)

    def _delete_strays(self, context, item, backend, policy, listed, totals):
        """Delete the finished strays among ``listed``; True if some wait."""
        tagged = {}
        for backup in listed:
            execution_id = backends.tagged_execution_id(backup.description)
            if execution_id is not None:
                tagged[backup.id] = (backup, execution_id)
        executions = db_reconciliation.get_tagged_executions(
            context, {execution_id for _, execution_id in tagged.values()})
        waiting = False
        for backup, execution_id in tagged.values():
            execution = executions.get(execution_id)
            if (execution is None
                    or execution.instance_id != item.instance_id
                    or execution.project_id != item.project_id):
                continue    # not made by this service for this project
            reason = strays.stray_reason(execution, backup.id)
            if reason is None:
                continue
            if not backup.finished:
                totals['waiting'] += 1
                waiting = True
                continue
            try:
                if not strays.delete_stray(self.conf, context, backend,
                                           policy, execution.id, backup,
                                           reason, 'reconciliation', listed):
                    # Until its children go; passes go on as usual.
                    totals['kept'] += 1
                    continue
            except Exception as exc:
                waiting = True
                LOG.warning('Execution %s: could not delete its extra backup '
                            '%s: %s', execution.id, backup.id, exc)
                continue
            totals[reason] += 1
        return waiting
