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
"""Command-line and configuration-file parsing shared by the programs."""

from oslo_log import log as logging

from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import version

PROJECT = 'dbaas-scheduler'


def prepare(conf, command_line=False):
    """Register our options and oslo.log's on ``conf``, with our defaults.

    What :func:`parse_args` does before it parses, for a program whose
    command line another library parses (``dbaas-scheduler-status``).
    """
    dbaas_conf.register_opts(conf)
    logging.register_options(conf)
    # Programs report schema upgrades themselves; alembic's per-step INFO
    # lines would only repeat them.
    logging.set_defaults(default_log_levels=(
        logging.get_default_log_levels() + ['alembic=WARN']))
    if command_line:
        conf.set_default('use_stderr', True)


def parse_args(conf, argv, default_config_files=None, command_line=False):
    """Register our options and oslo.log's on ``conf`` and parse ``argv``.

    With ``command_line``, logs go to standard error unless configured
    otherwise, so that what a command prints on standard output is only its
    answer.

    ``argv`` excludes the program name.  Configuration files default to
    oslo.config's search for ``dbaas-scheduler.conf`` (``/etc/dbaas-scheduler``
    and friends); with none found, every option has its default: the
    embedded SQLite database under ``state_path``.
    """
    prepare(conf, command_line)
    conf(argv, project=PROJECT, version=version.version_string(),
         default_config_files=default_config_files)
    logging.setup(conf, PROJECT)
