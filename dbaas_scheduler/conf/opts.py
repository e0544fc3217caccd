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
"""Entry points for oslo-config-generator: every option we declare.

``list_opts`` is the ``oslo.config.opts`` entry point and
``update_library_defaults`` the ``oslo.config.opts.defaults`` one, so the
generated sample shows the defaults the service really runs with.
"""

from oslo_config import cfg
from oslo_policy import opts as policy_opts

from dbaas_scheduler import conf
from dbaas_scheduler.conf import database


def list_opts():
    """Return ``[(group, [opts])]`` for every dbaas-scheduler option."""
    return [(group, opts)
            for module in conf.OPTION_MODULES
            for group, opts in module.list_opts().items()]


def update_library_defaults():
    database.update_library_defaults()
    # As dbaas_scheduler.policy sets it: the legacy rules hold until an
    # operator turns the new defaults on.
    policy_opts.set_defaults(cfg.ConfigOpts(), enforce_new_defaults=False)
