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
"""WSGI entry point of the REST API, for uWSGI, mod_wsgi and the like.

``application`` reads the configuration files named by
``DBAAS_SCHEDULER_CONFIG_FILES`` (comma-separated) or, by default, those
oslo.config finds for the project (``/etc/dbaas-scheduler/...``).
"""

import os

from oslo_config import cfg

# First: select the threading backend and keep eventlet out, as the
# programs do, before anything imports oslo.messaging.
import dbaas_scheduler.cmd  # noqa: F401
from dbaas_scheduler.api import service  # noqa: I100,H306
from dbaas_scheduler import config
from dbaas_scheduler.db import api as db_api


def init_application():
    files = os.environ.get('DBAAS_SCHEDULER_CONFIG_FILES')
    config.parse_args(cfg.CONF, [], default_config_files=(
        [f for f in files.split(',') if f] if files else None))
    db_api.configure(cfg.CONF)
    return service.make_application(cfg.CONF)


application = init_application()
