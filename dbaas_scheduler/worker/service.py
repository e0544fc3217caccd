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
memory instead.  The poller loop watches every started backup in batches.
On a graceful stop the worker gives its running executions' leases up, so
that the engine's sweep hands them to another worker at once.
"""

from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging
from oslo_utils import timeutils

from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import looping_service
from dbaas_scheduler import rpc
from dbaas_scheduler.worker import lifecycle
from dbaas_scheduler.worker import manager
from dbaas_scheduler.worker import poller

LOG = logging.getLogger(__name__)

BINARY = 'dbaas-scheduler-worker'


class WorkerService(looping_service.LoopingService):
    """Takes executions and watches their backups to the end."""

    binary = BINARY

    def __init__(self, conf):
        super().__init__(conf)
        self.runner = lifecycle.ExecutionRunner(conf, self.service_id)
        self.poller = None
        self.server = None

    @property
    def topic(self):
        return self.conf.worker.topic

    def on_start(self):
        pool_size = self.conf.worker.pool_size
        endpoint = manager.WorkerManager(self.runner)
        self.poller = poller.BackupPoller(self.conf, self.runner)
        if self.conf.rpc_transport == 'none':
            rpc.register_local_endpoint(self.topic, endpoint, pool_size)
            return
        rpc.init(self.conf)
        # A worker holds at most pool_size messages being handled (its pool
        # blocks the listener when full, see rpc.BoundedThreadPoolExecutor)
        # and pool_size more that RabbitMQ has sent but it has not taken
        # yet.  The driver's options exist once the transport is loaded,
        # and the listener's connection reads them when it opens.
        try:
            self.conf.set_override('rabbit_qos_prefetch_count', pool_size,
                                   group='oslo_messaging_rabbit')
        except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
            LOG.debug('Not a RabbitMQ transport: no prefetch limit set')
        target = messaging.Target(topic=self.topic, server=self.conf.host)
        self.server = rpc.get_server(target, [endpoint])
        self.server.start(override_pool_size=pool_size)

    def loops(self):
        return [('poller', self._poll)]

    def _poll(self, context):
        started = timeutils.utcnow(True)
        checked = self.poller.run_pass(context)
        if checked:
            LOG.debug('Poll pass: checked %d running backups in %.2fs',
                      checked,
                      (timeutils.utcnow(True) - started).total_seconds())
        return self.conf.worker.poll_interval

    def on_stop(self):
        if self.server is not None:
            self.server.stop()
            self.server.wait()

    def after_stop(self):
        self.runner.recorder.stop()
        if self.poller is not None:
            self.poller.close()
        try:
            released = db_worker.expire_leases(
                self.registration.context, self.service_id,
                timeutils.utcnow(True))
            if released:
                LOG.info('Gave up the leases of %d running executions; '
                         'another worker resumes them', released)
        except Exception:
            LOG.exception('Could not give up the leases of service %s; '
                          'they expire on their own', self.service_id)
