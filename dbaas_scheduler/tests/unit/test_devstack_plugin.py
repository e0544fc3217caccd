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
"""The devstack plugin, run by bash with devstack's functions stubbed.

Without devstack, the functions the plugin calls (iniset,
write_uwsgi_config, run_process, get_or_create_endpoint, ...) record what
they are asked, with the signatures of devstack's own (lib/apache,
lib/rpc_backend, lib/database, functions-common); the tests check the
options the plugin writes and the calls it makes at each phase.
"""

import os
import pathlib
import subprocess

import fixtures

from dbaas_scheduler.tests import base

DEVSTACK = pathlib.Path(__file__).resolve().parents[3] / 'devstack'

# Each stub appends "name arg|arg|..." to $RECORD (iniset: "file [section]
# option = value").
_HARNESS = r'''
set -e
ENABLED=" $ENABLED_SERVICES "
function record {
    local name=$1 IFS='|'
    shift
    echo "$name $*" >> "$RECORD"
}
for name in sudo warn write_uwsgi_config remove_uwsgi_config run_process \
        stop_process start_tls_proxy wait_for_service create_service_user \
        get_or_create_service get_or_create_endpoint recreate_database \
        install_keystonemiddleware setup_develop pip_install \
        configure_keystone_authtoken_middleware restart_apache_server; do
    eval "function $name { record $name \"\$@\"; }"
done
function die { record die "$@"; exit 3; }
function is_service_enabled {
    local s
    for s in "$@"; do
        # devstack's own alias: the service "key" is keystone.
        [[ "$s" == keystone ]] && s=key
        [[ "$ENABLED" == *" $s "* ]] && return 0
    done
    return 1
}
function enable_service { ENABLED="$ENABLED $* "; }
function define_plugin { :; }
function get_python_exec_prefix { echo /usr/local/bin; }
function iniset { echo "$1 [$2] $3 = $4" >> "$RECORD"; }
function install { :; }
function which { echo "/usr/local/bin/$1"; }
function iniset_rpc_backend {
    record iniset_rpc_backend "$@"
    iniset "$2" "${3:-DEFAULT}" transport_url \
        rabbit://stackrabbit:secret@10.0.0.1:5672/
}
function database_connection_url {
    echo "mysql+pymysql://root:s@db/$1?charset=utf8"
}
function ipv6_unquote { echo "$1"; }
function setup_logging { :; }
function echo_summary { :; }
function apache_site_config_for {
    echo "/etc/apache2/sites-available/$1.conf"
}
DEST=$STATE DATA_DIR=$STATE SERVICE_HOST=10.0.0.1 SERVICE_PROTOCOL=http
SERVICE_LISTEN_ADDRESS=0.0.0.0 REGION_NAME=RegionOne SERVICE_TIMEOUT=60
DBAAS_SCHEDULER_CONF_DIR=$STATE/etc DBAAS_SCHEDULER_CONF=$STATE/etc/d.conf
DBAAS_SCHEDULER_STATE_PATH=$STATE/state
DBAAS_SCHEDULER_BIN_DIR=$STATE/bin
source "$DEVSTACK/settings"
mkdir -p "$STATE/etc" "$STATE/bin"
printf '#!/bin/sh\necho "dbaas-scheduler-manage $*" >> "$RECORD"\n' \
    > "$STATE/bin/dbaas-scheduler-manage"
chmod +x "$STATE/bin/dbaas-scheduler-manage"
for phase in $PHASES; do
    source "$DEVSTACK/plugin.sh" ${phase/:/ }
done
'''

ALL = 'key mysql rabbit dbaas-sched-api dbaas-sched-engine dbaas-sched-worker'


class PluginTestCase(base.TestCase):

    def run_plugin(self, enabled=ALL, phases='stack:post-config',
                   expect_status=0, **env):
        """Source the plugin at ``phases``; return the recorded lines.

        Lines that set options of the service's configuration file start
        with "conf ", of Trove's with "trove ".
        """
        state = self.useFixture(fixtures.TempDir()).path
        record = os.path.join(state, 'record')
        open(record, 'w').close()
        trove_conf = os.path.join(state, 'trove.conf')
        open(trove_conf, 'w').close()
        environment = {name: value for name, value in os.environ.items()
                       if not name.startswith('DBAAS_SCHEDULER_')}
        environment.update(STATE=state, RECORD=record,
                           DEVSTACK=str(DEVSTACK), PHASES=phases,
                           ENABLED_SERVICES=enabled, TROVE_CONF=trove_conf,
                           **env)
        result = subprocess.run(['bash', '-c', _HARNESS],
                                capture_output=True, text=True,
                                env=environment, timeout=60)
        self.assertEqual(expect_status, result.returncode,
                         result.stderr[-3000:])
        with open(record) as f:
            lines = f.read().replace(state, '$STATE').splitlines()
        prefixes = {'$STATE/etc/d.conf ': 'conf ',
                    '$STATE/trove.conf ': 'trove '}
        return [next((short + line[len(long):]
                      for long, short in prefixes.items()
                      if line.startswith(long)), line)
                for line in lines]

    @staticmethod
    def options(lines, prefix='conf '):
        return [line[len(prefix):] for line in lines
                if line.startswith(prefix)]

    @staticmethod
    def calls(lines, name):
        return [line.split(' ', 1)[1].split('|') if ' ' in line else []
                for line in lines if line.split(' ', 1)[0] == name]


class TestNotificationSettings(PluginTestCase):

    def test_with_trove_its_notifications_are_consumed(self):
        lines = self.run_plugin(ALL + ' tr-api tr-tmgr tr-cond trove')
        ours, trove = self.options(lines), self.options(lines, 'trove ')
        self.assertIn('[engine] trove_notifications = True', ours)
        self.assertEqual(
            ['[oslo_messaging_notifications] driver = messagingv2'], trove)
        # The service's own notifications stay off unless asked for.
        self.assertFalse([line for line in ours
                          if line.startswith('[oslo_messaging_notif')])

    def test_without_trove_nothing_is_consumed(self):
        lines = self.run_plugin()
        ours, trove = self.options(lines), self.options(lines, 'trove ')
        self.assertNotIn('[engine] trove_notifications = True', ours)
        self.assertEqual([], trove)

    def test_own_notifications(self):
        ours = self.options(self.run_plugin(
            ALL,
            DBAAS_SCHEDULER_NOTIFICATION_DRIVER='messagingv2',
            DBAAS_SCHEDULER_NOTIFICATION_FORMAT='versioned'))
        self.assertIn('[oslo_messaging_notifications] driver = messagingv2',
                      ours)
        self.assertIn('[notifications] notification_format = versioned',
                      ours)


UWSGI_INI = '$STATE/etc/dbaas-scheduler-api-uwsgi.ini'


class TestUWSGIDeployment(PluginTestCase):
    """The default: the API under uWSGI behind Apache on a path."""

    def test_post_config(self):
        lines = self.run_plugin()
        self.assertEqual(
            [[UWSGI_INI, 'dbaas_scheduler.wsgi.api:application',
              '/backup-scheduler', '', 'dbaas-scheduler-api']],
            self.calls(lines, 'write_uwsgi_config'))
        self.assertIn(
            '[uwsgi] env = OS_DBAAS_SCHEDULER_CONFIG_FILES=$STATE/etc/d.conf',
            self.options(lines, UWSGI_INI + ' '))
        ours = self.options(lines)
        # No port of its own: Apache's.
        self.assertFalse([line for line in ours
                          if line.startswith('[api] bind_')])
        self.assertNotIn('[oslo_middleware] enable_proxy_headers_parsing '
                         '= True', ours)

    def test_database_and_rabbitmq_from_devstack_helpers(self):
        lines = self.run_plugin()
        self.assertEqual([['dbaas-scheduler', '$STATE/etc/d.conf',
                           'DEFAULT']],
                         self.calls(lines, 'iniset_rpc_backend'))
        ours = self.options(lines)
        self.assertIn('[DEFAULT] transport_url = '
                      'rabbit://stackrabbit:secret@10.0.0.1:5672/', ours)
        self.assertIn('[database] connection = '
                      'mysql+pymysql://root:s@db/dbaas_scheduler'
                      '?charset=utf8', ours)
        self.assertIn('[DEFAULT] rpc_transport = oslo', ours)
        self.assertIn('[DEFAULT] auth_strategy = keystone', ours)

    def test_catalog_on_the_path(self):
        lines = self.run_plugin()
        self.assertEqual([['dbaas-scheduler', 'admin']],
                         self.calls(lines, 'create_service_user'))
        self.assertEqual(
            [['dbaas-scheduler', 'backup-scheduler',
              'Scheduled backups of database instances']],
            self.calls(lines, 'get_or_create_service'))
        url = 'http://10.0.0.1/backup-scheduler'
        self.assertEqual(
            [['backup-scheduler', 'RegionOne', url, '', url]],
            self.calls(lines, 'get_or_create_endpoint'))

    def test_no_catalog_without_keystone(self):
        lines = self.run_plugin(ALL.replace('key ', ''))
        self.assertEqual([], self.calls(lines, 'get_or_create_endpoint'))

    def test_tls_proxy(self):
        lines = self.run_plugin(ALL + ' tls-proxy')
        url = 'https://10.0.0.1/backup-scheduler'
        self.assertEqual(
            [['backup-scheduler', 'RegionOne', url, '', url]],
            self.calls(lines, 'get_or_create_endpoint'))
        self.assertIn('[oslo_middleware] enable_proxy_headers_parsing = '
                      'True', self.options(lines))
        # Apache proxies the path: no TLS terminator of its own.
        self.assertEqual([], self.calls(lines, 'start_tls_proxy'))

    def test_install(self):
        lines = self.run_plugin(phases='stack:install')
        self.assertEqual([['$STATE/dbaas-scheduler']],
                         self.calls(lines, 'setup_develop'))
        self.assertEqual([['-e', '$STATE/dbaas-scheduler/client']],
                         self.calls(lines, 'pip_install'))

    def test_extra_starts_uwsgi_engine_and_worker(self):
        lines = self.run_plugin(phases='stack:extra')
        self.assertEqual([['dbaas_scheduler']],
                         self.calls(lines, 'recreate_database'))
        self.assertIn('dbaas-scheduler-manage --config-file '
                      '$STATE/etc/d.conf db upgrade', lines)
        self.assertEqual(
            [['dbaas-sched-api', '/usr/local/bin/uwsgi --procname-prefix '
              'dbaas-scheduler-api --ini ' + UWSGI_INI],
             ['dbaas-sched-engine', '$STATE/bin/dbaas-scheduler-engine '
              '--config-file $STATE/etc/d.conf'],
             ['dbaas-sched-worker', '$STATE/bin/dbaas-scheduler-worker '
              '--config-file $STATE/etc/d.conf']],
            self.calls(lines, 'run_process'))
        self.assertEqual([['60', 'http://10.0.0.1/backup-scheduler/']],
                         self.calls(lines, 'wait_for_service'))

    def test_with_horizon_the_dashboard_is_installed(self):
        state = self.useFixture(fixtures.TempDir()).path
        python = os.path.join(state, 'python')
        with open(python, 'w') as f:
            f.write('#!/bin/sh\necho "python $*" >> "$RECORD"\n')
        os.chmod(python, 0o755)
        horizon = os.path.join(state, 'horizon')
        dashboard = str(DEVSTACK.parent / 'dashboard')
        lines = self.run_plugin(enabled=ALL + ' horizon',
                                phases='stack:install stack:extra',
                                PYTHON=python, HORIZON_DIR=horizon,
                                DBAAS_SCHEDULER_DASHBOARD_DIR=dashboard)
        self.assertEqual([['-e', '$STATE/dbaas-scheduler/client'],
                          ['-e', dashboard]],
                         self.calls(lines, 'pip_install'))
        manage = [line.split(' ', 1)[1] for line in lines
                  if line.startswith('python ')]
        self.assertEqual([horizon + '/manage.py collectstatic --noinput',
                          horizon + '/manage.py compress --force'], manage)
        self.assertEqual([['']], self.calls(lines, 'restart_apache_server'))
        enabled = os.listdir(os.path.join(
            horizon, 'openstack_dashboard', 'local', 'enabled'))
        plugin = DEVSTACK.parent / 'dashboard' / 'dbaas_scheduler_dashboard'
        self.assertEqual(
            sorted(path.name
                   for path in (plugin / 'enabled').glob('_[0-9]*.py')),
            sorted(enabled))
        self.assertEqual(['_1790_dbaas_scheduler.py'], os.listdir(
            os.path.join(horizon, 'openstack_dashboard', 'local',
                         'local_settings.d')))

    def test_without_horizon_no_dashboard(self):
        lines = self.run_plugin(phases='stack:install stack:extra')
        self.assertEqual([['-e', '$STATE/dbaas-scheduler/client']],
                         self.calls(lines, 'pip_install'))
        self.assertEqual([], self.calls(lines, 'restart_apache_server'))

    def test_unstack_and_clean(self):
        lines = self.run_plugin(phases='unstack clean')
        self.assertEqual([['dbaas-sched-api'], ['dbaas-sched-engine'],
                          ['dbaas-sched-worker']],
                         self.calls(lines, 'stop_process'))
        self.assertEqual([[UWSGI_INI, 'dbaas-scheduler-api']],
                         self.calls(lines, 'remove_uwsgi_config'))
        self.assertIn(['rm', '-f', '/etc/apache2/sites-available/'
                       'dbaas-scheduler-api.conf'], self.calls(lines, 'sudo'))
        self.assertIn(['rm', '-rf', '$STATE/etc', '$STATE/state'],
                      self.calls(lines, 'sudo'))

    def test_an_unknown_deployment_stops_stack_sh(self):
        lines = self.run_plugin(expect_status=3,
                                DBAAS_SCHEDULER_DEPLOY='mod_wsgi')
        self.assertEqual(1, len(self.calls(lines, 'die')))
        self.assertEqual([], self.calls(lines, 'write_uwsgi_config'))


class TestStandaloneDeployment(PluginTestCase):
    """DBAAS_SCHEDULER_DEPLOY=standalone: the console script on a port."""

    def run_plugin(self, *args, **kwargs):
        return super().run_plugin(*args, DBAAS_SCHEDULER_DEPLOY='standalone',
                                  **kwargs)

    def test_post_config(self):
        lines = self.run_plugin()
        self.assertEqual([], self.calls(lines, 'write_uwsgi_config'))
        ours = self.options(lines)
        self.assertIn('[api] bind_host = 0.0.0.0', ours)
        self.assertIn('[api] bind_port = 8798', ours)
        url = 'http://10.0.0.1:8798'
        self.assertEqual(
            [['backup-scheduler', 'RegionOne', url, '', url]],
            self.calls(lines, 'get_or_create_endpoint'))

    def test_extra(self):
        lines = self.run_plugin(phases='stack:extra')
        self.assertEqual(
            ['dbaas-sched-api', '$STATE/bin/dbaas-scheduler-api '
             '--config-file $STATE/etc/d.conf'],
            self.calls(lines, 'run_process')[0])
        self.assertEqual([['60', 'http://10.0.0.1:8798/']],
                         self.calls(lines, 'wait_for_service'))
        self.assertEqual([], self.calls(lines, 'start_tls_proxy'))

    def test_tls_proxy_in_front_of_the_port(self):
        lines = self.run_plugin(ALL + ' tls-proxy',
                                phases='stack:post-config stack:extra')
        self.assertIn('[api] bind_port = 18798', self.options(lines))
        self.assertEqual(
            [['dbaas-scheduler-api', '*', '8798', '10.0.0.1', '18798']],
            self.calls(lines, 'start_tls_proxy'))
        self.assertEqual([['60', 'https://10.0.0.1:8798/']],
                         self.calls(lines, 'wait_for_service'))
