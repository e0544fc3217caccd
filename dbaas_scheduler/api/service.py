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
"""The REST API as a service: cheroot serving the WSGI application.

For small installs and the all-in-one process; large ones run
``dbaas_scheduler.wsgi.api:application`` under uWSGI or mod_wsgi instead.
"""

import threading

from cheroot import wsgi as cheroot_wsgi
from oslo_log import log as logging

from dbaas_scheduler.api import deploy
from dbaas_scheduler import policy
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler import service

LOG = logging.getLogger(__name__)

BINARY = 'dbaas-scheduler-api'

# Connections the kernel holds while every server thread is busy.
# cheroot's default, 5, reset the connections of 20 concurrent clients.
LISTEN_BACKLOG = 128


def make_application(conf):
    """Everything the application needs in this process, then the app.

    The transport first: the RPC client of manual runs, one per
    application and shared by its server threads, is built on it.
    """
    rpcapi.check_upgrade_levels(conf)
    rpc.init(conf)
    policy.get_enforcer(conf)
    return deploy.deploy(conf, worker_api=rpcapi.WorkerAPI(conf))


class APIService(service.Service):
    """cheroot serving the application on ``[api] bind_host:bind_port``."""

    binary = BINARY

    def __init__(self, conf):
        super().__init__(conf)
        self.http_server = None
        self._thread = None

    def on_start(self):
        application = make_application(self.conf)
        address = (self.conf.api.bind_host, self.conf.api.bind_port)
        self.http_server = cheroot_wsgi.Server(
            address, application, numthreads=self.conf.api.server_threads,
            server_name='dbaas-scheduler-api',
            request_queue_size=LISTEN_BACKLOG)
        self.http_server.prepare()
        self._thread = threading.Thread(target=self.http_server.serve,
                                        name='api-server', daemon=True)
        self._thread.start()
        LOG.info('Serving the REST API on http://%s:%d/', *address)

    def on_stop(self):
        if self.http_server is not None:
            self.http_server.stop()
            self._thread.join()
