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
"""dbaas-scheduler-api: the REST API served by cheroot."""

from oslo_config import cfg

from dbaas_scheduler.api import service as api_service
from dbaas_scheduler.cmd import auth_checks
from dbaas_scheduler.cmd import common
from dbaas_scheduler import config
from dbaas_scheduler import cron
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import service

CONF = cfg.CONF


BINARY = 'dbaas-scheduler-api'


def main(argv=None):
    return common.run(BINARY, _main, argv)


def _main(argv):
    config.parse_args(CONF, argv)
    cron.use_engine(CONF.cron_engine)
    auth_checks.check_authentication(CONF)
    common.check_api_port(CONF)
    common.check_database(CONF, BINARY, schema=True)
    common.check_transport(CONF)
    db_api.configure(CONF)
    return service.launch(CONF, api_service.APIService(CONF))
