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
"""A real Keystone for functional tests, served over HTTP by a subprocess.

Keystone keeps its configuration in the global ``cfg.CONF`` and needs the
eventlet this test package blocks, so it never runs in the test process:
a small script (:data:`SERVER_SCRIPT`) binds a free port on 127.0.0.1,
runs what ``keystone-manage db_sync``, ``fernet_setup``,
``credential_setup`` and ``bootstrap`` do -- in the same process, since
importing Keystone takes most of the time -- and serves the public
application with cheroot.  Its SQLite database, keys, configuration and
log live in a temporary directory.

Starting it takes 10-20 seconds, so one Keystone serves every test of a
test process: it starts at the first :class:`KeystoneFixture` and stops at
exit (and by itself when the test process dies).  The fixture then
creates, through the REST API:

* project ``service`` and the ``dbaas-scheduler`` user, with the roles
  ``service`` (to validate tokens for keystonemiddleware) and ``admin`` (to
  delete a trust without the trustor's token);
* ``project-a``: alice (member) and carol (reader); ``project-b``: bob
  (member).

Besides bootstrap's identity endpoint nothing is in the catalog.  Tests
that break a user (:meth:`KeystoneFixture.remove_role`,
:meth:`KeystoneFixture.delete_user`) use one of their own
(:meth:`KeystoneFixture.add_user`), deleted after the test, so that the
shared users stay usable.  If Keystone cannot start, :func:`use_keystone`
skips the tests, or fails them when
``DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS=1``.
"""

import atexit
import dataclasses
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import fixtures
from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session

from dbaas_scheduler.tests.functional import db_fixtures
from dbaas_scheduler.tests.functional import process_fixtures

DOMAIN = 'default'
SERVICE_USER = 'dbaas-scheduler'

# Seconds Keystone may take to import, bootstrap and answer.
START_TIMEOUT = 120

# Read at import: while a test runs, oslotest points tempfile at a
# directory of that test, removed with it, and Keystone outlives the test.
TEMP_DIR = tempfile.gettempdir()

# Run as ``python SERVER_SCRIPT <keystone.conf>`` with the admin password in
# OS_BOOTSTRAP_PASSWORD (not on the command line, which ps shows); prints
# the port once Keystone answers, then serves until killed.
SERVER_SCRIPT = '''\
import os
import shutil
import sys
import threading
import time

from cheroot import wsgi

config_file = sys.argv[1]
del sys.argv[1:]                  # Keystone parses sys.argv itself
parent = os.getppid()
# Only the port goes to the test process; anything else to the log.
ready = os.fdopen(os.dup(1), 'w')
os.dup2(2, 1)


def watch_parent():
    # A test process killed with SIGKILL can neither stop its Keystone nor
    # remove the directory.
    while os.getppid() == parent:
        time.sleep(0.5)
    shutil.rmtree(os.path.dirname(os.path.abspath(config_file)),
                  ignore_errors=True)
    os._exit(0)


threading.Thread(target=watch_parent, daemon=True).start()
application = None


def serve(environ, start_response):
    return application(environ, start_response)


server = wsgi.Server(('127.0.0.1', 0), serve, numthreads=8,
                     server_name='keystone')
server.prepare()
port = server.bind_addr[1]

from keystone.cmd import cli
from keystone.common import provider_api
import keystone.conf
from keystone.server.flask import core

owner = ['--keystone-user', str(os.getuid()),
         '--keystone-group', str(os.getgid())]
for command in (
        ['db_sync'], ['fernet_setup'] + owner, ['credential_setup'] + owner,
        ['bootstrap', '--bootstrap-region-id', 'RegionOne',
         '--bootstrap-public-url', 'http://127.0.0.1:%d/v3' % port]):
    cli.main(['keystone-manage', '--config-file', config_file] + command)
    keystone.conf.CONF.clear()
    provider_api.ProviderAPIs._clear_registry_instances()
keystone.conf.CONF.unregister_opt(cli.command_opt)
application = core.initialize_application('public',
                                          config_files=[config_file])
ready.write('%d\\n' % port)
ready.close()
server.serve()
'''


class KeystoneUnavailable(Exception):
    """Keystone could not be started here."""


@dataclasses.dataclass(frozen=True)
class User:
    """A Keystone user and the project its tokens are scoped to."""

    name: str
    id: str
    password: str
    project_id: str


class KeystoneServer:
    """One Keystone process, its temporary directory and its users."""

    def __init__(self):
        self.directory = None
        self.process = None
        self.auth_url = None
        self.admin = None
        self.admin_session = None
        self.roles = {}
        self.projects = {}
        self.users = {}

    # Starting and stopping ------------------------------------------------

    def start(self):
        self.directory = tempfile.mkdtemp(prefix='dbaas-scheduler-keystone-',
                                          dir=TEMP_DIR)
        try:
            self._start_process()
            self._populate()
        except Exception:
            self.stop()
            raise

    def _path(self, name):
        return os.path.join(self.directory, name)

    def _start_process(self):
        for name in ('fernet-keys', 'credential-keys'):
            os.mkdir(self._path(name), 0o700)
        process_fixtures.write_config(self._path('keystone.conf'), {
            'DEFAULT': {'log_file': self._path('keystone.log')},
            'database': {
                'connection': 'sqlite:///%s' % self._path('keystone.db'),
                # A throw-away database need not survive a power cut.
                'sqlite_synchronous': 'false'},
            'fernet_tokens': {'key_repository': self._path('fernet-keys')},
            'fernet_receipts': {'key_repository': self._path('fernet-keys')},
            'credential': {'key_repository': self._path('credential-keys')},
            # bcrypt's minimum: each password check costs ~1 ms, not 250.
            'identity': {'password_hash_rounds': '4'},
            # Cuts a token's validation from ~350 ms to ~20 ms.  One
            # process: its invalidations (revocations, role changes) are
            # exact, as with memcached in production.
            'cache': {'enabled': 'true', 'backend': 'dogpile.cache.memory'},
        })
        with open(self._path('server.py'), 'w') as stream:
            stream.write(SERVER_SCRIPT)
        password = secrets.token_urlsafe(16)
        with open(self._path('keystone.log'), 'ab') as log:
            self.process = subprocess.Popen(
                [sys.executable, self._path('server.py'),
                 self._path('keystone.conf')],
                stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                cwd=self.directory, start_new_session=True,
                env=dict(os.environ, PYTHONWARNINGS='ignore',
                         OS_BOOTSTRAP_PASSWORD=password))
        port = self._read_port()
        self.auth_url = 'http://127.0.0.1:%d/v3' % port
        self.admin_session = ks_session.Session(auth=v3.Password(
            auth_url=self.auth_url, username='admin', password=password,
            user_domain_id=DOMAIN, project_name='admin',
            project_domain_id=DOMAIN))
        self.admin = User('admin', self.admin_session.get_user_id(),
                          password, self.admin_session.get_project_id())

    def _read_port(self):
        deadline = time.monotonic() + START_TIMEOUT
        line = b''
        while not line.endswith(b'\n'):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise KeystoneUnavailable(
                    'Keystone did not start within %d seconds:\n%s'
                    % (START_TIMEOUT, self.log_tail()))
            ready, _, _ = select.select([self.process.stdout], [], [],
                                        remaining)
            if ready:
                data = os.read(self.process.stdout.fileno(), 64)
                if not data:
                    raise KeystoneUnavailable(
                        'Keystone exited with status %s:\n%s'
                        % (self.process.wait(), self.log_tail()))
                line += data
        return int(line)

    def log_tail(self, lines=40):
        try:
            with open(self._path('keystone.log'), errors='replace') as log:
                return ''.join(log.readlines()[-lines:])
        except OSError as exc:
            return '(no log: %s)' % exc

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGTERM)
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
            except ProcessLookupError:
                pass
        if self.process is not None:
            self.process.stdout.close()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None

    # The identity API, as the admin ---------------------------------------

    def call(self, method, path, expect=(200, 201, 204), **kwargs):
        """One admin request to ``<auth_url><path>``; the decoded body."""
        response = self.admin_session.request(
            self.auth_url + path, method, raise_exc=False, **kwargs)
        if response.status_code not in expect:
            raise AssertionError('Keystone answered %s %s with %d: %s' % (
                method, path, response.status_code, response.text))
        return response.json() if response.content else None

    def _populate(self):
        self.roles = {role['name']: role['id']
                      for role in self.call('GET', '/roles')['roles']}
        if 'service' not in self.roles:
            # Made by bootstrap since Keystone 2023.2 only.
            self.roles['service'] = self.call('POST', '/roles', json={
                'role': {'name': 'service'}})['role']['id']
        for name in ('service', 'project-a', 'project-b'):
            self.projects[name] = self.create_project(name)
        for name, project, roles in (
                (SERVICE_USER, 'service', ['service', 'admin']),
                ('alice', 'project-a', ['member']),
                ('bob', 'project-b', ['member']),
                ('carol', 'project-a', ['reader'])):
            self.users[name] = self.create_user(
                name, self.projects[project], roles)

    def create_project(self, name):
        return self.call('POST', '/projects', json={'project': {
            'name': name, 'domain_id': DOMAIN}})['project']['id']

    def create_user(self, name, project_id, roles):
        password = secrets.token_urlsafe(16)
        user_id = self.call('POST', '/users', json={'user': {
            'name': name, 'password': password, 'domain_id': DOMAIN,
            'default_project_id': project_id}})['user']['id']
        user = User(name, user_id, password, project_id)
        for role in roles:
            self.grant_role(user, project_id, role)
        return user

    def grant_role(self, user, project_id, role):
        self.call('PUT', '/projects/%s/users/%s/roles/%s' % (
            project_id, user.id, self.roles[role]))

    def remove_role(self, user, project_id, role):
        self.call('DELETE', '/projects/%s/users/%s/roles/%s' % (
            project_id, user.id, self.roles[role]))

    def delete_user(self, user):
        self.call('DELETE', '/users/%s' % user.id, expect=(204, 404))

    def get_trust(self, trust_id):
        """The trust as Keystone shows it to the admin; None if gone."""
        body = self.call('GET', '/OS-TRUST/trusts/%s' % trust_id,
                         expect=(200, 404))
        return body['trust'] if body and 'trust' in body else None

    def validate_token(self, token):
        """The token's body if Keystone says it is valid, else None."""
        response = self.admin_session.get(
            self.auth_url + '/auth/tokens?nocatalog', raise_exc=False,
            headers={'X-Subject-Token': token})
        return response.json()['token'] if response.status_code == 200 \
            else None

    def password_auth(self, user, project_id=None):
        return v3.Password(
            auth_url=self.auth_url, username=user.name,
            password=user.password, user_domain_id=DOMAIN,
            project_id=project_id or user.project_id)


_server = None
_failure = None
_lock = threading.Lock()


def get_server():
    """This process's Keystone, started at the first call."""
    global _server, _failure
    with _lock:
        if _server is None and _failure is None:
            server = KeystoneServer()
            try:
                server.start()
            except Exception as exc:
                _failure = exc
            else:
                _server = server
                atexit.register(server.stop)
        if _failure is not None:
            raise KeystoneUnavailable('Keystone is not available: %s: %s' % (
                type(_failure).__name__, _failure))
        return _server


def use_keystone(test):
    """A :class:`KeystoneFixture` for ``test``; skips it without Keystone.

    With ``DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS=1`` the test fails instead.
    (A fixture cannot skip: fixtures reports a SkipTest raised in its
    setUp as an error.)
    """
    try:
        get_server()
    except KeystoneUnavailable as exc:
        if db_fixtures.backends_required():
            raise
        test.skipTest(str(exc))
    return test.useFixture(KeystoneFixture())


class KeystoneFixture(fixtures.Fixture):
    """The process's Keystone for one test (see :func:`use_keystone`).

    Users made by :meth:`add_user` are deleted after the test.
    """

    def _setUp(self):
        self.server = get_server()
        self.auth_url = self.server.auth_url
        self.admin = self.server.admin
        self.projects = self.server.projects
        self.service_project_id = self.projects['service']
        self.project_a = self.projects['project-a']
        self.project_b = self.projects['project-b']
        self.service_user = self.server.users[SERVICE_USER]
        self.alice = self.server.users['alice']
        self.bob = self.server.users['bob']
        self.carol = self.server.users['carol']

    def credentials(self, user=None):
        """keystoneauth ``password`` options for ``user`` (the service's).

        Fit for ``[service_credentials]`` and ``[keystone_authtoken]``.
        """
        user = user or self.service_user
        return {'auth_type': 'password', 'auth_url': self.auth_url,
                'username': user.name, 'password': user.password,
                'user_domain_id': DOMAIN, 'project_id': user.project_id}

    def session(self, user, project_id=None):
        """A keystoneauth Session that authenticates as ``user``."""
        return ks_session.Session(
            auth=self.server.password_auth(user, project_id))

    def token(self, user, project_id=None):
        """A new project-scoped token of ``user``."""
        return self.session(user, project_id).get_token()

    def add_user(self, name, project_id, roles):
        """A user of this test only, with ``roles`` in ``project_id``."""
        user = self.server.create_user(
            '%s-%s' % (name, secrets.token_hex(4)), project_id, roles)
        self.addCleanup(self.server.delete_user, user)
        return user

    def remove_role(self, user, project_id, role):
        self.server.remove_role(user, project_id, role)

    def grant_role(self, user, project_id, role):
        self.server.grant_role(user, project_id, role)

    def delete_user(self, user):
        self.server.delete_user(user)

    def get_trust(self, trust_id):
        return self.server.get_trust(trust_id)

    def validate_token(self, token):
        return self.server.validate_token(token)

    def call(self, method, path, **kwargs):
        """An identity API request as the admin; the decoded body."""
        return self.server.call(method, path, **kwargs)
