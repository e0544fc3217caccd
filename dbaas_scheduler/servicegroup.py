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
"""Service rows: each engine, worker and API process registers and beats.

Every process has its own row (several engines may share a host), whose id
is also what a worker writes as the ``owner`` of the executions it runs.
A registration is made in the process it stands for, after the launcher's
fork: a child started again after a crash gets a new id and a new row.

Each heartbeat also writes the process's own metrics (those of
:mod:`dbaas_scheduler.stats` the service names) as JSON into the row's
``stats``, for the API's metrics endpoint to read.
"""

import datetime
import json
import os

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.db import services as db_services
from dbaas_scheduler import stats as process_stats

LOG = logging.getLogger(__name__)


class ServiceRegistration:
    """This process's row in the service table."""

    def __init__(self, conf, context, binary, topic=None, stats_metrics=(),
                 registry=None):
        self.conf = conf
        self.context = context
        self.binary = binary
        self.topic = topic
        self.service_id = uuidutils.generate_uuid()
        self.registered = False
        # The names of the process's metrics this row carries.
        self.stats_metrics = tuple(stats_metrics)
        self.registry = registry or process_stats.REGISTRY

    def stats(self):
        """The JSON of this service's metrics now; None if it has none."""
        if not self.stats_metrics:
            return None
        try:
            return json.dumps(self.registry.snapshot(self.stats_metrics),
                              separators=(',', ':'), sort_keys=True)
        except Exception:
            # Figures are never worth a missed heartbeat.
            LOG.exception('Could not serialise the metrics of %s',
                          self.service_id)
            return None

    def _values(self, now):
        return {'id': self.service_id, 'host': self.conf.host,
                'binary': self.binary, 'topic': self.topic,
                'pid': os.getpid(), 'started_at': now, 'heartbeat_at': now,
                'stats': self.stats()}

    def register(self):
        self._insert(timeutils.utcnow(True))
        self.registered = True
        LOG.info('Registered %s service %s on %s (pid %d)', self.binary,
                 self.service_id, self.conf.host, os.getpid())

    def _insert(self, now):
        try:
            db_services.register_service(self.context, self._values(now))
        except db_exc.DBDuplicateEntry:
            # The id is this process's alone, so the row is ours: an
            # earlier insert committed but its answer was lost with the
            # connection.  Stamp it instead of failing on every beat.
            db_services.update_service_heartbeat(
                self.context, self.service_id, now, stats=self.stats())

    def heartbeat(self):
        """Stamp the row; recreate it if it was expired while we were away.

        The row's ``stats`` are written anew with each beat.
        """
        now = timeutils.utcnow(True)
        if not self.registered:
            self.register()
        elif not db_services.update_service_heartbeat(
                self.context, self.service_id, now, stats=self.stats()):
            LOG.warning('Service row %s had expired; registering again',
                        self.service_id)
            self._insert(now)

    def unregister(self):
        if self.registered:
            db_services.delete_service(self.context, self.service_id)
            self.registered = False


def is_up(service, now, service_down_time):
    """A service is up if its last heartbeat is recent enough."""
    return (now - service.heartbeat_at
            <= datetime.timedelta(seconds=service_down_time))
