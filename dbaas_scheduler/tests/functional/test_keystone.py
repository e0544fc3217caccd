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
"""The REST API, trusts and the worker against a real Keystone.

Keystone runs in a subprocess (``keystone_fixture``); the REST API is
served in this process over real HTTP with ``auth_strategy = keystone``;
the worker's runner and poller are driven step by step against a fake
Trove that, like Trove's keystonemiddleware, asks Keystone whether each
token is valid and refuses (401) a token of another project than the URL's.
"""

import datetime
import threading

from cheroot import wsgi as cheroot_wsgi
from keystoneauth1 import loading as ks_loading
from keystonemiddleware import auth_token
from oslo_utils import timeutils
from oslo_utils import uuidutils
import requests

from dbaas_scheduler.api import deploy
from dbaas_scheduler.backends import loader
from dbaas_scheduler.conf import service_credentials
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import trusts as db_trusts
from dbaas_scheduler.engine import trusts as engine_trusts
from dbaas_scheduler import keystone
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler import policy as api_policy
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import keystone_fixture
from dbaas_scheduler.worker import service as worker_service

AUTHTOKEN = 'keystone_authtoken'


def closed_port_url():
    """An identity URL on 127.0.0.1 where nothing listens."""
    port = ports.free_port()
    return 'http://127.0.0.1:%d/v3' % port


class _KeystoneTestCase(db_fixtures.DatabaseMixin, base.TestCase):
    """Keystone, the API on a free port, a fake Trove, a worker."""

    def setUp(self):
        super().setUp()
        self.keystone = keystone_fixture.use_keystone(self)
        self.trove_tokens = []
        self.trove = self.useFixture(fake_trove.FakeTrove(
            check_token=self.check_trove_token))
        self.configure()
        for reset in (keystone.reset, loader.reset, api_policy.reset,
                      notifications.reset):
            reset()
            self.addCleanup(reset)
        api_policy.get_enforcer(self.conf)
        self.api_url = self.serve_api()
        self.context = dbaas_context.get_admin_context()
        self._tokens = {}
        self._worker = None

    def configure(self):
        credentials = self.keystone.credentials()
        self.flags(auth_strategy='keystone')
        # Through the fixture, which unregisters them after the test: the
        # [service_credentials] OptGroup object is shared by every
        # ConfigOpts of the process, and the password plugin's required
        # auth_url would be required of every later test's configuration.
        password_options = ks_loading.get_auth_plugin_conf_options(
            'password')
        for group, options in auth_token.list_opts() + [
                (service_credentials.GROUP, password_options),
                (AUTHTOKEN, password_options)]:
            self.config_fixture.register_opts(options, group=group)
        self.flags(group=service_credentials.GROUP, **credentials)
        # Bootstrap registers only the public identity endpoint.
        self.flags(group=AUTHTOKEN, interface='public',
                   www_authenticate_uri=self.keystone.auth_url,
                   **credentials)
        self.flags(group='trove', endpoint_override=self.trove.url)
        self.flags(group='worker', retry_initial_delay=0.01,
                   retry_max_delay=0.05, max_attempts=3)

    # Manual runs through the API are cast in this process, to no worker
    # (they stay DISPATCHED); otherwise the API has no RPC client.
    CAST_LOCALLY = False

    def worker_api(self):
        if not self.CAST_LOCALLY:
            return None
        self.flags(rpc_transport='none')
        rpc.init(self.conf)
        self.addCleanup(rpc.cleanup)
        return rpcapi.WorkerAPI(self.conf)

    def serve_api(self):
        server = cheroot_wsgi.Server(
            ('127.0.0.1', 0),
            deploy.deploy(self.conf, worker_api=self.worker_api()),
            numthreads=2,
            server_name='dbaas-scheduler-api')
        # stop() waits for one turn of the serving loop (0.5 s by default).
        server.expiration_interval = 0.05
        server.prepare()
        thread = threading.Thread(target=server.serve, daemon=True,
                                  name='api-server')
        thread.start()
        self.addCleanup(thread.join, 10)
        self.addCleanup(server.stop)
        return 'http://127.0.0.1:%d' % server.bind_addr[1]

    def check_trove_token(self, token, project_id):
        """What Trove's auth_token and policy would make of ``token``."""
        body = self.keystone.validate_token(token) if token else None
        if body is None:
            raise fake_trove.TroveFault(401, 'The request you have made '
                                             'requires authentication.')
        if body.get('project', {}).get('id') != project_id:
            raise fake_trove.TroveFault(401, 'The token is scoped to '
                                             'another project.')
        self.trove_tokens.append(body)

    # Talking to the API ---------------------------------------------------

    def token(self, user):
        if user.id not in self._tokens:
            self._tokens[user.id] = self.keystone.token(user)
        return self._tokens[user.id]

    def api(self, method, path, user=None, token=None, **kwargs):
        """One request to the API, as ``user`` (or with ``token``)."""
        headers = kwargs.pop('headers', {})
        if user is not None:
            token = self.token(user)
        if token is not None:
            headers['X-Auth-Token'] = token
        return requests.request(method, self.api_url + path,
                                headers=headers, timeout=30, **kwargs)

    def post_policy(self, user, **values):
        """Ask the API to create a policy as ``user``; its response."""
        body = dict(instance_id=uuidutils.generate_uuid(),
                    schedule='30 2 * * *')
        body.update(values)
        return self.api('POST', '/v1/backup-policies', user,
                        json={'backup_policy': body})

    def create_policy(self, user, status=201, **values):
        """Create a policy as ``user`` through the API; its JSON."""
        if 'instance_id' not in values:
            values['instance_id'] = self.trove.add_instance(
                project_id=user.project_id)
        response = self.post_policy(user, **values)
        self.assertEqual(status, response.status_code, response.text)
        return response.json().get('backup_policy')

    def list_ids(self, user, path='/v1/backup-policies', **query):
        """The ids a list request shows ``user``."""
        response = self.api('GET', path, user, params=query)
        self.assertEqual(200, response.status_code, response.text)
        key = path.rsplit('/', 1)[-1].replace('-', '_')
        return {item['id'] for item in response.json()[key]}

    # The worker -----------------------------------------------------------

    def stored_policy(self, policy_id):
        return db_api.get_policy(self.context, policy_id)

    def add_execution(self, policy_id):
        policy = self.stored_policy(policy_id)
        return db_api.create_execution(self.context, {
            'policy_id': policy.id, 'project_id': policy.project_id,
            'instance_id': policy.instance_id,
            'scheduled_at': timeutils.utcnow(True), 'status': 'DISPATCHED'})

    def worker(self):
        """The worker's runner and poller (made once: closing costs 1 s)."""
        if self._worker is None:
            # The worker's own backends, as in its own process: not the
            # API's, which checked the instance at create with a token of
            # the trust that the test may since have broken.
            loader.reset()
            parts = worker_service.build_parts(self.conf,
                                               uuidutils.generate_uuid())
            self._worker = parts.runner, parts.poller
            self.addCleanup(parts.close)
        return self._worker

    def start_execution(self, policy_id):
        """A new execution of the policy, claimed and started."""
        execution = self.add_execution(policy_id)
        runner, _ = self.worker()
        self.assertEqual([execution.id],
                         runner.run(self.context, [execution.id]))
        return db_api.get_execution(self.context, execution.id)

    def poll(self, execution_id):
        """One pass of the poller; the execution afterwards."""
        self.worker()[1].run_pass(self.context)
        return db_api.get_execution(self.context, execution_id)

    def run_execution(self, policy_id):
        """Start a backup of the policy, then poll once; the execution."""
        return self.poll(self.start_execution(policy_id).id)

    def trust_ids(self, trustor):
        return {trust['id'] for trust in self.keystone.call(
            'GET', '/OS-TRUST/trusts?trustor_user_id=%s' % trustor.id)
            ['trusts']}

    def instance_checked(self, created):
        """Trove's requests so far: the one check of the instance."""
        requests = list(self.trove.requests)
        self.assertEqual(1, len(requests), requests)
        self.assertIn(created['instance_id'], str(requests[0]))
        return requests

    def assertTrustBroken(self, execution, policy_id):
        """The execution failed over the trust; the policy is paused."""
        trust_id = self.stored_policy(policy_id).trust_id
        self.assertEqual('FAILED', execution.status)
        self.assertIn('Keystone trust %s' % trust_id, execution.fault)
        self.assertIn('no longer works', execution.fault)
        paused = self.stored_policy(policy_id)
        self.assertFalse(paused.enabled)
        self.assertIsNone(paused.next_execution_time)
        self.assertIn('Keystone trust no longer works', paused.paused_reason)
        self.assertIn(trust_id, paused.paused_reason)


class TestAPIAuthentication(_KeystoneTestCase):
    """auth_strategy = keystone: tokens, roles and projects."""

    def test_request_without_a_token_is_refused(self):
        response = self.api('GET', '/v1/backup-policies')
        self.assertEqual(401, response.status_code)
        self.assertIn(self.keystone.auth_url.rsplit('/', 1)[0],
                      response.headers['WWW-Authenticate'])
        response = self.api('GET', '/v1/backup-policies', token='not-a-token')
        self.assertEqual(401, response.status_code)
        self.assertEqual(401, self.api('POST', '/v1/backup-policies', json={
            'backup_policy': {'instance_id': 'x', 'schedule': '@daily'}},
        ).status_code)

    def test_version_document_and_healthcheck_need_no_token(self):
        response = self.api('GET', '/')
        self.assertEqual(200, response.status_code, response.text)
        self.assertIn('versions', response.json())
        response = self.api('GET', '/healthcheck')
        self.assertEqual(200, response.status_code, response.text)
        response = self.api('GET', '/v1/openapi.json')
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual('3.1.0', response.json()['openapi'])
        # Every other path of the document needs one.
        self.assertEqual(401, self.api('GET', '/v1').status_code)
        self.assertEqual(401, self.api('HEAD', '/v1/executions').status_code)

    def test_member_creates_and_lists_in_its_project(self):
        alice = self.keystone.alice
        created = self.create_policy(alice)
        self.assertEqual((self.keystone.project_a, alice.id),
                         (created['project_id'], created['user_id']))
        self.assertEqual({created['id']}, self.list_ids(alice))
        response = self.api('GET', '/v1/backup-policies/%s' % created['id'],
                            alice)
        self.assertEqual(200, response.status_code, response.text)

    def test_another_project_sees_nothing(self):
        alice, bob = self.keystone.alice, self.keystone.bob
        created = self.create_policy(alice)
        execution = self.add_execution(created['id'])
        path = '/v1/backup-policies/%s' % created['id']
        self.assertEqual(set(), self.list_ids(bob))
        for method in ('GET', 'DELETE'):
            self.assertEqual(404, self.api(method, path, bob).status_code)
        self.assertEqual(404, self.api('PATCH', path, bob, json={
            'backup_policy': {'name': 'mine'}}).status_code)
        self.assertEqual(set(), self.list_ids(bob, '/v1/executions',
                                              policy_id=created['id']))
        self.assertEqual(404, self.api(
            'GET', '/v1/executions/%s' % execution.id, bob).status_code)
        # Nothing of alice's changed, her trust included.
        self.assertEqual({execution.id}, self.list_ids(alice,
                                                       '/v1/executions'))
        self.assertEqual('backup-%s' % created['instance_id'],
                         self.api('GET', path, alice).json()
                         ['backup_policy']['name'])
        self.assertIsNotNone(self.keystone.get_trust(
            self.stored_policy(created['id']).trust_id))

    def test_reader_looks_but_does_not_change(self):
        created = self.create_policy(self.keystone.alice)
        carol = self.keystone.carol
        path = '/v1/backup-policies/%s' % created['id']
        self.assertEqual({created['id']}, self.list_ids(carol))
        self.assertEqual(200, self.api('GET', path, carol).status_code)
        self.create_policy(carol, status=403)
        self.assertEqual(403, self.api('DELETE', path, carol).status_code)
        self.assertEqual({created['id']},
                         self.list_ids(self.keystone.alice))

    def test_admin_lists_all_projects(self):
        mine = self.create_policy(self.keystone.alice)
        yours = self.create_policy(self.keystone.bob)
        admin = self.keystone.admin
        self.assertEqual({mine['id'], yours['id']},
                         self.list_ids(admin, all_projects='true'))
        self.assertEqual(set(), self.list_ids(admin))
        response = self.api('GET', '/v1/backup-policies',
                            self.keystone.alice,
                            params={'all_projects': 'true'})
        self.assertEqual(403, response.status_code, response.text)


class TestTrusts(_KeystoneTestCase):
    """A policy's trust: created with it, deleted with it."""

    def test_policy_creation_makes_a_trust(self):
        alice = self.keystone.alice
        created = self.create_policy(alice)
        trust_id = self.stored_policy(created['id']).trust_id
        self.assertIsNotNone(trust_id)
        trust = self.keystone.get_trust(trust_id)
        self.assertEqual(
            (alice.id, self.keystone.service_user.id,
             self.keystone.project_a, True, ['member']),
            (trust['trustor_user_id'], trust['trustee_user_id'],
             trust['project_id'], trust['impersonation'],
             [role['name'] for role in trust['roles']]))
        self.assertIsNone(trust['expires_at'])
        self.assertIsNone(trust['remaining_uses'])

    def test_the_trust_expires_at_the_policys_end(self):
        created = self.create_policy(self.keystone.alice,
                                     end_at='2031-05-01T12:00:00Z')
        trust = self.keystone.get_trust(
            self.stored_policy(created['id']).trust_id)
        self.assertTrue(trust['expires_at'].startswith('2031-05-01T12:00:00'),
                        trust['expires_at'])

    def planted_trust(self):
        """A trust between two other users: alice to carol, in project A.

        Its id is what an attacker would plant in a policy row.
        """
        response = self.keystone.session(self.keystone.alice).post(
            self.keystone.auth_url + '/OS-TRUST/trusts', json={'trust': {
                'trustor_user_id': self.keystone.alice.id,
                'trustee_user_id': self.keystone.carol.id,
                'project_id': self.keystone.project_a,
                'impersonation': False,
                'roles': [{'name': 'reader'}]}})
        trust_id = response.json()['trust']['id']
        self.addCleanup(self.keystone.call, 'DELETE',
                        '/OS-TRUST/trusts/%s' % trust_id, expect=(204, 404))
        return trust_id

    def test_a_planted_trust_is_never_deleted(self):
        # Issue 23: deleting a policy whose trust_id was planted made the
        # service user (an admin) delete an unrelated trust.
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        planted = self.planted_trust()
        created = backup_policy_obj.create_policy(self.context, self.conf, {
            'project_id': self.keystone.project_a,
            'user_id': self.keystone.alice.id, 'trust_id': planted,
            'instance_id': 'i-1', 'backend': 'fake', 'schedule': '@daily'})
        # Deleted without a token (as over RPC), and by its user's token.
        backup_policy_obj.delete_policy(self.context, self.conf, created)
        self.assertIsNotNone(self.keystone.get_trust(planted))
        alice = dbaas_context.RequestContext(
            auth_token=self.token(self.keystone.alice),
            user_id=self.keystone.alice.id,
            project_id=self.keystone.project_a)
        self.assertTrue(keystone.delete_trust(self.conf, alice, planted,
                                              self.keystone.project_a,
                                              self.keystone.alice.id))
        self.assertIsNotNone(self.keystone.get_trust(planted))
        # Nor through the engines' queue.
        db_trusts.record(self.context, planted, self.keystone.project_a,
                         'planted')
        self.assertEqual((1, 0), engine_trusts.delete_pending(
            self.conf, self.context))
        self.assertIsNotNone(self.keystone.get_trust(planted))
        self.assertEqual([], db_trusts.list_pending(self.context))

    def test_a_trust_of_another_project_or_user_is_not_deleted(self):
        created = self.create_policy(self.keystone.alice)
        trust_id = self.stored_policy(created['id']).trust_id
        for project_id, trustor in ((self.keystone.project_b, None),
                                    (None, self.keystone.bob.id)):
            keystone.delete_trust(self.conf, self.context, trust_id,
                                  project_id, trustor)
            self.assertIsNotNone(self.keystone.get_trust(trust_id))
        keystone.delete_trust(self.conf, self.context, trust_id,
                              self.keystone.project_a, self.keystone.alice.id)
        self.assertIsNone(self.keystone.get_trust(trust_id))

    def test_roles_the_user_lacks_are_refused(self):
        self.flags(group='api', trust_roles=['member', 'admin'])
        response = self.post_policy(self.keystone.alice)
        self.assertEqual(400, response.status_code, response.text)
        detail = response.json()['errors'][0]['detail']
        self.assertIn('Could not delegate your roles member, admin', detail)
        self.assertIn('Keystone answered', detail)
        self.assertEqual(set(), self.list_ids(self.keystone.alice))

    def assertKeystoneUnavailable(self, response):
        """503, saying why and that nothing was created."""
        self.assertEqual(503, response.status_code, response.text)
        [error] = response.json()['errors']
        self.assertEqual('dbaas_scheduler.keystone_unavailable',
                         error['code'])
        self.assertIn('Keystone is unreachable, try again later',
                      error['detail'])
        self.assertIn('The backup policy was not created', error['detail'])

    def test_keystone_unreachable_is_503_and_creates_nothing(self):
        # The service's Keystone (the trustee's) is down; the API's token
        # validation ([keystone_authtoken]) still works.
        alice = self.keystone.alice
        trusts_before = self.trust_ids(alice)
        self.flags(group=service_credentials.GROUP,
                   auth_url=closed_port_url())
        response = self.post_policy(alice)
        self.assertKeystoneUnavailable(response)
        self.assertEqual(set(), self.list_ids(alice))
        self.assertEqual(trusts_before, self.trust_ids(alice))

    def test_trust_endpoint_unreachable_is_503_and_creates_nothing(self):
        # The service user is known already; creating the trust, as the
        # user, is what fails.
        alice = self.keystone.alice
        kept = self.create_policy(alice)
        trusts_before = self.trust_ids(alice)
        self.flags(group=service_credentials.GROUP,
                   auth_url=closed_port_url())
        response = self.post_policy(alice)
        self.assertKeystoneUnavailable(response)
        self.assertEqual({kept['id']}, self.list_ids(alice))
        self.assertEqual(trusts_before, self.trust_ids(alice))
        # Keystone is back: the same request works.
        self.flags(group=service_credentials.GROUP,
                   auth_url=self.keystone.auth_url)
        self.create_policy(alice)

    def test_service_user_refused_is_503_for_the_operator(self):
        # A wrong [service_credentials] password: Keystone answers 401 to
        # the service user, which is no fault of the user's request.
        alice = self.keystone.alice
        trusts_before = self.trust_ids(alice)
        self.flags(group=service_credentials.GROUP, password='wrong')
        response = self.post_policy(alice)
        self.assertEqual(503, response.status_code, response.text)
        [error] = response.json()['errors']
        self.assertEqual('dbaas_scheduler.service_credentials_refused',
                         error['code'])
        self.assertIn('[service_credentials] are refused', error['detail'])
        self.assertIn('The backup policy was not created', error['detail'])
        self.assertEqual(set(), self.list_ids(alice))
        self.assertEqual(trusts_before, self.trust_ids(alice))

    def test_deleting_the_policy_deletes_the_trust(self):
        created = self.create_policy(self.keystone.alice)
        trust_id = self.stored_policy(created['id']).trust_id
        response = self.api('DELETE', '/v1/backup-policies/%s'
                            % created['id'], self.keystone.alice)
        self.assertEqual(204, response.status_code, response.text)
        self.assertIsNone(self.keystone.get_trust(trust_id))

    def test_admin_deleting_the_policy_deletes_the_trust(self):
        created = self.create_policy(self.keystone.alice)
        trust_id = self.stored_policy(created['id']).trust_id
        response = self.api('DELETE', '/v1/backup-policies/%s'
                            % created['id'], self.keystone.admin)
        self.assertEqual(204, response.status_code, response.text)
        self.assertIsNone(self.keystone.get_trust(trust_id))

    def test_deleting_without_a_token_deletes_the_trust(self):
        # dbaas-scheduler-manage, or another service over RPC.
        created = self.create_policy(self.keystone.alice)
        stored = self.stored_policy(created['id'])
        backup_policy_obj.delete_policy(self.context, self.conf, stored)
        self.assertIsNone(self.keystone.get_trust(stored.trust_id))

    def test_a_trust_left_behind_is_deleted_once_keystone_is_back(self):
        created = self.create_policy(self.keystone.alice)
        stored = self.stored_policy(created['id'])
        self.flags(group=service_credentials.GROUP,
                   auth_url=closed_port_url())
        # The service user's session (and token) is made anew.
        keystone.reset()
        # Without a token (dbaas-scheduler-manage, RPC): only the service
        # user could delete it, and its Keystone is away.
        backup_policy_obj.delete_policy(self.context, self.conf, stored)
        self.assertIsNotNone(self.keystone.get_trust(stored.trust_id))
        [pending] = db_trusts.list_pending(self.context)
        self.assertEqual((stored.trust_id, stored.project_id, 0),
                         (pending.trust_id, pending.project_id,
                          pending.attempts))
        self.assertIn('Unable to establish connection', pending.last_error)
        # An engine's pass while Keystone is still away: tried again later.
        self.assertEqual((0, 1), engine_trusts.delete_pending(
            self.conf, self.context))
        [pending] = db_trusts.list_pending(self.context)
        self.assertEqual(1, pending.attempts)
        self.assertGreater(pending.due_at, timeutils.utcnow(True))
        self.assertEqual((0, 0), engine_trusts.delete_pending(
            self.conf, self.context))
        # Keystone is back; the next attempt is due at the latest
        # RETRY_MAX seconds later, and deletes the trust.
        self.flags(group=service_credentials.GROUP,
                   auth_url=self.keystone.auth_url)
        keystone.reset()
        later = timeutils.utcnow(True) + datetime.timedelta(
            seconds=engine_trusts.RETRY_MAX + 1)
        self.assertEqual((1, 0), engine_trusts.delete_pending(
            self.conf, self.context, now=later))
        self.assertIsNone(self.keystone.get_trust(stored.trust_id))
        self.assertEqual([], db_trusts.list_pending(self.context))

    def test_another_member_deleting_the_policy_deletes_the_trust(self):
        # Keystone lets only the trustor (or an admin) delete a trust;
        # The trust is deleted with the policy (interfaces.rst,
        # "Credentials").
        created = self.create_policy(self.keystone.alice)
        trust_id = self.stored_policy(created['id']).trust_id
        colleague = self.keystone.add_user(
            'colleague', self.keystone.project_a, ['member'])
        response = self.api('DELETE', '/v1/backup-policies/%s'
                            % created['id'], colleague)
        self.assertEqual(204, response.status_code, response.text)
        self.assertIsNone(self.keystone.get_trust(trust_id))


class TestInstanceCheck(_KeystoneTestCase):
    """Creating a policy asks Trove for its instance, through its trust."""

    def assertRefused(self, response, instance_id):
        self.assertEqual(400, response.status_code, response.text)
        [error] = response.json()['errors']
        self.assertEqual('dbaas_scheduler.invalid_instance', error['code'])
        self.assertIn('The trove backend cannot back up instance %s: Trove '
                      'answered HTTP 404' % instance_id, error['detail'])

    def test_unknown_instance_is_refused_and_its_trust_deleted(self):
        alice = self.keystone.alice
        trusts_before = self.trust_ids(alice)
        # A UUID, as Trove's ids are, that Trove does not know.
        nosuch = uuidutils.generate_uuid()
        response = self.post_policy(alice, instance_id=nosuch)
        self.assertRefused(response, nosuch)
        self.assertEqual(set(), self.list_ids(alice))
        self.assertEqual(trusts_before, self.trust_ids(alice))
        # It was asked in alice's project, as alice through the trust.
        [token] = self.trove_tokens
        self.assertEqual((self.keystone.project_a, alice.id),
                         (token['project']['id'], token['user']['id']))
        self.assertIn('OS-TRUST:trust', token)

    def test_instance_of_another_project_is_refused(self):
        theirs = self.trove.add_instance(project_id=self.keystone.project_b)
        response = self.post_policy(self.keystone.alice, instance_id=theirs)
        self.assertRefused(response, theirs)
        self.create_policy(self.keystone.bob, instance_id=theirs)

    def test_moving_a_policy_to_an_unknown_instance_is_refused(self):
        alice = self.keystone.alice
        created = self.create_policy(alice)
        path = '/v1/backup-policies/%s' % created['id']
        nosuch = uuidutils.generate_uuid()
        response = self.api('PATCH', path, alice, json={
            'backup_policy': {'instance_id': nosuch}})
        self.assertRefused(response, nosuch)
        self.assertEqual(created['instance_id'], self.api(
            'GET', path, alice).json()['backup_policy']['instance_id'])
        other = self.trove.add_instance(project_id=self.keystone.project_a)
        response = self.api('PATCH', path, alice, json={
            'backup_policy': {'instance_id': other}})
        self.assertEqual(200, response.status_code, response.text)

    def test_trove_unavailable_does_not_stop_a_creation(self):
        # No verdict on the instance: the worker retries at the first run.
        self.trove.inject_failure(503, operation=fake_trove.INSTANCE_SHOW)
        self.create_policy(self.keystone.alice)


class TestWorkerTrusts(_KeystoneTestCase):
    """The worker acts in the user's project through the policy's trust."""

    def test_backup_is_taken_in_the_users_project(self):
        alice = self.keystone.alice
        created = self.create_policy(alice)
        trust_id = self.stored_policy(created['id']).trust_id
        execution = self.run_execution(created['id'])
        self.assertEqual('SUCCEEDED', execution.status, execution.fault)
        [backup] = self.trove.backups(self.keystone.project_a)
        self.assertEqual((execution.backup_id, created['instance_id']),
                         (backup['id'], backup['instance_id']))
        self.assertEqual([], self.trove.backups(self.keystone.project_b))
        self.assertEqual([], self.trove.backups(
            self.keystone.service_project_id))
        # show instance (the check at create), show instance, create,
        # show backup (a first claim looks for no earlier backup): each
        # with a token of alice in project A, obtained by the service user
        # through the trust.
        self.assertEqual(4, len(self.trove_tokens))
        for token in self.trove_tokens:
            self.assertEqual(
                (self.keystone.project_a, alice.id, trust_id,
                 self.keystone.service_user.id, True),
                (token['project']['id'], token['user']['id'],
                 token['OS-TRUST:trust']['id'],
                 token['OS-TRUST:trust']['trustee_user']['id'],
                 token['OS-TRUST:trust']['impersonation']))
            self.assertEqual({'member', 'reader'},
                             {role['name'] for role in token['roles']})
        self.assertTrue(self.stored_policy(created['id']).enabled)

    def trustor(self):
        """A member of project A that the test may break."""
        return self.keystone.add_user('trustor', self.keystone.project_a,
                                      ['member'])

    def test_trustor_losing_the_role_pauses_the_policy(self):
        user = self.trustor()
        created = self.create_policy(user)
        checked = self.instance_checked(created)
        self.keystone.remove_role(user, self.keystone.project_a, 'member')
        execution = self.run_execution(created['id'])
        self.assertTrustBroken(execution, created['id'])
        self.assertIn('Keystone answered 403', execution.fault)
        self.assertEqual(checked, self.trove.requests)

    def test_trustor_deleted_pauses_the_policy(self):
        user = self.trustor()
        created = self.create_policy(user)
        checked = self.instance_checked(created)
        self.keystone.delete_user(user)
        execution = self.run_execution(created['id'])
        self.assertTrustBroken(execution, created['id'])
        self.assertEqual(checked, self.trove.requests)

    def test_trust_breaking_after_a_run_pauses_the_policy(self):
        # The worker holds a trust-scoped token from the first run; Trove
        # refuses it once Keystone revoked it, and a new one is refused.
        user = self.trustor()
        created = self.create_policy(user)
        self.assertEqual('SUCCEEDED',
                         self.run_execution(created['id']).status)
        requests_before = len(self.trove.requests)
        self.keystone.remove_role(user, self.keystone.project_a, 'member')
        execution = self.run_execution(created['id'])
        self.assertTrustBroken(execution, created['id'])
        self.assertIn('Keystone answered 403', execution.fault)
        # One request with the old token (401), then no new token.
        self.assertEqual(requests_before + 1, len(self.trove.requests))
        self.assertEqual(1, self.trove.create_count(created['instance_id']))

    def test_trust_breaking_while_the_backup_runs(self):
        user = self.trustor()
        instance_id = self.trove.add_instance(
            project_id=self.keystone.project_a, build_seconds=3600)
        created = self.create_policy(user, instance_id=instance_id)
        execution = self.start_execution(created['id'])
        self.assertEqual('RUNNING', execution.status, execution.fault)
        self.keystone.remove_role(user, self.keystone.project_a, 'member')
        failed = self.poll(execution.id)
        self.assertIn('the status of backup %s cannot be read'
                      % failed.backup_id, failed.fault)
        self.assertTrustBroken(failed, created['id'])

    def test_wrong_service_password_does_not_pause_policies(self):
        # Keystone answers 401 to a wrong password as to a deleted trust;
        # a configuration error of the service must not pause every
        # policy and tell their users to create them again.
        created = self.create_policy(self.keystone.alice)
        self.flags(group=service_credentials.GROUP, password='wrong')
        execution = self.run_execution(created['id'])
        self.assertEqual('FAILED', execution.status)
        stored = self.stored_policy(created['id'])
        self.assertEqual((True, None),
                         (stored.enabled, stored.paused_reason))
        self.assertIn('[service_credentials]', execution.fault)

    def test_policy_without_a_trust_never_sends_the_service_token(self):
        # Made by dbaas-scheduler-manage, or over RPC without a token: no
        # trust.  The service never sends its own token to project A's
        # URL: the run fails before any request reaches Trove.
        operator = dbaas_context.RequestContext(
            is_admin=True, roles=['admin'], overwrite=False)
        created = backup_policy_obj.create_policy(operator, self.conf, {
            'project_id': self.keystone.project_a,
            'instance_id': self.trove.add_instance(
                project_id=self.keystone.project_a),
            'schedule': '30 2 * * *'})
        self.assertIsNone(created.trust_id)
        checked = len(self.trove.requests)
        execution = self.run_execution(created.id)
        self.assertEqual('FAILED', execution.status)
        self.assertIn('the policy has no Keystone trust', execution.fault)
        self.assertIn('never uses its own token', execution.fault)
        self.assertEqual([], self.trove_tokens)
        self.assertEqual(checked, len(self.trove.requests))
