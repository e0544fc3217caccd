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
"""The claims a worker process holds, and the renewal of their leases.

Every claim the worker makes is held here, by execution id, from the claim
until the execution is finished, released or handed over: executions
waiting for their thread, backups being created (a create may take
longer than a lease when the backend is slow) and backups running.  A
loop of the worker service renews them all, by primary key and claim id,
``RENEWALS_PER_LEASE`` times per ``[worker] lease_duration``; a claim that
is no longer current (superseded, finished) is dropped when a renewal
misses it.  A frozen process renews nothing, so its leases expire and
another worker resumes its executions; the fencing token in every write
keeps the frozen one from recording anything when it wakes up.
"""

import threading

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.db import leases as db_leases
from dbaas_scheduler import stats

LOG = logging.getLogger(__name__)

RENEWALS_PER_LEASE = 5


class LeaseKeeper:
    """``{execution id: claim id}`` of one worker process, thread-safe."""

    def __init__(self, conf):
        self.conf = conf
        self._claims = {}
        self._lock = threading.Lock()

    @property
    def renew_interval(self):
        """Seconds between two renewals."""
        return self.conf.worker.lease_duration / RENEWALS_PER_LEASE

    def hold(self, claims):
        """Start renewing ``{execution id: claim id}`` (replacing older)."""
        with self._lock:
            self._claims.update(claims)

    def adopt(self, claims):
        """Hold those of ``claims`` not held yet (the poller's backups)."""
        with self._lock:
            for execution_id, claim_id in claims.items():
                self._claims.setdefault(execution_id, claim_id)

    def drop(self, execution_id, claim_id):
        """Stop renewing this claim (if it is still the one held)."""
        with self._lock:
            if self._claims.get(execution_id) == claim_id:
                del self._claims[execution_id]

    def holds(self, execution_id, claim_id):
        with self._lock:
            return self._claims.get(execution_id) == claim_id

    def claims(self):
        with self._lock:
            return dict(self._claims)

    def renew(self, context):
        """Renew every lease held; returns ``(renewed, lost)`` counts."""
        claims = self.claims()
        if not claims:
            return 0, 0
        renewed = db_leases.renew_leases(
            context, claims, timeutils.utcnow(True),
            self.conf.worker.lease_duration)
        lost = [execution_id for execution_id in claims
                if execution_id not in renewed]
        for execution_id in lost:
            self.drop(execution_id, claims[execution_id])
        if lost:
            # Mostly executions finished between the snapshot and the
            # renewal; a superseded claim is logged by its thread.
            LOG.debug('%d claims were not renewed (finished or '
                      'superseded): %s', len(lost), ', '.join(lost[:20]))
            self._count_lost(context, {execution_id: claims[execution_id]
                                       for execution_id in lost})
        return len(renewed), len(lost)

    @staticmethod
    def _count_lost(context, missed):
        """Count the claims taken away (not finished) in the metrics."""
        try:
            taken = db_leases.lost_claims(context, missed)
        except Exception:
            LOG.debug('Could not tell lost claims from finished ones',
                      exc_info=True)
            return
        if taken:
            stats.LEASE_RENEWALS_LOST.inc(amount=len(taken))

    def release_all(self, context):
        """Give every lease held up now; returns the ids released, sorted.

        The engine's sweep hands the executions to another worker, which
        resumes them from what was recorded (the backup id above all).
        """
        claims = self.claims()
        if not claims:
            return []
        released = db_leases.release_claims(context, claims,
                                            timeutils.utcnow(True))
        with self._lock:
            for execution_id in claims:
                if self._claims.get(execution_id) == claims[execution_id]:
                    del self._claims[execution_id]
        return sorted(released)
