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
"""The devstack plugin's configuration, run by bash with devstack stubbed.

Without devstack, the functions the plugin calls (iniset,
is_service_enabled, ...) record what they are asked; the test checks the
options the plugin writes, here those of the notifications.
"""

import os
import pathlib
import subprocess

import fixtures

from dbaas_scheduler.tests import base

DEVSTACK = pathlib.Path(__file__).resolve().parents[3] / 'devstack'

_HARNESS = r'''
set -e
ENABLED=" $ENABLED_SERVICES "
function is_service_enabled {
    local s
    for s in "$@"; do [[ "$ENABLED" == *" $s "* ]] && return 0; done
    return 1
}
function enable_service { ENABLED="$ENABLED $* "; }
function define_plugin { :; }
function get_python_exec_prefix { echo /usr/local/bin; }
function iniset { echo "$1 [$2] $3 = $4" >> "$RECORD"; }
function sudo { :; }
function install { :; }
function get_transport_url { echo rabbit://stackrabbit:secret@10.0.0.1:5672/; }
function database_connection_url { echo mysql+pymysql://root:s@db/$1; }
function ipv6_unquote { echo "$1"; }
function configure_keystone_authtoken_middleware { :; }
function setup_logging { :; }
function echo_summary { :; }
DEST=$STATE DATA_DIR=$STATE SERVICE_HOST=10.0.0.1 SERVICE_PROTOCOL=http
SERVICE_LISTEN_ADDRESS=0.0.0.0
source "$DEVSTACK/settings"
DBAAS_SCHEDULER_CONF_DIR=$STATE/etc DBAAS_SCHEDULER_CONF=$STATE/etc/d.conf
DBAAS_SCHEDULER_STATE_PATH=$STATE/state
mkdir -p "$STATE/etc"
source "$DEVSTACK/plugin.sh" stack post-config
'''


class TestNotificationSettings(base.TestCase):

    def run_plugin(self, enabled, **env):
        state = self.useFixture(fixtures.TempDir()).path
        record = os.path.join(state, 'record')
        open(record, 'w').close()
        trove_conf = os.path.join(state, 'trove.conf')
        open(trove_conf, 'w').close()
        environment = dict(os.environ, STATE=state, RECORD=record,
                           DEVSTACK=str(DEVSTACK),
                           ENABLED_SERVICES=enabled, TROVE_CONF=trove_conf,
                           **env)
        result = subprocess.run(['bash', '-c', _HARNESS],
                                capture_output=True, text=True,
                                env=environment, timeout=60)
        self.assertEqual(0, result.returncode, result.stderr[-3000:])
        with open(record) as f:
            lines = f.read().splitlines()
        return ([line.split(' ', 1)[1] for line in lines
                 if line.startswith(os.path.join(state, 'etc'))],
                [line.split(' ', 1)[1] for line in lines
                 if line.startswith(trove_conf)])

    def test_with_trove_its_notifications_are_consumed(self):
        ours, trove = self.run_plugin('key mysql rabbit tr-api tr-tmgr '
                                      'tr-cond trove')
        self.assertIn('[engine] trove_notifications = True', ours)
        self.assertEqual(
            ['[oslo_messaging_notifications] driver = messagingv2'], trove)
        # The service's own notifications stay off unless asked for.
        self.assertFalse([line for line in ours
                          if line.startswith('[oslo_messaging_notif')])

    def test_without_trove_nothing_is_consumed(self):
        ours, trove = self.run_plugin('key mysql rabbit')
        self.assertNotIn('[engine] trove_notifications = True', ours)
        self.assertEqual([], trove)

    def test_own_notifications(self):
        ours, _ = self.run_plugin(
            'key mysql rabbit',
            DBAAS_SCHEDULER_NOTIFICATION_DRIVER='messagingv2',
            DBAAS_SCHEDULER_NOTIFICATION_FORMAT='versioned')
        self.assertIn('[oslo_messaging_notifications] driver = messagingv2',
                      ours)
        self.assertIn('[notifications] notification_format = versioned',
                      ours)
