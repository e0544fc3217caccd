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
"""Secure RBAC against a real Keystone: system scope and project admins.

A system-scoped token of Keystone's bootstrap admin runs the cloud; the
admin of another project is a stranger to project A's policies once
``[oslo_policy] enforce_new_defaults`` is set, and still admin of every
project until then (the legacy defaults).
"""

from keystoneauth1.identity import v3
from keystoneauth1 import session as ks_session

from dbaas_scheduler.tests.functional.fixtures import keystone_fixture
from dbaas_scheduler.tests.functional import test_keystone


class _RBACTestCase(test_keystone._KeystoneTestCase):

    new_defaults = None

    def setUp(self):
        super().setUp()
        # Before the first request: the enforcer reads it when it loads
        # its rules.
        self.flags(group='oslo_policy',
                   enforce_new_defaults=self.new_defaults)
        self.policy = self.create_policy(self.keystone.alice)
        self.policy_path = '/v1/backup-policies/%s' % self.policy['id']
        # The admin of project B: "admin in any project".
        self.other_admin = self.keystone.add_user(
            'b-admin', self.keystone.project_b, ['admin'])

    def system_token(self):
        """A system-scoped token of Keystone's bootstrap admin."""
        admin = self.keystone.admin
        return ks_session.Session(auth=v3.Password(
            auth_url=self.keystone.auth_url, username=admin.name,
            password=admin.password, user_domain_id=keystone_fixture.DOMAIN,
            system_scope='all')).get_token()

    def status(self, method, path, user=None, token=None, **kwargs):
        return self.api(method, path, user, token, **kwargs).status_code


class TestNewDefaults(_RBACTestCase):

    new_defaults = True

    def test_a_system_admin_runs_the_cloud(self):
        token = self.system_token()
        response = self.api('GET', '/v1/services', token=token)
        self.assertEqual(200, response.status_code, response.text)
        for query in ({'all_projects': 'true'}, {}):
            response = self.api('GET', '/v1/backup-policies', token=token,
                                params=query)
            self.assertEqual(200, response.status_code, response.text)
            self.assertIn(self.policy['id'], {
                item['id'] for item in response.json()['backup_policies']})
        self.assertEqual(200, self.status('GET', self.policy_path,
                                          token=token))

    def test_the_admin_of_another_project_is_a_stranger(self):
        admin = self.other_admin
        for method, path, body in (
                ('GET', self.policy_path, None),
                ('PATCH', self.policy_path,
                 {'backup_policy': {'keep_last': 1}}),
                ('POST', self.policy_path + '/pause', None),
                ('POST', self.policy_path + '/run', None),
                ('DELETE', self.policy_path, None)):
            self.assertEqual(404, self.status(method, path, admin,
                                              json=body), (method, path))
        self.assertEqual(403, self.status(
            'GET', '/v1/backup-policies?all_projects=true', admin))
        self.assertEqual(403, self.status('GET', '/v1/services', admin))
        self.assertEqual(set(), self.list_ids(admin))
        # Nothing changed.
        response = self.api('GET', self.policy_path, self.keystone.alice)
        self.assertEqual(200, response.status_code, response.text)
        self.assertEqual(self.policy['keep_last'],
                         response.json()['backup_policy']['keep_last'])
        self.assertTrue(response.json()['backup_policy']['enabled'])

    def test_project_personas(self):
        self.assertEqual(200, self.status('GET', self.policy_path,
                                          self.keystone.carol))
        self.assertEqual(403, self.status(
            'PATCH', self.policy_path, self.keystone.carol,
            json={'backup_policy': {'keep_last': 1}}))
        self.assertEqual(200, self.status(
            'PATCH', self.policy_path, self.keystone.alice,
            json={'backup_policy': {'keep_last': 2}}))
        self.assertEqual(403, self.status('GET', '/v1/services',
                                          self.keystone.alice))


class TestLegacyDefaults(_RBACTestCase):

    new_defaults = False

    def test_admin_in_any_project_is_admin_of_every_project(self):
        admin = self.other_admin
        self.assertEqual(200, self.status('GET', self.policy_path, admin))
        self.assertEqual(200, self.status('GET', '/v1/services', admin))
        # System-scoped tokens work too.
        self.assertEqual(200, self.status('GET', '/v1/services',
                                          token=self.system_token()))
