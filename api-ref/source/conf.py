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
"""Sphinx configuration of the dbaas-scheduler API reference (os-api-ref)."""

# -- General configuration ---------------------------------------------------

extensions = [
    'openstackdocstheme',
    'os_api_ref',
]

master_doc = 'index'
project = 'Backup Scheduler API Reference'
copyright = '2026, OpenStack Foundation'
exclude_patterns = []
pygments_style = 'native'

# -- openstackdocstheme ------------------------------------------------------

openstackdocs_repo_name = 'openstack/dbaas-scheduler'
openstackdocs_bug_project = 'dbaas-scheduler'
openstackdocs_bug_tag = 'api-ref'
openstackdocs_use_storyboard = False
openstackdocs_auto_name = False

# -- Options for HTML output -------------------------------------------------

html_theme = 'openstackdocs'
# The OpenAPI document (tox -e genopenapi), published beside the reference.
html_extra_path = ['openapi.yaml']
html_theme_options = {
    'sidebar_mode': 'toc',
}
