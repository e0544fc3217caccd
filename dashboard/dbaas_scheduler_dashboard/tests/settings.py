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
"""Django settings of Horizon with this plugin, for the tests.

Horizon's own settings, with the plugin's ``enabled/`` files seen as
if copied into ``openstack_dashboard/local/enabled/`` (which is what
installing the plugin does), memory caches instead of memcached, and the
Keystone of the browser tests from the environment
(``DBAAS_DASHBOARD_KEYSTONE_URL``).
"""

import atexit
import os
import shutil
import tempfile

import openstack_dashboard.local.enabled as _local_enabled

import dbaas_scheduler_dashboard
from dbaas_scheduler_dashboard import enabled as _plugin_enabled

# Before Horizon's settings read the enabled files.
if _plugin_enabled.__path__[0] not in _local_enabled.__path__:
    _local_enabled.__path__.append(_plugin_enabled.__path__[0])

# One theme: offline compression compiles the SCSS of each available one.
import openstack_dashboard.defaults as _defaults  # noqa: E402,I100
_defaults.AVAILABLE_THEMES = [
    theme for theme in _defaults.AVAILABLE_THEMES if theme[0] == 'default']
from openstack_dashboard.settings import *  # noqa: E402,F403,H303,I100

# Sessions and compressed static files: the browser tests' temporary
# directory, or one of this process (the unit tests).
_STATE = os.environ.get('DBAAS_DASHBOARD_STATE_DIR')
if not _STATE:
    _STATE = tempfile.mkdtemp(prefix='dbaas-dashboard-settings-')
    atexit.register(shutil.rmtree, _STATE, True)

SECRET_KEY = 'dbaas-scheduler-dashboard-tests'  # noqa: S105
DEBUG = False
ALLOWED_HOSTS = ['127.0.0.1', 'localhost', 'testserver']
CACHES = {'default': {
    'BACKEND': 'django.core.cache.backends.locmem.LocMemCache',
    'OPTIONS': {'MAX_ENTRIES': 100000}}}
SESSION_ENGINE = 'django.contrib.sessions.backends.file'
SESSION_FILE_PATH = os.path.join(_STATE, 'sessions')
os.makedirs(SESSION_FILE_PATH, exist_ok=True)
# The browser tests compress Horizon's static files offline, into the
# state directory, while Keystone starts (see tests/browser/
# environment.py); the unit tests render no page that needs them.
COMPRESS_OFFLINE = os.environ.get('DBAAS_DASHBOARD_COMPRESS_OFFLINE') == '1'
STATIC_ROOT = os.path.join(_STATE, 'static')
COMPRESS_ROOT = STATIC_ROOT
OPENSTACK_KEYSTONE_URL = os.environ.get('DBAAS_DASHBOARD_KEYSTONE_URL',
                                        'http://127.0.0.1:5000/v3')
OPENSTACK_KEYSTONE_DEFAULT_DOMAIN = 'Default'
OPENSTACK_KEYSTONE_DEFAULT_ROLE = 'member'
DBAAS_SCHEDULER_URL = os.environ.get('DBAAS_DASHBOARD_SCHEDULER_URL')
DBAAS_SCHEDULER_BACKENDS = ['local', 'trove']
POLICY_FILES = dict(POLICY_FILES)  # noqa: F405
POLICY_FILES['backup-scheduler'] = os.path.join(
    os.path.dirname(dbaas_scheduler_dashboard.__file__), 'conf',
    'dbaas_scheduler_policy.yaml')
LOGGING = {
    'version': 1,
    'disable_existing_loggers': False,
    'handlers': {'console': {'class': 'logging.StreamHandler'}},
    'root': {'handlers': ['console'], 'level': 'WARNING'},
}
# The plugin's page after login: the overview needs Nova, absent here.
HORIZON_CONFIG['user_home'] = '/project/backup_policies/'  # noqa: F405
LOGGING['loggers'] = {  # noqa: F405
    name: {'handlers': ['console'], 'level': 'DEBUG', 'propagate': False}
    for name in ('horizon.exceptions', 'openstack_auth')}
