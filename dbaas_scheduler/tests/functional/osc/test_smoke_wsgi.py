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
"""devstack/smoke.sh against the services laid out as the devstack plugin.

As ``DBAAS_SCHEDULER_DEPLOY=uwsgi`` deploys them: the WSGI application
``dbaas_scheduler.wsgi.api:application`` on the path
``/backup-scheduler`` (its configuration from
OS_DBAAS_SCHEDULER_CONFIG_FILES), an engine and a worker as processes of
their own, on MariaDB and RabbitMQ. The application is served by cheroot
(:mod:`..wsgi_server`), and by a real uWSGI when one is installed (``pip
install uwsgi``), mounted on the path as Apache's ProxyPass mounts it in
devstack. Without Keystone: ``auth_strategy = noauth``, the client with
``--os-auth-type none --os-endpoint <host>/backup-scheduler``. The engine
consumes Trove's notifications, as the plugin configures it when Trove
is enabled: a ``trove.instance.delete`` sent as Trove sends it deletes
the instance's policies.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import kombu
from oslo_config import cfg
import oslo_messaging as messaging
from oslo_messaging import conffixture
from oslo_utils import uuidutils
from testtools import content

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.engine import notification_listener
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.osc import test_cli
from dbaas_scheduler.tests.functional.osc import test_smoke
from dbaas_scheduler.tests.functional.worker import test_worker_processes
from dbaas_scheduler import wsgi

PATH = '/backup-scheduler'
PRIORITIES = ('audit', 'critical', 'debug', 'error', 'info', 'sample',
              'warn')
STEPS = ('create the policy', 'list and show it', 'its next runs',
         'pause and resume', 'run it now', 'delete it')


def get(url):
    """(status, body) of a GET; the body decoded when it is JSON."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            body = response.read()
            if response.headers.get_content_type() == 'application/json':
                body = json.loads(body)
            return response.status, body
    except urllib.error.HTTPError as exc:
        return exc.code, None


class _ProcessOf(process_fixtures.ServiceProcess):
    """Any command line, in its own session (killed with its group)."""

    def __init__(self, argv, env, log_file):
        super().__init__(None, None, log_file)
        self.argv = argv
        self.env = env

    def start(self):
        self.killed = False
        with open(self.log_file, 'ab') as log:
            self.process = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT,
                env=self.env, start_new_session=True)


class _SmokeWSGITests(test_worker_processes.WorkerProcessMixin):

    def setUp(self):
        super().setUp()
        # Trove's notifications, as the plugin wires them with Trove
        # enabled ([engine] trove_notifications), on an exchange of this
        # test's own.
        self.trove_exchange = 'dbaas-test-%s' % uuidutils.generate_uuid()[:12]
        self.addCleanup(self._delete_trove_queues)
        self.start('engine', 'engine', engine={
            'trove_notifications': True,
            'trove_notification_exchange': self.trove_exchange,
            'trove_notification_topics': self.trove_exchange})
        self.start('worker', 'worker')
        self.port = ports.free_port()
        self.url = 'http://127.0.0.1:%d%s' % (self.port, PATH)
        # noauth offers only local by default; the policies here are fake.
        config = self._config('api', DEFAULT={'auth_strategy': 'noauth'},
                              api={'enabled_backends': 'fake,local'})
        env = {name: value for name, value in os.environ.items()
               if name != wsgi.OLD_CONFIG_FILES_ENV}
        env[wsgi.CONFIG_FILES_ENV] = config
        self.api = self.useFixture(_ProcessOf(
            self.server_argv(), env, os.path.join(self.tempdir, 'api.log')))
        self.processes.append(self.api)
        self.wait_for(lambda: test_cli.answers(self.url + '/'), 120,
                      lambda: 'the API did not answer on %s' % self.url)
        self.wait_for_workers(1)
        self.openstack = self.useFixture(test_cli.OpenStackCommand(self.url))

    def server_argv(self):
        raise NotImplementedError

    def _delete_trove_queues(self):
        queues = ['%s.%s' % (self.trove_exchange, priority)
                  for priority in PRIORITIES]
        queues.append(notification_listener.pool_name(self.conf))
        try:
            with kombu.Connection(messaging_fixtures.transport_url().replace(
                    'rabbit://', 'amqp://', 1)) as connection:
                channel = connection.channel()
                for name in queues:
                    channel.queue_delete(name)
                channel.exchange_delete(self.trove_exchange)
        except Exception:
            pass

    def notify_as_trove(self, event_type, payload):
        """Send a notification as Trove's task manager sends it."""
        trove_conf = cfg.ConfigOpts()
        fixture = self.useFixture(conffixture.ConfFixture(
            trove_conf, transport_url=messaging_fixtures.transport_url()))
        fixture.conf.set_override('control_exchange', self.trove_exchange)
        transport = messaging.get_notification_transport(trove_conf)
        self.addCleanup(transport.cleanup)
        # Trove's taskmanager is its [DEFAULT] host, 0.0.0.0 by default.
        messaging.Notifier(
            transport, '0.0.0.0', driver='messagingv2',
            topics=[self.trove_exchange]).info({}, event_type, payload)

    def test_version_document_carries_the_path(self):
        status, body = get(self.url + '/')
        self.assertEqual(200, status)
        self.assertEqual(
            {'self': self.url + '/v1/',
             'describedby': self.url + '/v1/openapi.json'},
            {link['rel']: link['href']
             for link in body['versions'][0]['links']})
        status, body = get(self.url + '/v1/openapi.json')
        self.assertEqual([{'url': self.url}], body['servers'])
        self.assertEqual(200, get(self.url + '/healthcheck')[0])
        # Nothing is served outside the path (cheroot answers 404,
        # uWSGI 500: no application there).
        self.assertIn(get('http://127.0.0.1:%d/v1/' % self.port)[0],
                      (404, 500))

    def test_smoke_script_passes(self):
        openstack = '%s --os-auth-type none --os-endpoint %s' % (
            os.path.join(self.openstack.venv, 'bin', 'openstack'), self.url)
        env = dict(self.openstack.env, OPENSTACK=openstack,
                   SMOKE_TIMEOUT='240')
        result = subprocess.run(['bash', str(test_smoke.SMOKE)],
                                capture_output=True, text=True, env=env,
                                timeout=test_cli.COMMAND_TIMEOUT * 3)
        self.addDetail('smoke.sh', content.text_content(
            result.stdout + result.stderr))
        self.assertEqual(0, result.returncode, result.stderr[-3000:])
        self.assertIn('SMOKE OK: policy ', result.stdout)
        for step in STEPS:
            self.assertIn('== ' + step, result.stdout)
        # The execution ran on the worker process, through RabbitMQ.
        self.assertIn('SUCCEEDED', [row.status for row in self.executions()])

    def executions(self):
        return db_api.list_executions(self.context)


class TestSmokeUnderCheroot(_SmokeWSGITests, base.TestCase):

    DRIVER = 'mysql'

    def test_trove_deleting_an_instance_deletes_its_policies(self):
        ids = {}
        for name, instance in (('gone-1', 'gone'), ('gone-2', 'gone'),
                               ('kept', 'alive'), ('fake', 'gone')):
            result = self.openstack(
                'database', 'backup', 'policy', 'create', '--name', name,
                '--instance', instance, '--backend', 'fake', '--schedule',
                '0 3 * * *', '-f', 'value', '-c', 'ID')
            self.assertEqual(0, result.returncode, result.stderr)
            ids[name] = result.stdout.strip()
        # Trove's notifications are about trove policies only: those made
        # here as fake ones become trove ones (no Trove to check them).
        for name in ('gone-1', 'gone-2', 'kept'):
            policy = db_api.update_policy(self.context, ids[name],
                                          {'backend': 'trove'})
        project_id = policy.project_id
        # The engine's listener is up once its queue exists: until then a
        # notification would find no queue and be dropped, so send again.

        def deleted_after_notice():
            self.notify_as_trove('trove.instance.delete',
                                 {'instance_id': 'gone',
                                  'tenant_id': project_id})
            return process_fixtures.wait_until(
                lambda: get('%s/v1/backup-policies/%s' % (
                    self.url, ids['gone-1']))[0] == 404, 5, 0.5)
        self.wait_for(deleted_after_notice, 120,
                      lambda: 'the policies of the deleted instance stay')
        for name, status in (('gone-2', 404), ('kept', 200), ('fake', 200)):
            self.assertEqual(status, get('%s/v1/backup-policies/%s' % (
                self.url, ids[name]))[0], name)

    def server_argv(self):
        return [sys.executable, '-m',
                'dbaas_scheduler.tests.functional.fixtures.wsgi_server',
                '127.0.0.1', str(self.port), PATH]


def find_uwsgi():
    """The uwsgi program of this virtualenv, or of the PATH, or None."""
    here = os.path.join(os.path.dirname(sys.executable), 'uwsgi')
    return here if os.access(here, os.X_OK) else shutil.which('uwsgi')


class TestSmokeUnderUWSGI(_SmokeWSGITests, base.TestCase):
    """The options devstack's write_uwsgi_config sets, but an HTTP socket.

    devstack's Apache reaches uWSGI on a Unix socket and passes the path
    as SCRIPT_NAME; here uWSGI's own HTTP socket and ``mount`` with
    ``manage-script-name`` do the same.
    """

    DRIVER = 'mysql'

    def setUp(self):
        self.uwsgi = find_uwsgi()
        if self.uwsgi is None:
            self.skipTest('no uwsgi program (pip install uwsgi) in this '
                          'virtualenv or on the PATH')
        super().setUp()

    def server_argv(self):
        return [self.uwsgi, '--http-socket', '127.0.0.1:%d' % self.port,
                '--home', sys.prefix,
                '--mount', '%s=dbaas_scheduler.wsgi.api:application' % PATH,
                # Only the path, as Apache proxies only the path.
                '--manage-script-name', '--no-default-app', '--need-app',
                '--master', '--processes', '2', '--lazy-apps',
                '--enable-threads', '--die-on-term',
                '--hook-master-start',
                'unix_signal:15 gracefully_kill_them_all',
                '--buffer-size', '65535',
                # No keep-alive on uWSGI's socket: without this, a client
                # reusing its connection gets it reset.
                '--add-header', 'Connection: close']

    def test_graceful_stop_on_sigterm(self):
        # devstack's stop_process sends SIGTERM: every process exits,
        # once each (lazy-apps) has loaded the application, even after
        # requests that used the database and RabbitMQ.
        self.wait_for(lambda: self.api.log().count('WSGI app 0') == 2, 120,
                      lambda: 'the uWSGI workers did not load the app')
        for _ in range(2):
            policy = self.openstack(
                'database', 'backup', 'policy', 'create', '--name',
                'p-%s' % _, '--instance', 'i-1', '--backend', 'fake',
                '--schedule', '0 3 * * *', '-f', 'value', '-c', 'ID')
            self.assertEqual(0, policy.returncode, policy.stderr)
            run = self.openstack('database', 'backup', 'policy', 'run',
                                 policy.stdout.strip())
            self.assertEqual(0, run.returncode, run.stderr)
        self.api.killed = True
        self.api.process.send_signal(signal.SIGTERM)
        self.assertEqual(0, self.api.process.wait(60), self.api.log())
