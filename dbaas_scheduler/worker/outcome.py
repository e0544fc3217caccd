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
"""How an execution ends: its final state, fenced by its claim, and after.

One :class:`Outcomes` per worker process, given to the parts that end
executions: the runner (``worker/lifecycle.py``: SKIPPED, FAILED before
the backup started) and the poller (``worker/poller.py``: SUCCEEDED,
FAILED after).  Every write is conditional on the execution's claim id
(``db_worker.finish_execution``), so a claim superseded meanwhile records
nothing.  An execution that ends queues its instance for reconciliation
(``worker/reconciler.py``), which finds the backups made for it once too
often; a broken Keystone trust pauses its policy.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import notifications

LOG = logging.getLogger(__name__)


class Outcomes:
    """Records how executions end; ``finish`` may be called by any thread."""

    def __init__(self, conf, keeper):
        self.conf = conf
        # The worker's LeaseKeeper: a finished claim is renewed no more.
        self.keeper = keeper

    def reconcile_schedule(self, execution, now):
        """When to look for extra backups of ``execution``'s instance."""
        worker = self.conf.worker
        return db_reconciliation.InstanceToReconcile(
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
        notifications.announce_outcome(self.conf, context,
                                       execution.policy_id, finished,
                                       db_api.get_policy)
        return True

    def pause_for_trust(self, context, policy, error):
        """A broken trust fails every run: stop until someone acts."""
        db_api.disable_policy(
            context, policy.id,
            'its Keystone trust no longer works; delete the policy and '
            'create it again as a user of the project: %s' % error)
        LOG.warning('Policy %s paused: %s', policy.id, error)
