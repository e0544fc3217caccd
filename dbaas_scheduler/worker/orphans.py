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
"""Taking over at once the executions of a worker of this host that died.

A worker killed (``SIGKILL``, the OOM killer, a crash of its process) keeps
the leases of its executions until they expire, ``[worker]
lease_duration`` seconds later: nobody else can tell it is dead before.
A worker on the same host can: every service row records its process's
:class:`~dbaas_scheduler.servicegroup.ProcessIdentity` (boot id, pid
namespace, pid, start time), and on this boot, in this pid namespace,
``/proc`` says for certain whether that process still runs.

So a worker, when it starts and then every lease renewal interval, looks
at the service rows of its own ``[DEFAULT] host``.  For each row whose
process is GONE, it takes the row's RUNNING executions over, each with a
conditional update on the dead owner's fencing token
(``db_worker.take_over_execution``), under one new claim id, and resumes
them as it resumes any claim: a started backup is watched (the ``local``
backend's dump job outlives the worker), one not started yet is looked
for by its tag, then created.  Then the row is deleted.  A row whose
process is alive, runs on another boot or in another pid namespace (a
container), or has no identity (written before the upgrade) is left
alone: its executions are resumed once their leases expire, as before.
"""

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.db import services as db_services
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import servicegroup

LOG = logging.getLogger(__name__)


def gone_services(rows, me):
    """The rows of ``rows`` (not ``me``) whose process is certainly gone."""
    gone = []
    for row in rows:
        if row.id == me or not row.process_identity:
            continue
        identity = servicegroup.ProcessIdentity.parse(row.process_identity)
        if identity is not None and identity.judge() == servicegroup.GONE:
            gone.append(row)
    return gone


class OrphanTaker:
    """Takes over the executions of dead workers of this host."""

    def __init__(self, conf, owner, start_claimed):
        self.conf = conf
        # The worker's service id, and what starts the executions taken
        # over (``ExecutionRunner.start_claimed``).
        self.owner = owner
        self.start_claimed = start_claimed

    def run_pass(self, context):
        """One look at this host's service rows; executions taken over."""
        rows = db_services.list_host_services(context, self.conf.host)
        taken = []
        for row in gone_services(rows, self.owner):
            taken.extend(self.take_over(context, row))
        return taken

    def take_over(self, context, row):
        """Take ``row``'s RUNNING executions, then delete ``row``."""
        claims = db_worker.list_running_claims(context, row.id)
        claim_id = uuidutils.generate_uuid()
        now = timeutils.utcnow(True)
        taken = [execution_id
                 for execution_id, old_claim in sorted(claims.items())
                 if db_worker.take_over_execution(
                     context, execution_id, old_claim, self.owner,
                     claim_id, now, self.conf.worker.lease_duration)]
        if claims:
            LOG.warning('Worker %s (pid %s) on this host is gone; took over '
                        '%d of its %d running executions: %s', row.id,
                        row.pid, len(taken), len(claims),
                        ', '.join(taken[:20]) or '-')
        if taken:
            self.start_claimed(context, taken, claim_id)
        if db_services.delete_service_of(context, row.id,
                                         row.process_identity):
            LOG.info('Deleted the service row %s of %s (pid %s), whose '
                     'process is gone', row.id, row.binary, row.pid)
        return taken
