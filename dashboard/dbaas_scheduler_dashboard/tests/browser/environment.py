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
"""The whole stack the browser tests drive, started once per process.

A real Keystone (the functional tests' fixture), dbaas-scheduler-all with
Keystone auth and the local backend (a SQLite database of project-a's to
back up), the service in Keystone's catalog, and Horizon with this plugin
served by Django's runserver; everything stops at exit.
"""

import atexit
import os
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests.functional.fixtures import keystone_fixture
from dbaas_scheduler.tests.functional.fixtures import process_fixtures

HORIZON_START_TIMEOUT = 180

# The local backend is admin-only by default; here project members may
# back up the instances their project owns ([local_backend]
# instance_projects).
SERVICE_POLICY = '''\
"dbaas_scheduler:backup_policy:backend:local": "rule:project_member"
'''


class Environment:

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix='dbaas-dashboard-')
        self.keystone = None
        self.service = None
        self.horizon = None
        self.horizon_url = None
        self.timings = {}

    def start(self):
        started = time.monotonic()
        # Horizon's static files, compressed offline while Keystone starts
        # (Horizon would otherwise compress them at its first page).
        compress = self._start_compress()
        self.keystone = keystone_fixture.get_server()
        self.timings['keystone'] = time.monotonic() - started
        # The service and Horizon (whose first page compresses Horizon's
        # static files, the longest step) need only Keystone: both start
        # at once.
        failures = []

        def service():
            begun = time.monotonic()
            try:
                self._start_service()
                self._register_endpoint()
            except BaseException as exc:
                failures.append(exc)
            self.timings['service'] = time.monotonic() - begun

        thread = threading.Thread(target=service, name='dashboard-service')
        thread.start()
        begun = time.monotonic()
        try:
            self._wait_compress(compress)
            self.timings['compress'] = time.monotonic() - started
            self._start_horizon()
        finally:
            self.timings['horizon'] = time.monotonic() - begun
            thread.join()
        if failures:
            raise failures[0]
        self.timings['total'] = time.monotonic() - started
        print('browser test environment started in %s' % ', '.join(
            '%s %.1f s' % item for item in sorted(self.timings.items())),
            file=sys.stderr)

    def _start_service(self):
        notes = os.path.join(self.directory, 'notes.db')
        database = sqlite3.connect(notes)
        database.execute('CREATE TABLE notes (body TEXT)')
        database.execute("INSERT INTO notes VALUES ('remember the milk')")
        database.commit()
        database.close()
        policy_file = os.path.join(self.directory, 'policy.yaml')
        with open(policy_file, 'w') as stream:
            stream.write(SERVICE_POLICY)
        service_user = self.keystone.users[keystone_fixture.SERVICE_USER]
        credentials = {
            'auth_type': 'password', 'auth_url': self.keystone.auth_url,
            'username': service_user.name,
            'password': service_user.password,
            'user_domain_id': keystone_fixture.DOMAIN,
            'project_id': service_user.project_id}
        directory = os.path.join(self.directory, 'service')
        os.mkdir(directory)
        self.service = process_fixtures.AllInOneProcess(directory, {
            'DEFAULT': {'auth_strategy': 'keystone'},
            'keystone_authtoken': dict(
                credentials, interface='public',
                www_authenticate_uri=self.keystone.auth_url),
            'service_credentials': credentials,
            'oslo_policy': {'policy_file': policy_file},
            'api': {'enabled_backends': 'local',
                    'default_backend': 'local'},
            'engine': {'scan_interval': 0.5, 'sweep_interval': 1},
            'worker': {'poll_interval': 0.2},
            'local_backend': {
                'instances': 'notes:sqlite:///' + notes,
                'instance_projects': 'notes:%s'
                % self.keystone.projects['project-a'],
                'backup_dir': os.path.join(self.directory, 'backups')},
        })
        self.service.setUp()

    def _register_endpoint(self):
        services = self.keystone.call('GET', '/services')['services']
        if any(s['type'] == 'backup-scheduler' for s in services):
            return
        service_id = self.keystone.call('POST', '/services', json={
            'service': {'type': 'backup-scheduler',
                        'name': 'dbaas-scheduler'}})['service']['id']
        self.keystone.call('POST', '/endpoints', json={'endpoint': {
            'service_id': service_id, 'interface': 'public',
            'region_id': 'RegionOne',
            'url': 'http://127.0.0.1:%d' % self.service.port}})

    def _horizon_environ(self, **extra):
        env = dict(os.environ,
                   DJANGO_SETTINGS_MODULE=(
                       'dbaas_scheduler_dashboard.tests.settings'),
                   DBAAS_DASHBOARD_STATE_DIR=os.path.join(
                       self.directory, 'horizon'),
                   DBAAS_DASHBOARD_COMPRESS_OFFLINE='1',
                   PYTHONWARNINGS='ignore', **extra)
        env.pop('DBAAS_DASHBOARD_SCHEDULER_URL', None)
        return env

    def _start_compress(self):
        self.compress_log = os.path.join(self.directory, 'compress.log')
        with open(self.compress_log, 'ab') as log:
            return subprocess.Popen(
                [sys.executable, '-m', 'django', 'compress', '--force'],
                stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=self._horizon_environ(),
                start_new_session=True)

    def _wait_compress(self, compress):
        try:
            code = compress.wait(HORIZON_START_TIMEOUT)
        except subprocess.TimeoutExpired:
            compress.kill()
            compress.wait()
            code = 'killed after %d s' % HORIZON_START_TIMEOUT
        if code != 0:
            with open(self.compress_log, errors='replace') as log:
                raise AssertionError('Compressing Horizon\'s static files '
                                     'failed (%s):\n%s'
                                     % (code, log.read()[-6000:]))

    def _start_horizon(self):
        port = ports.free_port()
        self.horizon_url = 'http://127.0.0.1:%d' % port
        env = self._horizon_environ(
            DBAAS_DASHBOARD_KEYSTONE_URL=self.keystone.auth_url)
        self.horizon_log = os.path.join(self.directory, 'horizon.log')
        with open(self.horizon_log, 'ab') as log:
            self.horizon = subprocess.Popen(
                [sys.executable, '-m', 'django', 'runserver', '--noreload',
                 '--insecure', '127.0.0.1:%d' % port],
                stdout=log, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        deadline = time.monotonic() + HORIZON_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.horizon.poll() is not None:
                break
            try:
                with urllib.request.urlopen(self.horizon_url + '/auth/login/',
                                            timeout=60) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise AssertionError('Horizon did not start:\n' + self.horizon_tail())

    def horizon_tail(self, size=6000):
        try:
            with open(self.horizon_log, errors='replace') as log:
                return log.read()[-size:]
        except OSError as exc:
            return str(exc)

    def stop(self):
        if self.horizon is not None and self.horizon.poll() is None:
            self.horizon.terminate()
            try:
                self.horizon.wait(10)
            except subprocess.TimeoutExpired:
                self.horizon.kill()
        if self.service is not None:
            self.service.cleanUp()


_environment = None
_lock = threading.Lock()


def get():
    global _environment
    with _lock:
        if _environment is None:
            environment = Environment()
            atexit.register(environment.stop)
            environment.start()
            _environment = environment
        return _environment
