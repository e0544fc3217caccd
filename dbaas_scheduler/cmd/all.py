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
"""dbaas-scheduler-all: the whole service in one process.

With no configuration at all it runs on SQLite under ``state_path``, hands
executions from engine to worker in memory (``rpc_transport = none``) and
serves the REST API without authentication (``auth_strategy = noauth``)
on 127.0.0.1; the database schema is created or upgraded at start.  A
configuration written for a cloud -- one with ``[keystone_authtoken]`` --
authenticates with Keystone unless ``auth_strategy`` says otherwise, and
noauth off a loopback address is refused unless ``[api]
allow_unauthenticated_public_access`` allows it.
"""

import os

from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import service as oslo_service
from sqlalchemy.engine import url as sa_url

from dbaas_scheduler.api import service as api_service
from dbaas_scheduler.cmd import auth_checks
from dbaas_scheduler.cmd import common
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import config
from dbaas_scheduler import cron
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.engine import service as engine_service
from dbaas_scheduler.objects import access
from dbaas_scheduler import service
from dbaas_scheduler.worker import service as worker_service

CONF = cfg.CONF
LOG = logging.getLogger(__name__)


class AllInOneService(oslo_service.Service):
    """A worker, an engine and the API as one service of one process.

    Engine and worker must share the process for the in-memory hand-over
    to reach the worker.  Each part keeps its own row in the service
    table.  The worker starts first, so that the engine's first casts find
    it, and the API last; they stop the other way round.
    """

    binary = 'dbaas-scheduler-all'

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


BINARY = 'dbaas-scheduler-all'


def main(argv=None):
    return common.run(BINARY, _main, argv)


def _main(argv):
    dbaas_conf.register_opts(CONF)
    CONF.set_default('rpc_transport', 'none')
    CONF.set_default('auth_strategy', 'noauth')
    config.parse_args(CONF, argv)
    cron.use_engine(CONF.cron_engine)
    if (not auth_checks.auth_strategy_is_set(CONF)
            and auth_checks.keystone_configured(CONF)):
        LOG.info('Authenticating with Keystone: auth_strategy is not set '
                 'and the configuration has [keystone_authtoken].')
        CONF.set_default('auth_strategy', 'keystone')
    auth_checks.check_authentication(CONF)
    worker_service.check_configuration(CONF)
    # One all-in-one process per state directory: a second one would
    # share its SQLite database and fight over its API port.
    common.lock_state_directory(CONF, BINARY)
    common.check_api_port(CONF)
    common.check_local_backend(CONF)
    db_api.configure(CONF)
    common.check_database(CONF)
    common.check_transport(CONF)
    before = migration.version()
    migration.upgrade()
    if before != migration.version():
        LOG.info('Database schema upgraded from %s to %s',
                 before or '<empty>', migration.version())
    # The launcher forks: no database connection may cross the fork.
    db_api.get_engine().dispose()
    log_what_it_does(CONF)
    return service.launch(CONF, AllInOneService(CONF))


def log_what_it_does(conf):
    """Say where the data is, who may call the API and where it is.

    The all-in-one is what a newcomer starts first, with no configuration:
    the start log names the SQLite file to back up or remove, the backends
    a policy can use, the URL to call, and, at WARNING, that without
    authentication anyone who reaches that URL is an admin.
    """
    url = sa_url.make_url(conf.database.connection)
    if url.get_backend_name() == 'sqlite':
        data = ('SQLite file %s' % os.path.abspath(url.database)
                if url.database not in (None, '', ':memory:')
                else 'SQLite in memory (lost at exit)')
    else:
        data = common.masked_url(conf.database.connection)
    host = conf.api.bind_host
    api_url = 'http://%s:%d/' % ('[%s]' % host if ':' in host else host,
                                 conf.api.bind_port)
    default = access.default_backend(conf)
    backends = ', '.join(
        '%s (the default)' % name if name == default else name
        for name in access.enabled_backends(conf))
    instances = ', '.join(sorted(conf.local_backend.instances)) or 'none'
    LOG.info('%s: data in %s; REST API on %s; authentication: %s; '
             'backends: %s; local backend instances: %s',
             BINARY, data, api_url, conf.auth_strategy, backends, instances)
    if conf.auth_strategy == 'noauth':
        LOG.warning('Authentication is off (auth_strategy = noauth): every '
                    'request to %s acts as the admin of project admin, or '
                    'as whatever project and roles its X-Project-Id and '
                    'X-Roles headers name. Serve it only where every '
                    'client is trusted.', api_url)
