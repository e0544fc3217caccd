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
"""The worker's RPC endpoint (topic ``[worker] topic``).

Kept thin: each method hands its executions to the
:class:`~dbaas_scheduler.worker.lifecycle.ExecutionRunner`.  The client side
is ``dbaas_scheduler.rpcapi.WorkerAPI``; the versions must stay equal.
"""

import oslo_messaging as messaging


class WorkerManager:
    """Endpoint of ``backup_database_instance(s)`` casts.

    Version history: see ``rpcapi.WorkerAPI``.
    """

    RPC_API_VERSION = '1.2'

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, runner, restorer=None):
        self.runner = runner
        self.restorer = restorer

    def backup_database_instance(self, context, execution_id):
        """Run one execution (a cast: nothing is returned)."""
        self.runner.run(context, [execution_id])

    def backup_database_instances(self, context, execution_ids):
        """Run several executions, each claimed on its own (1.1)."""
        self.runner.run(context, execution_ids)

    def restore_backup(self, context, restore_id):
        """Run one restore to its end (a cast: nothing is returned; 1.2)."""
        self.restorer.run(context, restore_id)
