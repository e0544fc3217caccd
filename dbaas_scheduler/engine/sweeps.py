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
"""

import dataclasses
import datetime

from oslo_log import log as logging

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler.engine import dispatcher

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class SweepResult:
    recast: int
    resumed: int
    expired_services: int


def sweep(context, worker_api, conf, now):
    """One pass of every sweep; returns what it did."""
    stale_before = now - datetime.timedelta(
        seconds=conf.engine.dispatch_timeout)
    batch = conf.engine.batch_size
    per_message = conf.engine.executions_per_message

    recast = 0
    while True:
        ids = db_api.claim_waiting_executions(context, now, stale_before,
                                              batch)
        if ids:
            LOG.info('Casting %d executions again that no worker claimed '
                     'within %ss', len(ids), conf.engine.dispatch_timeout)
            recast += len(dispatcher.cast_executions(
                worker_api, context, ids, per_message))
        if len(ids) < batch:
            break

    resumed = 0
    while True:
        expired = db_api.reclaim_expired_leases(context, now, batch)
        for execution_id, owner in expired:
            LOG.warning('Execution %s: the lease of worker %s expired; '
                        'another worker will resume it', execution_id, owner)
        if expired:
            resumed += len(dispatcher.cast_executions(
                worker_api, context, [e for e, _ in expired], per_message))
        if len(expired) < batch:
            break

    expired_services = db_services.delete_expired_services(
        context, now - datetime.timedelta(seconds=conf.service_expiry))
    return SweepResult(recast, resumed, expired_services)
