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
"""Sphinx configuration of the dbaas-scheduler release notes."""

# -- General configuration ---------------------------------------------------

extensions = [
    'openstackdocstheme',
    'reno.sphinxext',
]

templates_path = ['_templates']
master_doc = 'index'
project = 'dbaas-scheduler Release Notes'
copyright = '2026, OpenStack Foundation'
# Release notes are not versioned themselves: reno names each release.
version = ''
release = ''
exclude_patterns = []
pygments_style = 'native'

# -- openstackdocstheme ------------------------------------------------------

openstackdocs_repo_name = 'openstack/dbaas-scheduler'
openstackdocs_bug_project = 'dbaas-scheduler'
openstackdocs_bug_tag = 'doc'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False

# -- Options for HTML output -------------------------------------------------

html_theme = 'openstackdocs'
html_static_path = ['_static']

# -- Options for Internationalization output ---------------------------------

locale_dirs = ['locale/']
