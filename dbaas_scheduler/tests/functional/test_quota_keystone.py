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
"""Keystone unified limits, enforced by the API with Keystone auth.

A real Keystone (keystone_fixture) gets a service and an endpoint for this
test, a registered limit of 2 for ``backup_policies`` and a project limit
of 3 for project-b; ``backup_policy_manual_runs_per_hour`` has no limit in
Keystone, so ``[quota]``'s applies.  ``[oslo_limit]`` (which oslo.limit
reads from the process-wide configuration only) names the endpoint and
the service user.  The API is served by cheroot in this process, with
keystonemiddleware, a fake Trove that checks tokens and the trusts of a
real create.
"""

import secrets

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslo_limit import limit as oslo_limit

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.objects import quota
from dbaas_scheduler.tests.functional import test_keystone

POLICIES = quota.POLICIES


class TestUnifiedLimits(test_keystone._KeystoneTestCase):

    # Manual runs are cast to no worker: they stay DISPATCHED, which is
    # all the rate counts.
    CAST_LOCALLY = True

    def setUp(self):
        super().setUp()
        self.service_id = self.keystone.call('POST', '/services', json={
            'service': {'type': 'backup-scheduler',
                        'name': 'dbaas-scheduler-%s' % secrets.token_hex(4),
                        'enabled': True}})['service']['id']
        self.addCleanup(self.keystone.call, 'DELETE',
                        '/services/%s' % self.service_id,
                        expect=(204, 404))
        endpoint_id = self.keystone.call('POST', '/endpoints', json={
            'endpoint': {'service_id': self.service_id,
                         'interface': 'public', 'region_id': 'RegionOne',
                         'url': self.api_url}})['endpoint']['id']
        self.addCleanup(self.keystone.call, 'DELETE',
                        '/endpoints/%s' % endpoint_id, expect=(204, 404))
        self.registered = self.keystone.call(
            'POST', '/registered_limits', json={'registered_limits': [{
                'service_id': self.service_id, 'region_id': 'RegionOne',
                'resource_name': POLICIES, 'default_limit': 2}]}
        )['registered_limits'][0]['id']
        self.addCleanup(self.keystone.call, 'DELETE',
                        '/registered_limits/%s' % self.registered,
                        expect=(204, 404))
        self.project_b_limit = self.set_project_limit(
            self.keystone.project_b, 3)
        self.flags(group='quota', manual_runs_per_policy_per_hour=1)
        self.configure_oslo_limit(endpoint_id)

    def configure_oslo_limit(self, endpoint_id):
        # Through a fixture, which unregisters and restores them after the
        # test: oslo.limit reads only the global configuration.
        global_conf = self.useFixture(config_fixture.Config(cfg.CONF))
        global_conf.register_opts(
            ks_loading.get_auth_plugin_conf_options('password'),
            group='oslo_limit')
        global_conf.config(group='oslo_limit', endpoint_id=endpoint_id,
                           **self.keystone.credentials())
        # oslo.limit keeps one Keystone connection per process.
        oslo_limit._SDK_CONNECTION = None
        self.addCleanup(setattr, oslo_limit, '_SDK_CONNECTION', None)

    def set_project_limit(self, project_id, value):
        limit_id = self.keystone.call('POST', '/limits', json={'limits': [{
            'service_id': self.service_id, 'region_id': 'RegionOne',
            'project_id': project_id, 'resource_name': POLICIES,
            'resource_limit': value}]})['limits'][0]['id']
        self.addCleanup(self.keystone.call, 'DELETE',
                        '/limits/%s' % limit_id, expect=(204, 404))
        return limit_id

    def count(self, project_id):
        return len(db_api.list_policies(self.context, project_id=project_id))

    def assertOverQuota(self, response, project_id, limit):
        self.assertEqual(403, response.status_code, response.text)
        error = response.json()['errors'][0]
        self.assertEqual('dbaas_scheduler.quota_exceeded', error['code'])
        self.assertEqual(
            'Quota exceeded: project %s may have at most %d backup '
            'policies and has %d. Delete a policy you no longer need, or '
            'ask the operator for a higher limit (resource '
            'backup_policies).' % (project_id, limit, limit),
            error['detail'])

    def post_trove_policy(self, user):
        return self.post_policy(user, instance_id=self.trove.add_instance(
            project_id=user.project_id))

    def test_registered_limit_applies_without_a_project_limit(self):
        self.assertTrue(quota.unified_limits_configured(self.conf))
        alice = self.keystone.alice
        for _ in range(2):
            self.create_policy(alice)
        trusts = self.trust_ids(alice)
        response = self.post_trove_policy(alice)
        self.assertOverQuota(response, alice.project_id, 2)
        self.assertEqual(2, self.count(alice.project_id))
        # Refused before a trust was made.
        self.assertEqual(trusts, self.trust_ids(alice))

    def test_project_limit_wins_and_changes_apply_at_once(self):
        bob = self.keystone.bob
        for _ in range(3):
            self.create_policy(bob)
        self.assertOverQuota(self.post_trove_policy(bob), bob.project_id, 3)
        self.keystone.call('PATCH', '/limits/%s' % self.project_b_limit,
                           json={'limit': {'resource_limit': 4}})
        self.create_policy(bob)
        self.assertOverQuota(self.post_trove_policy(bob), bob.project_id, 4)
        # Keystone's -1 is no limit.
        self.keystone.call('PATCH', '/limits/%s' % self.project_b_limit,
                           json={'limit': {'resource_limit': -1}})
        self.create_policy(bob)
        self.assertEqual(5, self.count(bob.project_id))

    def test_default_applies_where_keystone_has_no_limit(self):
        alice = self.keystone.alice
        policy = self.create_policy(alice)
        path = '/v1/backup-policies/%s/run' % policy['id']
        self.assertEqual(202, self.api('POST', path, alice, json={})
                         .status_code)
        response = self.api('POST', path, alice, json={})
        self.assertEqual(429, response.status_code, response.text)
        self.assertTrue(3500 < int(response.headers['Retry-After']) <= 3600,
                        response.headers)
        self.assertIn('at most 1 are allowed in an hour and 1 were taken',
                      response.json()['errors'][0]['detail'])

    def test_keystone_limit_of_manual_runs(self):
        limit_id = self.keystone.call(
            'POST', '/registered_limits', json={'registered_limits': [{
                'service_id': self.service_id, 'region_id': 'RegionOne',
                'resource_name': quota.MANUAL_RUNS, 'default_limit': 2}]}
        )['registered_limits'][0]['id']
        self.addCleanup(self.keystone.call, 'DELETE',
                        '/registered_limits/%s' % limit_id,
                        expect=(204, 404))
        alice = self.keystone.alice
        policy = self.create_policy(alice)
        path = '/v1/backup-policies/%s/run' % policy['id']
        statuses = [self.api('POST', path, alice, json={}).status_code
                    for _ in range(3)]
        self.assertEqual([202, 202, 429], statuses)

    def test_noauth_uses_the_configured_limits(self):
        self.flags(auth_strategy='noauth')
        self.assertFalse(quota.unified_limits_configured(self.conf))

    def test_unknown_endpoint_is_503_and_creates_nothing(self):
        cfg.CONF.set_override('endpoint_id', 'no-such-endpoint',
                              group='oslo_limit')
        alice = self.keystone.alice
        response = self.post_trove_policy(alice)
        self.assertEqual(503, response.status_code, response.text)
        self.assertIn('could not be read from Keystone',
                      response.json()['errors'][0]['detail'])
        self.assertEqual(0, self.count(alice.project_id))
