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
on 127.0.0.1; the database schema is created or upgraded at start.
"""

import sys

from oslo_config import cfg
from oslo_log import log as logging
from oslo_service import service

from dbaas_scheduler import all_in_one
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import config
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration

CONF = cfg.CONF
LOG = logging.getLogger(__name__)


def main(argv=None):
    dbaas_conf.register_opts(CONF)
    CONF.set_default('rpc_transport', 'none')
    CONF.set_default('auth_strategy', 'noauth')
    config.parse_args(CONF, sys.argv[1:] if argv is None else argv)
    db_api.configure(CONF)
    before = migration.version()
    migration.upgrade()
    if before != migration.version():
        LOG.info('Database schema upgraded from %s to %s',
                 before or '<empty>', migration.version())
    # The launcher forks: no database connection may cross the fork.
    db_api.get_engine().dispose()
    # Engine and worker are parts of one service, so they run in the same
    # process and the in-memory hand-over reaches the worker.
    launcher = service.launch(CONF, all_in_one.AllInOneService(CONF),
                              restart_method='mutate')
    return launcher.wait()
