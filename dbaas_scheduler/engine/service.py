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
"""The dbaas-scheduler-engine service: the tick and sweep loops.

Built on :class:`~dbaas_scheduler.service.LoopingService`: a loop
that fails because the database or the broker is away logs, backs off and
tries again.  Stopping (SIGTERM) lets the tick in flight finish: its
transaction commits or rolls back, and what it committed is cast before
the process exits.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import purge as db_purge
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler import dispatch
from dbaas_scheduler.engine import manager
from dbaas_scheduler.engine import notification_listener
from dbaas_scheduler.engine import sweeps
from dbaas_scheduler.engine import tick
from dbaas_scheduler.engine import trusts
from dbaas_scheduler import notifications
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler import service
from dbaas_scheduler import stats

LOG = logging.getLogger(__name__)

BINARY = 'dbaas-scheduler-engine'

# Seconds between two batches of one pass of the automatic purge.
PURGE_BATCH_PAUSE = 1.0


class EngineService(service.LoopingService):
    """Dispatches due backups; any number of engines may run at once."""

    binary = BINARY
    stats_metrics = stats.ENGINE_METRICS

    def __init__(self, conf):
        super().__init__(conf)
        self.worker_api = None
        # Paces the sweeps' casts from one pass to the next.
        self.recast_limiter = sweeps.limiter_from_conf(conf)
        # Where the automatic purge's pass goes on from.
        self.purge_marker = None

    @property
    def topic(self):
        return self.conf.engine.topic

    def on_start(self):
        rpc.init(self.conf)
        self.worker_api = rpcapi.WorkerAPI(self.conf)
        if self.conf.rpc_transport == 'none':
            return
        # The RPC API for other services, and Trove's notifications.
        self.serve_rpc([manager.EngineManager(self.conf)])
        listener = notification_listener.get_listener(self.conf)
        if listener is not None:
            self.add_server(listener)

    def loops(self):
        threads = self.conf.engine.tick_threads
        if self.conf.database.connection.startswith('sqlite'):
            # No row locks: two ticks would claim the same batch and one
            # would roll back.
            threads = 1
        ticks = [('tick-%d' % number, self.tick_once)
                 for number in range(threads)]
        return ticks + [('sweep', self._sweep),
                        ('trusts', self._delete_trusts),
                        ('purge', self.purge_once)]

    # One iteration of each loop; tests call these directly.

    def tick_once(self, context):
        """Run a tick and dispatch it; return how long to sleep next.

        How long the tick's transaction and its casts took is observed in
        ``stats.ENGINE_TICK_SECONDS`` (a tick that fails too).
        """
        now = timeutils.utcnow(True)
        with stats.ENGINE_TICK_SECONDS.time():
            result = tick.run_tick(context, now,
                                   self.conf.engine.batch_size,
                                   self.conf.engine.catchup_window)
            if result.runs:
                dispatch.dispatch(self.worker_api, context, result.runs,
                                  self.conf.engine.executions_per_message,
                                  now)
        for expired in result.expired:
            notifications.notify_execution(
                self.conf, context, 'expired',
                notifications.execution_payload(
                    expired, backup_id=None, started_at=None, fault=None))
        for policy_id, outcome in result.outcomes:
            notifications.announce_outcome(self.conf, context, policy_id,
                                           outcome, db_api.get_policy)
        if result.claimed:
            LOG.info('Tick: %d due policies, %d runs dispatched, %d missed '
                     'slots recorded, %d excluded, %d expired, %d policies '
                     'finished', result.claimed, len(result.runs),
                     result.missed, result.excluded, len(result.expired),
                     result.finished)
        if result.full:
            return 0
        return self._sleep_time(db_scheduling.get_earliest_due_time(context))

    def _sleep_time(self, earliest):
        scan_interval = self.conf.engine.scan_interval
        if earliest is None:
            return scan_interval
        until_due = (earliest - timeutils.utcnow(True)).total_seconds()
        return max(0.0, min(scan_interval, until_due))

    def sweep_once(self, context):
        result = sweeps.sweep(context, self.worker_api, self.conf,
                              timeutils.utcnow(True), self.recast_limiter)
        if result.recast or result.resumed or result.expired_services:
            LOG.info('Sweep: %d executions cast again, %d resumed after '
                     'an expired lease, %d dead service rows deleted',
                     result.recast, result.resumed, result.expired_services)
        return result

    def _sweep(self, context):
        self.sweep_once(context)
        return self.conf.engine.sweep_interval

    def _delete_trusts(self, context):
        trusts.delete_pending(self.conf, context)
        return trusts.INTERVAL

    def purge_once(self, context):
        """One batch of the automatic purge; return the seconds to sleep.

        Off (and re-read every pass, so SIGHUP can turn it on) while
        ``[engine] execution_purge_after_days`` is 0.
        """
        days = self.conf.engine.execution_purge_after_days
        interval = self.conf.engine.execution_purge_interval
        if not days:
            self.purge_marker = None
            return interval
        before = timeutils.utcnow(True) - datetime.timedelta(days=days)
        result = db_purge.purge_executions(
            context, before,
            batch_size=self.conf.engine.execution_purge_batch_size,
            marker=self.purge_marker, max_batches=1)
        if result.deleted:
            LOG.info('Purge: %d executions finished before %s deleted '
                     '(%d old ones kept)', result.deleted,
                     before.isoformat(timespec='seconds'),
                     result.scanned - result.deleted)
        self.purge_marker = result.marker
        return interval if result.complete else PURGE_BATCH_PAUSE
