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
"""Sphinx configuration of the dbaas-scheduler documentation."""

import copy
import re

from cliff import sphinxext as cliff_sphinxext

# -- General configuration ---------------------------------------------------

extensions = [
    'openstackdocstheme',
    # ".. show-options::" and the :oslo.config:option: role.
    'oslo_config.sphinxext',
    # Writes _static/dbaas-scheduler.conf.sample from the option
    # definitions at build time; the sample is never written by hand.
    'oslo_config.sphinxconfiggen',
    # ".. show-policy::": the policy rules, from the code.
    'oslo_policy.sphinxext',
    # ".. autoprogram-cliff::": the openstack CLI commands, from the code.
    'cliff.sphinxext',
]

# cliff renders the help of every option as reStructuredText, but the
# help of the openstack commands is plain text written for "--help": a
# cron expression such as "30 2 * * *" there would start an emphasis that
# never ends. Escape the characters that have a meaning inline, so that
# the help reads in the documentation exactly as it does in a terminal.
_INLINE_MARKUP = re.compile(r'([\\*`|])')
_TRAILING_UNDERSCORE = re.compile(r'(?<=\w)_(?=\W|$)')


def _plain_help(format_action):
    def format_plain(action):
        if action.help:
            action = copy.copy(action)
            action.help = _TRAILING_UNDERSCORE.sub(
                r'\\_', _INLINE_MARKUP.sub(r'\\\1', action.help))
        return format_action(action)
    return format_plain


cliff_sphinxext._format_optional_action = _plain_help(
    cliff_sphinxext._format_optional_action)
cliff_sphinxext._format_positional_action = _plain_help(
    cliff_sphinxext._format_positional_action)

config_generator_config_file = (
    '../../etc/dbaas-scheduler/dbaas-scheduler-config-generator.conf')
sample_config_basename = '_static/dbaas-scheduler'

master_doc = 'index'
copyright = '2026, OpenStack Foundation'
exclude_patterns = []
pygments_style = 'native'

# -- openstackdocstheme ------------------------------------------------------

openstackdocs_repo_name = 'openstack/dbaas-scheduler'
openstackdocs_bug_project = 'dbaas-scheduler'
openstackdocs_bug_tag = 'doc'
openstackdocs_use_storyboard = False
# The project name and version come from the installed package (pbr).
openstackdocs_auto_name = True

# -- Options for HTML output -------------------------------------------------

html_theme = 'openstackdocs'
html_static_path = ['_static']

# -- Options for manual page output ------------------------------------------

# (source start file, name, description, authors, manual section)
man_pages = [
    ('cli/dbaas-scheduler-all', 'dbaas-scheduler-all',
     'The whole dbaas-scheduler service in one process', ['OpenStack'], 1),
    ('cli/dbaas-scheduler-api', 'dbaas-scheduler-api',
     'The REST API of dbaas-scheduler', ['OpenStack'], 1),
    ('cli/dbaas-scheduler-engine', 'dbaas-scheduler-engine',
     'Dispatches due backups of dbaas-scheduler', ['OpenStack'], 1),
    ('cli/dbaas-scheduler-worker', 'dbaas-scheduler-worker',
     'Takes and watches the backups of dbaas-scheduler', ['OpenStack'], 1),
    ('cli/dbaas-scheduler-manage', 'dbaas-scheduler-manage',
     'Database administration of dbaas-scheduler', ['OpenStack'], 1),
    ('cli/dbaas-scheduler-status', 'dbaas-scheduler-status',
     'Upgrade readiness checks of dbaas-scheduler', ['OpenStack'], 1),
]
