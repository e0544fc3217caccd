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
"""Overlap: is the execution that goes first really running?

A RUNNING row is not proof of a running backup: its worker may have died
(its lease runs until the sweep notices), or its backup may have finished
at the backend since the worker last looked.  Before an execution yields
to another of its instance, the worker establishes that the other one is
really running:

* its owner is alive -- its service row has a heartbeat younger than
  ``[DEFAULT] service_down_time`` and its lease has not expired.  An
  execution whose owner is dead is *taken over* first (a claim
  conditional on the dead owner's claim id): started now if its backup was
  not, otherwise handed to this worker's poller, which finishes it;
* if its backup was started, the backend does not report that backup
  finished.

Only then is the overlap decided.  When the answer cannot be had (the
backend is away), the other execution counts as running: two backups of
one instance at once is what overlap control is for.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import enums

LOG = logging.getLogger(__name__)


class OverlapJudge:
    """Decides overlaps for the executions one worker starts."""

    def __init__(self, conf, owner, keeper):
        self.conf = conf
        # The worker's service id, and its LeaseKeeper, which holds the
        # claims of the executions this judge takes over.
        self.owner = owner
        self.keeper = keeper

    def first_running(self, context, execution, blockers, start):
        """The id of the first of ``blockers`` really running, or None.

        ``start(context, execution, policy)`` starts an execution taken
        over from a dead worker and says whether its backup now runs
        (``ExecutionRunner.start_taken_over``).
        """
        for other in blockers:
            if self.really_running(context, execution, other, start):
                return other.id
        return None

    def really_running(self, context, execution, other, start):
        """Whether ``other`` (a ``db_worker.Blocker``) is making a backup."""
        now = timeutils.utcnow(True)
        if (other.status == enums.ExecutionStatus.RUNNING
                and self.owner_dead(other, now)):
            return self._take_over(context, execution, other, now, start)
        if other.backup_id is None:
            return True     # its live worker is starting it
        return self._backup_in_progress(context, other)

    def owner_dead(self, other, now):
        if other.lease_expires_at is None or other.lease_expires_at < now:
            return True
        if other.owner == self.owner:
            return False
        down = datetime.timedelta(seconds=self.conf.service_down_time)
        return other.heartbeat_at is None or now - other.heartbeat_at > down

    def _take_over(self, context, execution, other, now, start):
        claim_id = uuidutils.generate_uuid()
        if not db_worker.take_over_execution(
                context, other.id, other.claim_id, self.owner,
                claim_id, now, self.conf.worker.lease_duration):
            # Someone was faster, or its worker was alive after all.
            return True
        LOG.warning('Execution %s: execution %s of the same instance goes '
                    'first, and its worker %s is gone; taken over',
                    execution.id, other.id, other.owner)
        self.keeper.hold({other.id: claim_id})
        [(resumed, policy)] = db_worker.get_executions_and_policies(
            context, [other.id])
        if resumed.claim_id != claim_id:
            return True
        if resumed.backup_id is not None:
            # This worker's poller watches it from now on.
            return self._backup_in_progress(context, other)
        try:
            return start(context, resumed, policy)
        except Exception:
            LOG.exception('Execution %s: starting the execution %s taken '
                          'over failed', execution.id, other.id)
            self.keeper.drop(other.id, claim_id)
            return True

    def _backup_in_progress(self, context, other):
        [(_, policy)] = db_worker.get_executions_and_policies(
            context, [other.id])
        if policy is None:
            return True
        try:
            backend = loader.get_backend(self.conf, policy.backend)
            backup = backend.get_backup(policy, other.backup_id)
        except backends.BackupNotFound:
            return False
        except Exception as exc:
            LOG.warning('Execution %s: cannot tell whether backup %s is still '
                        'running (%s); counted as running', other.id,
                        other.backup_id, exc)
            return True
        if backup.finished:
            LOG.info('Execution %s is RUNNING but its backup %s is %s at the '
                     'backend: it does not hold the instance up', other.id,
                     other.backup_id, backup.status)
            return False
        return True
