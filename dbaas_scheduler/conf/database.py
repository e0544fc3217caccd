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
"""The ``[database]`` group: oslo.db's options with our embedded default."""

from oslo_config import cfg
from oslo_db import options as oslo_db_options

# Interpolated by oslo.config against [DEFAULT] state_path, so that with no
# configuration at all the service runs on SQLite in its state directory.
DEFAULT_CONNECTION = 'sqlite:///$state_path/dbaas_scheduler.sqlite'


# A worker uses up to [worker] pool_size + poll_concurrency connections at
# once (16 + 8 by default), more than oslo.db's default pool of 5 (+10
# overflow): connections would be opened and dropped all the time.
DEFAULT_MAX_POOL_SIZE = 20
DEFAULT_MAX_OVERFLOW = 20


def update_library_defaults():
    """Make oslo.db's option objects carry our defaults.

    Used by the sample config generator (``oslo.config.opts.defaults``) so
    the generated file shows the defaults the service really uses.
    """
    cfg.set_defaults(oslo_db_options.database_opts,
                     connection=DEFAULT_CONNECTION,
                     max_pool_size=DEFAULT_MAX_POOL_SIZE,
                     max_overflow=DEFAULT_MAX_OVERFLOW)


def register_opts(conf):
    oslo_db_options.set_defaults(conf, connection=DEFAULT_CONNECTION,
                                 max_pool_size=DEFAULT_MAX_POOL_SIZE,
                                 max_overflow=DEFAULT_MAX_OVERFLOW)


def list_opts():
    return {'database': oslo_db_options.database_opts}
