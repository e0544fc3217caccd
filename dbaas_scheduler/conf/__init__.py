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
"""Registration of every dbaas-scheduler option group on a ConfigOpts.

Each option group lives in its own module with ``register_opts(conf)`` and
``list_opts()``; this package ties them together.  Nothing is registered on
import: code receives the ``ConfigOpts`` it should read as an argument, and
whoever makes that object registers the options on it -- the console
scripts in :mod:`dbaas_scheduler.cmd` (through ``config.parse_args``) on
the process-wide ``cfg.CONF``, tests and other callers on their own.
"""

from dbaas_scheduler.conf import api
from dbaas_scheduler.conf import coverage
from dbaas_scheduler.conf import database
from dbaas_scheduler.conf import default
from dbaas_scheduler.conf import engine
from dbaas_scheduler.conf import local_backend
from dbaas_scheduler.conf import metrics
from dbaas_scheduler.conf import notifications
from dbaas_scheduler.conf import quota
from dbaas_scheduler.conf import service_credentials
from dbaas_scheduler.conf import trove
from dbaas_scheduler.conf import upgrade_levels
from dbaas_scheduler.conf import verify
from dbaas_scheduler.conf import worker

# Every module that declares an option group, in sample-config order.
OPTION_MODULES = (default, database, api, engine, worker, trove,
                  local_backend, service_credentials, upgrade_levels,
                  notifications, metrics, quota, coverage, verify)


def register_opts(conf):
    """Register every dbaas-scheduler option on ``conf`` (idempotent)."""
    for module in OPTION_MODULES:
        module.register_opts(conf)
