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
"""The all-in-one service: API, engine and worker in one process.

With ``rpc_transport = none`` (the default of dbaas-scheduler-all) the
engine, and the API's manual runs, hand executions to the worker in
memory, and with the default SQLite database under ``state_path`` the
whole service runs from one command on a fresh machine.  Each part keeps
its own row in the service table.
"""

from oslo_service import service

from dbaas_scheduler.api import service as api_service
from dbaas_scheduler.engine import service as engine_service
from dbaas_scheduler.worker import service as worker_service


class AllInOneService(service.Service):
    """Starts the worker, the engine, then the API; stops them in reverse."""

    def __init__(self, conf):
        super().__init__()
        self.parts = [worker_service.WorkerService(conf),
                      engine_service.EngineService(conf),
                      api_service.APIService(conf)]

    def start(self):
        super().start()
        for part in self.parts:
            part.start()

    def stop(self, graceful=True):
        for part in reversed(self.parts):
            part.stop(graceful)
        super().stop(graceful)

    def wait(self):
        for part in self.parts:
            part.wait()

    def reset(self):
        for part in self.parts:
            part.reset()
