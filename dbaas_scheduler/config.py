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

import logging as std_logging
import re

from oslo_config import cfg
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
    check_values(conf)
    logging.setup(conf, PROJECT)
    quiet_pool_resets()


# What SQLAlchemy's pool logs, with a traceback at ERROR, when it cannot
# roll back a connection it takes back: the server or the network went
# away while the connection was out.  The pool discards the connection,
# and what was using it has its own error, handled (and logged) there.
_POOL_RESET = 'Exception during reset or similar'


class PoolResetFilter(std_logging.Filter):
    """SQLAlchemy's pool reset failure as one WARNING line.

    On the handlers: a database outage otherwise writes a traceback for
    each connection in use, from a library, about a connection nobody
    uses again -- noise beside the service's own one-line messages.
    """

    def filter(self, record):
        if (record.exc_info and record.name.startswith('sqlalchemy.pool')
                and str(record.msg).startswith(_POOL_RESET)):
            error = record.exc_info[1]
            record.msg = ('A database connection could not be reset and '
                          'was discarded: %s: %s')
            record.args = (type(error).__name__,
                           str(error).splitlines()[0] if str(error) else '')
            record.exc_info = record.exc_text = None
            record.levelno, record.levelname = (std_logging.WARNING,
                                                'WARNING')
        return True


def quiet_pool_resets(logger=None):
    """Put :class:`PoolResetFilter` on the handlers of ``logger`` (root)."""
    for handler in (logger or std_logging.getLogger()).handlers:
        if not any(isinstance(f, PoolResetFilter) for f in handler.filters):
            handler.addFilter(PoolResetFilter())


def check_values(conf):
    """Read every registered option once: a bad value is found at start.

    oslo.config converts a value when it is first read, which could be
    long after start (once the database schema was made), and its message
    names the value's origin as a Python repr.  Raises ``cfg.Error`` with
    ``[group] option in <file> is not valid: <why>``.
    """
    for key in conf:
        try:
            value = conf[key]
        except cfg.ConfigFileValueError as exc:
            raise _invalid(conf, None, key, exc)
        if not isinstance(value, cfg.ConfigOpts.GroupAttr):
            continue
        for name in value:
            try:
                value[name]
            except cfg.ConfigFileValueError as exc:
                raise _invalid(conf, key, name, exc)


# What Python says of a value int() or float() refuse, in words.
_NUMBER_ERRORS = (
    (re.compile(r"^invalid literal for int\(\) with base 10: (.*)$"),
     '%s is not a whole number'),
    (re.compile(r"^could not convert string to float: (.*)$"),
     '%s is not a number'),
)
# The file oslo.config names in its message, inside a LocationInfo repr.
_ORIGIN = re.compile(r"detail='([^']*)'")


def _invalid(conf, group, name, exc):
    text = str(exc)
    origin = _ORIGIN.search(text.partition(' is not valid: ')[0])
    why = text.partition(' is not valid: ')[2] or text
    for pattern, words in _NUMBER_ERRORS:
        match = pattern.match(why)
        if match:
            why = words % match.group(1)
    return cfg.Error('[%s] %s%s is not valid: %s' % (
        group or 'DEFAULT', name,
        ' in %s' % origin.group(1) if origin else '', why))
