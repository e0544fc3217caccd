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
"""The dbaas-scheduler-worker service: the RPC server and the poller loop.

The RPC server (threading executor) runs the claims and backup starts on
``[worker] pool_size`` threads and prefetches no more messages than that, so
one worker does not hoard a burst that other workers could serve.  With
``rpc_transport = none`` (dbaas-scheduler-all) the endpoint is served in
memory instead.  The loops: the poller watches every started backup in
batches (and retries deleting the backups this worker made under a claim
it lost); the lease keeper renews the leases of every claim the worker
holds; the reconciler deletes extra backups found at the backend; the
expiry sweep (``worker/expiry.py``) deletes the backups whose retention
grace is over; the orphan taker (``worker/orphans.py``) takes over at
once the executions of a worker of this host that died; the intake
(``worker/intake.py``) stops the RPC server while the database is
unreachable, so that casts wait on the broker instead of failing here,
and starts a new one once it answers.

On a graceful stop (SIGTERM, a first Ctrl-C) the worker takes no new
message, waits up to ``[worker] stop_wait`` seconds for its backups whose
end the backend reports (the ``local`` backend's dump jobs) and records
them, then gives the leases of the rest up and casts their executions to
the workers' topic, so that another worker, or this one started again,
resumes them at once.

The parts of a worker are made in one place, :func:`build_parts`, and each
is given the others it uses.
"""

import dataclasses
import threading
import time

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler import service
from dbaas_scheduler import stats
from dbaas_scheduler.worker import expiry
from dbaas_scheduler.worker import intake
from dbaas_scheduler.worker import leases
from dbaas_scheduler.worker import lifecycle
from dbaas_scheduler.worker import manager
from dbaas_scheduler.worker import orphans
from dbaas_scheduler.worker import outcome
from dbaas_scheduler.worker import overlap
from dbaas_scheduler.worker import poller
from dbaas_scheduler.worker import reconciler
from dbaas_scheduler.worker import recorder
from dbaas_scheduler.worker import strays
from dbaas_scheduler.worker import verification

LOG = logging.getLogger(__name__)

BINARY = 'dbaas-scheduler-worker'

# Seconds between two looks at the backups a stopping worker waits for.
STOP_POLL = 0.1
# Seconds of oslo.service's graceful_shutdown_timeout left for the rest
# of the stop once the wait for backups is over.
STOP_MARGIN = 5.0


def check_configuration(conf):
    """Raise ``InvalidConfiguration`` if the worker cannot run with ``conf``.

    A backend whose calls may outlast ``[worker] lease_duration`` could
    make a backup after another worker took its execution over.
    """
    lifecycle.check_backend_timeouts(conf)


@dataclasses.dataclass(frozen=True)
class Parts:
    """The parts of one worker process (see :func:`build_parts`)."""

    keeper: leases.LeaseKeeper
    recorder: recorder.BackupIdRecorder
    compensator: strays.Compensator
    outcome: outcome.Outcomes
    runner: lifecycle.ExecutionRunner
    poller: poller.BackupPoller
    orphans: orphans.OrphanTaker

    def close(self):
        """Stop the recorder's thread and the poller's pool."""
        self.recorder.stop()
        self.poller.close()


def build_parts(conf, owner, ready=None, database_unreachable=None):
    """The parts of a worker whose executions are owned by ``owner``.

    ``owner`` is the id of the worker's service row; ``ready`` (a
    ``threading.Event``), if given, holds claims back until it is set.
    Each part gets the parts it calls, and none gets the runner: the
    overlap judge is handed ``runner.start_taken_over`` when it is asked,
    the orphan taker ``runner.start_claimed``.  ``database_unreachable``
    is the intake's (``worker/intake.py``), told of claims the database
    failed.
    """
    keeper = leases.LeaseKeeper(conf)
    backup_ids = recorder.BackupIdRecorder(owner)
    compensator = strays.Compensator(conf)
    outcomes = outcome.Outcomes(conf, keeper)
    watcher = poller.BackupPoller(conf, owner, keeper, outcomes)
    runner = lifecycle.ExecutionRunner(
        conf, owner, keeper, backup_ids, compensator, outcomes,
        overlap.OverlapJudge(conf, owner, keeper),
        # A resumed backup is looked at once (the local backend then
        # watches its job, which an earlier worker may have started).
        check_soon=watcher.backup_may_be_finished, ready=ready,
        database_unreachable=database_unreachable)
    return Parts(keeper, backup_ids, compensator, outcomes, runner, watcher,
                 orphans.OrphanTaker(conf, owner, runner.start_claimed))


class WorkerService(service.LoopingService):
    """Takes executions and watches their backups to the end."""

    binary = BINARY
    stats_metrics = stats.WORKER_METRICS

    def __init__(self, conf):
        super().__init__(conf)
        # In the launcher's process: a configuration that cannot fence the
        # backend's calls stops the program before it forks.
        check_configuration(conf)
        # Made at start: they own executions in the name of this process.
        self.parts = None
        self.reconciler = reconciler.Reconciler(conf)
        self.expiry = expiry.ExpirySweeper(conf)
        self.intake = None
        self._endpoint = None
        self._next_full_pass = 0.0

    @property
    def topic(self):
        return self.conf.worker.topic

    def on_start(self):
        pool_size = self.conf.worker.pool_size
        # Other workers judge whether the owner of an execution is alive by
        # its service row: no claim before it exists (below).
        registered = threading.Event()
        if self.conf.rpc_transport != 'none':
            self.intake = intake.Intake(
                self.conf, self._serve_casts, self.stop_servers,
                self._recast, db_api.ping, wake=lambda: self.wake('intake'))
        self.parts = build_parts(
            self.conf, self.service_id, ready=registered,
            database_unreachable=self.intake and
            self.intake.database_unreachable)
        self._endpoint = manager.WorkerManager(
            self.parts.runner,
            verification.RestoreDispatcher(self.conf, self.service_id))
        self.parts.poller.wake = lambda: self.wake('poller')
        self.parts.poller.stopping = self._stopping.is_set
        backends.add_finish_listener(self.parts.poller.backup_may_be_finished)
        if self.conf.rpc_transport == 'none':
            rpc.register_local_endpoint(self.topic, self._endpoint, pool_size)
        else:
            rpc.init(self.conf)
            self._serve_casts()
        # Registered once it listens: a row tells that the worker takes
        # messages (tools and tests wait for it).
        self._retrying('registration')(self.registration.heartbeat)
        registered.set()

    def _serve_casts(self):
        if self._stopping.is_set():
            return
        # A worker holds at most pool_size messages being handled (its
        # pool blocks the listener when full, see
        # rpc.BoundedThreadPoolExecutor) and pool_size more that RabbitMQ
        # has sent but it has not taken yet.
        self.serve_rpc([self._endpoint], pool_size=self.conf.worker.pool_size)

    def _recast(self, execution_ids):
        rpcapi.WorkerAPI(self.conf).backup_database_instances(
            self.registration.context, execution_ids)

    def loops(self):
        loops = [('poller', self._poll), ('leases', self._renew_leases),
                 ('reconciler', self._reconcile),
                 ('expiry', self._sweep_expired),
                 ('orphans', self._take_orphans)]
        if self.intake is not None:
            loops.append(('intake', self.intake.run_pass))
        return loops

    def loop_failed(self, name, error):
        # Any loop may be the first to find the database away (the
        # heartbeat within heartbeat_interval): no cast is taken meanwhile.
        if (self.intake is not None
                and isinstance(error, db_api.UNREACHABLE)):
            self.intake.database_unreachable(error)

    def _take_orphans(self, context):
        # The first pass runs as the worker starts: a worker started again
        # after being killed resumes what it had at once.
        self.parts.orphans.run_pass(context)
        return self.parts.keeper.renew_interval

    def _poll(self, context):
        # A full pass every poll_interval; in between, woken by a backend
        # that reported a backup ended, a pass over those backups only.
        watcher = self.parts.poller
        now = time.monotonic()
        if now < self._next_full_pass:
            due = watcher.take_due()
            if due:
                watcher.run_due(context, due)
            return self._poll_delay()
        started = timeutils.utcnow(True)
        watcher.take_due()
        checked = watcher.run_pass(context)
        if checked:
            LOG.debug('Poll pass: checked %d running backups in %.2fs',
                      checked,
                      (timeutils.utcnow(True) - started).total_seconds())
        self.parts.compensator.run_pass(context)
        self._next_full_pass = now + self.conf.worker.poll_interval
        return self._poll_delay()

    def _poll_delay(self):
        delay = max(0.0, self._next_full_pass - time.monotonic())
        if self.parts.poller.has_due():
            # Reported, but not recorded yet: look again soon.
            delay = min(delay, poller.DUE_RETRY)
        return delay

    def _renew_leases(self, context):
        keeper = self.parts.keeper
        renewed, lost = keeper.renew(context)
        if renewed or lost:
            LOG.debug('Renewed %d leases (%d claims no longer held)',
                      renewed, lost)
        return keeper.renew_interval

    def _reconcile(self, context):
        self.reconciler.run_pass(context)
        verification.delete_leftover_scratch(self.conf, context)
        return self.reconciler.pass_interval

    def _sweep_expired(self, context):
        self.expiry.run_pass(context)
        return self.expiry.pass_interval

    def drain(self):
        """Take no new work; let what ends soon end here (stop_wait)."""
        self.stop_servers()
        if self.parts is None:
            return
        wait = self.conf.worker.stop_wait
        timeout = getattr(self.conf, 'graceful_shutdown_timeout', 0)
        if timeout:
            wait = min(wait, max(0.0, timeout - STOP_MARGIN))
        context = self.registration.context
        waiting = self._finishing_soon(context)
        if not waiting or wait <= 0:
            return
        LOG.info('Stopping: waiting up to %.1fs for %d running backups to '
                 'finish: %s', wait, len(waiting),
                 ', '.join(sorted(waiting)[:20]))
        deadline = time.monotonic() + wait
        while waiting and time.monotonic() < deadline:
            time.sleep(STOP_POLL)
            waiting = self._finishing_soon(context)
        if waiting:
            LOG.info('Stopping: %d backups still running after %.1fs are '
                     'handed back', len(waiting), wait)
        else:
            LOG.info('Stopping: every backup waited for has finished')

    def _finishing_soon(self, context):
        """Executions of this worker whose backend will report their end."""
        waiting = set()
        for execution, policy in db_worker.list_backups_in_flight(
                context, self.service_id):
            if policy is None:
                continue
            try:
                backend = loader.get_backend(self.conf, policy.backend)
            except loader.UnknownBackend:
                continue
            if backend.reports_finish:
                waiting.add(execution.id)
        return waiting

    def after_stop(self):
        # A server the intake loop started again while the service was
        # being stopped.
        self.stop_servers()
        if self.parts is None:
            return
        self.parts.recorder.stop()
        backends.remove_finish_listener(
            self.parts.poller.backup_may_be_finished)
        self.parts.poller.close()
        try:
            released = self.parts.keeper.release_all(
                self.registration.context)
        except Exception:
            LOG.exception('Could not give up the leases of service %s; '
                          'they expire on their own', self.service_id)
            return
        if not released:
            return
        LOG.info('Gave up the leases of %d running executions; another '
                 'worker resumes them: %s', len(released),
                 ', '.join(sorted(released)[:20]))
        if self.conf.rpc_transport == 'none':
            # No other worker to tell; the engine's sweep hands them over.
            return
        try:
            # The worker that takes the message resumes them now, rather
            # than at the engine's next sweep; a second cast by the sweep
            # is dropped by the claim.
            rpcapi.WorkerAPI(self.conf).backup_database_instances(
                self.registration.context, sorted(released))
        except Exception as exc:
            LOG.warning('Could not cast the executions given up (%s); the '
                        'engine\'s sweep hands them over', exc)
