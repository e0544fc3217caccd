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
"""Sweeps: cast again what no worker took, and resume what a worker dropped.

Any number of engines may sweep at once: each claims rows with ``SKIP
LOCKED`` and stamps them in the same transaction, so a row is cast by one
sweep only.  A cast that arrives twice is harmless: the worker's claim is a
conditional update that the second message does not match.

What one engine's sweeps cast is paced by a :class:`RecastLimiter`, so
that a sweep after an outage, when thousands of executions wait at once,
hands them to the broker at ``[engine] sweep_recast_rate`` a second rather
than all in one pass.
"""

import dataclasses
import datetime
import time

from oslo_log import log as logging

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import capacity as db_capacity
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler.db import verifications as db_verifications
from dbaas_scheduler import dispatch
from dbaas_scheduler.engine import protection
from dbaas_scheduler import enums
from dbaas_scheduler import notifications
from dbaas_scheduler import schedule

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class SweepResult:
    recast: int
    resumed: int
    expired_services: int
    # Executions left for a later pass by the rate limit.
    deferred: bool = False
    # Protection states that time moved on (engine/protection.py).
    protection: int = 0
    # Executions EXPIRED: never claimed within their start window.
    expired: int = 0


class RecastLimiter:
    """A token bucket over the executions one engine's sweeps cast.

    It fills at ``rate`` executions a second up to ``burst``, and starts
    full: one pass casts at most ``burst``, and over a longer time no more
    than ``rate`` a second on average.  ``clock`` is a monotonic clock in
    seconds (a parameter for the tests).
    """

    def __init__(self, rate, burst, clock=time.monotonic):
        self.rate = float(rate)
        self.burst = int(burst)
        self._clock = clock
        self._tokens = float(self.burst)
        self._filled_at = clock()

    def available(self):
        """How many executions may be cast now."""
        now = self._clock()
        elapsed = max(0.0, now - self._filled_at)
        self._tokens = min(float(self.burst),
                           self._tokens + elapsed * self.rate)
        self._filled_at = now
        return int(self._tokens)

    def spend(self, count):
        self._tokens -= count


def limiter_from_conf(conf):
    return RecastLimiter(conf.engine.sweep_recast_rate,
                         conf.engine.sweep_recast_max_per_pass)


# Why a sweep stopped casting before it ran out of work.
BUDGET_SPENT = 'budget spent'
CAST_FAILED = 'cast failed'


def _take_and_cast(context, worker_api, conf, now, budget, claim):
    """Claim with ``claim(limit)`` and cast, batch by batch, within budget.

    Returns ``(claimed, sent, stopped)``: how many executions were claimed
    and how many of them cast, and None, or why it stopped while more may
    be waiting (:data:`BUDGET_SPENT`, :data:`CAST_FAILED`).
    """
    batch = conf.engine.batch_size
    per_message = conf.engine.executions_per_message
    claimed = sent = 0
    while True:
        limit = min(batch, budget - claimed)
        if limit <= 0:
            return claimed, sent, BUDGET_SPENT
        ids = claim(limit)
        claimed += len(ids)
        if ids:
            cast = dispatch.dispatch(worker_api, context, ids, per_message,
                                     now)
            sent += len(cast)
            if len(cast) < len(ids):
                return claimed, sent, CAST_FAILED
        if len(ids) < limit:
            return claimed, sent, None


def sweep(context, worker_api, conf, now, limiter=None):
    """One pass of every sweep; returns what it did.

    ``limiter`` (a :class:`RecastLimiter` kept from pass to pass) paces
    the casts; without one, a pass casts at most
    ``[engine] sweep_recast_max_per_pass``.
    """
    limiter = limiter or limiter_from_conf(conf)
    stale_before = now - datetime.timedelta(
        seconds=conf.engine.dispatch_timeout)

    expired = db_scheduling.expire_unclaimed_executions(
        context, now, conf.engine.batch_size)
    for row in expired:
        LOG.warning('Execution %s of policy %s: EXPIRED, no worker claimed '
                    'it before its start window ended at %s', row.id,
                    row.policy_id, row.start_deadline.isoformat())
        notifications.notify_execution(
            conf, context, 'expired', notifications.execution_payload(
                row, status=enums.ExecutionStatus.EXPIRED,
                status_reason=db_scheduling.UNCLAIMED_EXPIRED_REASON
                % row.start_deadline.isoformat(), backup_id=None,
                started_at=None, finished_at=now, fault=None))
        notifications.announce_outcome(conf, context, row.policy_id,
                                       row.outcome, db_api.get_policy)

    # Executions a worker lost go first: each may be a backup under way.
    def reclaim(limit):
        expired = db_scheduling.reclaim_expired_leases(context, now, limit)
        for execution_id, owner in expired:
            LOG.warning('Execution %s: the lease of worker %s expired; '
                        'another worker will resume it', execution_id, owner)
        return [execution_id for execution_id, _ in expired]

    # Taken once a pass, so that no pass casts more than the burst.
    budget = limiter.available()
    claimed, resumed, stopped = _take_and_cast(context, worker_api, conf,
                                               now, budget, reclaim)
    limiter.spend(claimed)

    def recast(limit):
        ids = db_scheduling.claim_waiting_executions(
            context, now, stale_before, limit,
            limits=db_capacity.limits_from_conf(conf))
        if ids:
            LOG.info('Casting %d executions again that no worker claimed '
                     'within %ss', len(ids), conf.engine.dispatch_timeout)
        return ids

    recast_count = 0
    if stopped is None:
        claimed, recast_count, stopped = _take_and_cast(
            context, worker_api, conf, now, budget - claimed, recast)
        limiter.spend(claimed)
    if stopped == BUDGET_SPENT:
        LOG.info('Sweep: the re-cast budget ([engine] sweep_recast_rate, '
                 'sweep_recast_max_per_pass) is spent; executions still '
                 'waiting are cast by the next passes')

    record_due_verifications(context, now)
    recast_restores(context, worker_api, conf, now)
    expired_services = db_services.delete_expired_services(
        context, now - datetime.timedelta(seconds=conf.service_expiry))
    transitions = protection.sweep(context, conf, now)
    return SweepResult(recast_count, resumed, expired_services,
                       stopped == BUDGET_SPENT, len(transitions),
                       len(expired))


def record_due_verifications(context, now):
    """Record the scheduled verifications now due (cast by the next step).

    A new verification is PENDING and never cast: :func:`recast_restores`
    casts it in the same pass.
    """
    try:
        created = db_verifications.create_due_verifications(
            context, now, schedule.next_verify_slot)
    except Exception as exc:
        LOG.warning('Sweep: cannot record the verifications due: %s', exc)
        return []
    for restore_id in created:
        LOG.info('Sweep: verification %s recorded', restore_id)
    return created


def recast_restores(context, worker_api, conf, now):
    """Cast again the restores no worker took, or whose worker died.

    Stamped ``dispatched_at`` in the transaction that picks them, so two
    engines do not both cast one within ``[engine] dispatch_timeout``; a
    restore cast twice is claimed once.  Returns how many were cast.
    """
    try:
        ids = db_restores.restores_to_cast(context, now,
                                           conf.engine.dispatch_timeout)
    except Exception as exc:
        LOG.warning('Sweep: cannot look for restores to cast again: %s', exc)
        return 0
    for count, restore_id in enumerate(ids):
        try:
            worker_api.restore_backup(context, restore_id)
        except Exception as exc:
            LOG.warning('Sweep: could not cast restore %s (%s: %s); the '
                        'next sweep tries again.', restore_id,
                        type(exc).__name__, exc)
            return count
    if ids:
        LOG.info('Sweep: %d restores cast again', len(ids))
    return len(ids)
