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
"""Build the REST API's WSGI application for a WSGI server to load.

uWSGI, mod_wsgi and the like load :mod:`dbaas_scheduler.wsgi.api`, whose
``application`` is what :func:`init_application` returns. The server
gives no command line, so the configuration files come from the
environment: ``OS_DBAAS_SCHEDULER_CONFIG_FILES`` (or the older
``DBAAS_SCHEDULER_CONFIG_FILES``), a comma-separated list read in order;
with neither set, the files oslo.config finds for the project
(``/etc/dbaas-scheduler/dbaas-scheduler.conf`` and friends).
"""

import os

from oslo_config import cfg

# First: select the threading backend and keep eventlet out, as the
# programs do, before anything imports oslo.messaging.
import dbaas_scheduler.cmd  # noqa: F401
from dbaas_scheduler.api import service  # noqa: I100,H306
from dbaas_scheduler import config
from dbaas_scheduler import cron
from dbaas_scheduler.db import api as db_api

# The variable of OpenStack's WSGI applications (OS_<PROJECT>_...), then
# the one this project documented first.
CONFIG_FILES_ENV = 'OS_DBAAS_SCHEDULER_CONFIG_FILES'
OLD_CONFIG_FILES_ENV = 'DBAAS_SCHEDULER_CONFIG_FILES'


def config_files(environ=None):
    """The configuration files the environment names, or None for default.

    The first of the two variables that is set wins, even if empty.
    """
    environ = os.environ if environ is None else environ
    for name in (CONFIG_FILES_ENV, OLD_CONFIG_FILES_ENV):
        if name in environ:
            return [path.strip() for path in environ[name].split(',')
                    if path.strip()]
    return None


def init_application(conf=None, environ=None):
    """Read the configuration and return the WSGI application of the API.

    Called once per process (under uWSGI, with ``lazy-apps``, once per
    worker), so that database pools and broker connections are not shared
    across a fork.
    """
    conf = cfg.CONF if conf is None else conf
    config.parse_args(conf, [], default_config_files=config_files(environ))
    cron.use_engine(conf.cron_engine)
    db_api.configure(conf)
    return service.make_application(conf)
