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
"""The expiry sweep: delete the ``expiring`` backups whose grace is over.

Retention marks a backup it no longer keeps ``expiring``, to delete after
``[worker] retention_grace`` (``worker/retention.py``).  Every worker
looks, every ``[worker] expiry_sweep_interval`` seconds, for the policies
with backups whose grace is over (``db_retention.due_policies``, an index
range) and, for each, decides again over the instance's backups as they
are now and deletes those retention still does not keep
(:func:`retention.delete_expired`): a backup is deleted within about one
interval of the end of its grace, whether or not another backup of its
instance succeeds.

Workers sweeping at once decide alike and delete each backup once: every
delete is claimed by a compare-and-set on the backup's row, which a hold
arriving meanwhile defeats.
"""

import collections

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import retention as db_retention
from dbaas_scheduler import exception
from dbaas_scheduler.worker import retention

LOG = logging.getLogger(__name__)

# Policies looked at per pass; the rest waits for the next pass.
BATCH = 100


class ExpirySweeper:
    """The expiry sweep passes of one worker."""

    def __init__(self, conf):
        self.conf = conf

    @property
    def pass_interval(self):
        return self.conf.worker.expiry_sweep_interval

    def run_pass(self, context):
        """One pass; its counts: ``policies``, ``deleted``, ``failed``."""
        totals = collections.Counter()
        now = timeutils.utcnow(True)
        for policy_id in db_retention.due_policies(context, now, BATCH):
            try:
                policy = db_api.get_policy(context, policy_id)
            except exception.PolicyNotFound:
                continue
            totals['policies'] += 1
            try:
                backend = loader.get_backend(self.conf, policy.backend)
                totals['deleted'] += len(retention.delete_expired(
                    self.conf, context, policy, backend, now))
            except Exception as exc:
                # Still due: the next pass tries again.
                totals['failed'] += 1
                LOG.warning('Expiry sweep of policy %s failed, tried again '
                            'at the next pass: %s', policy_id, exc)
        return totals
