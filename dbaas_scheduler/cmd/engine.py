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
"""dbaas-scheduler-engine: dispatches due backups to the workers."""

from oslo_config import cfg

from dbaas_scheduler.cmd import common
from dbaas_scheduler import config
from dbaas_scheduler import cron
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.engine import service as engine_service
from dbaas_scheduler import service

CONF = cfg.CONF


BINARY = 'dbaas-scheduler-engine'


def main(argv=None):
    return common.run(BINARY, _main, argv)


def _main(argv):
    config.parse_args(CONF, argv)
    cron.use_engine(CONF.cron_engine)
    if CONF.rpc_transport == 'none':
        raise common.StartupRefused(reason=(
            'dbaas-scheduler-engine casts executions to workers over '
            'oslo.messaging; rpc_transport = none only works in '
            'dbaas-scheduler-all, where engine and worker share a '
            'process'))
    common.check_database(CONF, BINARY, schema=True)
    common.check_transport(CONF)
    db_api.configure(CONF)
    return service.launch(CONF, engine_service.EngineService(CONF))
