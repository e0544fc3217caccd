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
"""Policy templates enrol each new Trove instance once, on every database.

Trove's ``trove.instance.create.end`` is handed to the engines' endpoint
as the notification listener hands it: delivered again, to an endpoint
made anew (an engine restarted), after an engine died between reserving
the enrolment and creating the policy, or between the two last steps.
"""

from unittest import mock

import oslo_messaging as messaging
from oslo_utils import uuidutils

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import templates as db_templates
from dbaas_scheduler.engine import notification_listener
from dbaas_scheduler import exception
from dbaas_scheduler import keystone
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import template as template_obj
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

TROVE = '0.0.0.0'
CREATED = 'trove.instance.create.end'


class _TemplateTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        # Behind Keystone: a trove policy acts through a trust.
        self.flags(auth_strategy='keystone')
        self.manager = dbaas_context.RequestContext(
            project_id='p', user_id='manager-user',
            roles=['manager', 'member', 'reader'])
        self.admin = dbaas_context.get_admin_context()

    def template(self, name='nightly', project_id='p', **values):
        context = dbaas_context.RequestContext(
            project_id=project_id, user_id='manager-user',
            roles=['manager', 'member', 'reader'])
        values = dict({'name': name, 'backend': 'trove',
                       'schedule': 'H 2 * * *', 'timezone': 'Europe/Berlin',
                       'keep_daily': 7}, **values)
        return template_obj.create_template(context, self.conf, values)

    def announce(self, instance_id, project_id='p', publisher=TROVE,
                 endpoint=None):
        endpoint = endpoint or notification_listener.TroveNotificationEndpoint(
            self.conf)
        result = endpoint.info({}, publisher, CREATED, {
            'instance_id': instance_id, 'tenant_id': project_id}, {})
        self.assertEqual(messaging.NotificationResult.HANDLED, result)

    def policies_of(self, instance_id):
        return db_api.list_policies(self.admin, instance_id=instance_id)

    def test_a_new_instance_gets_one_paused_policy_per_template(self):
        nightly = self.template()
        weekly = self.template('weekly', schedule='H 3 * * 0',
                               keep_weekly=4)
        instance = uuidutils.generate_uuid()
        self.announce(instance)
        made = self.policies_of(instance)
        self.assertEqual(2, len(made))
        by_name = {policy.name: policy for policy in made}
        self.assertEqual({'nightly-%s' % instance, 'weekly-%s' % instance},
                         set(by_name))
        policy = by_name['nightly-%s' % instance]
        self.assertFalse(policy.enabled)
        self.assertIsNone(policy.trust_id)
        self.assertIsNone(policy.next_execution_time)
        self.assertEqual(template_obj.ADOPT_REASON, policy.paused_reason)
        self.assertEqual(('p', 'trove', 'Europe/Berlin', 7),
                         (policy.project_id, policy.backend,
                          policy.timezone, policy.keep_daily))
        # H is resolved with the policy's own id, as for any policy.
        self.assertNotIn('H', policy.resolved_schedule)
        self.assertEqual(
            {nightly.id, weekly.id},
            {t.id for t in db_templates.list_templates(self.admin)
             if instance in db_templates.enrolments(self.admin, t.id)})

    def test_redelivery_and_a_restarted_engine_create_nothing_more(self):
        self.template()
        instance = uuidutils.generate_uuid()
        for _ in range(3):
            self.announce(instance)
        # An engine restarted: a new endpoint, the same database.
        restarted = notification_listener.TroveNotificationEndpoint(
            self.conf)
        self.announce(instance, endpoint=restarted)
        self.assertEqual(1, len(self.policies_of(instance)))

    def test_an_engine_that_died_after_the_reservation(self):
        template = self.template()
        instance = uuidutils.generate_uuid()
        reserved = db_templates.reserve_enrolment(
            self.admin, template, instance, uuidutils.generate_uuid(),
            template.created_at)
        self.assertEqual([], self.policies_of(instance))
        self.announce(instance)
        self.announce(instance)
        made = self.policies_of(instance)
        self.assertEqual([reserved.policy_id], [p.id for p in made])

    def test_an_engine_that_died_before_marking_the_enrolment(self):
        self.template()
        instance = uuidutils.generate_uuid()
        killed = RuntimeError('engine killed')
        with mock.patch.object(db_templates, 'mark_policy_created',
                               autospec=True, side_effect=killed):
            self.assertRaises(RuntimeError, self.announce, instance)
        self.assertEqual(1, len(self.policies_of(instance)))
        self.announce(instance)
        self.assertEqual(1, len(self.policies_of(instance)))

    def test_a_deleted_policy_is_not_made_again(self):
        self.template()
        instance = uuidutils.generate_uuid()
        self.announce(instance)
        policy, = self.policies_of(instance)
        backup_policy_obj.delete_policy(self.admin, self.conf, policy)
        self.announce(instance)
        self.assertEqual([], self.policies_of(instance))

    def test_only_the_payloads_project_and_a_trusted_publisher(self):
        self.template()
        self.template(project_id='q')
        instance = uuidutils.generate_uuid()
        self.announce(instance, publisher='nova-compute.attacker')
        self.assertEqual([], self.policies_of(instance))
        self.announce(instance, project_id='r')
        self.assertEqual([], self.policies_of(instance))
        self.announce(instance, project_id='q')
        self.assertEqual(['q'],
                         [p.project_id for p in self.policies_of(instance)])

    def test_an_instance_id_trove_could_not_name_is_ignored(self):
        self.template()
        self.announce('not-a-uuid\nforged log line')
        self.assertEqual([], db_api.list_policies(self.admin))

    def test_a_local_template_makes_enabled_policies(self):
        self.flags(instance_projects={'orders': 'p', 'wiki': 'q'},
                   group='local_backend')
        template = self.template(backend='local')
        dry = template_obj.apply_template(self.manager, self.conf, template,
                                          dry_run=True)
        self.assertEqual([{'instance_id': 'orders', 'policy_id': None,
                           'action': 'create'}], dry)
        self.assertEqual([], db_api.list_policies(self.admin))
        done = template_obj.apply_template(self.manager, self.conf,
                                           template)
        policy = db_api.get_policy(self.admin, done[0]['policy_id'])
        self.assertTrue(policy.enabled)
        self.assertIsNotNone(policy.next_execution_time)
        again = template_obj.apply_template(self.manager, self.conf,
                                            template)
        self.assertEqual('enrolled', again[0]['action'])
        self.assertEqual(1, len(db_api.list_policies(self.admin)))
        self.assertRaises(exception.Invalid, template_obj.apply_template,
                          self.manager, self.conf, template,
                          instance_ids=['wiki'])

    def test_a_member_adopts_the_policy_with_their_trust(self):
        self.template()
        instance = uuidutils.generate_uuid()
        self.announce(instance)
        policy, = self.policies_of(instance)
        member = dbaas_context.RequestContext(
            project_id='p', user_id='member-user', roles=['member'],
            auth_token='a-token')
        elsewhere = dbaas_context.RequestContext(
            project_id='q', user_id='other', roles=['admin'],
            auth_token='b-token')
        with mock.patch.object(keystone, 'create_trust', autospec=True,
                               return_value='trust-1') as create:
            self.assertRaises(exception.Invalid,
                              backup_policy_obj.resume_policy, elsewhere,
                              self.conf, policy)
            create.assert_not_called()
            resumed = backup_policy_obj.resume_policy(member, self.conf,
                                                      policy)
        create.assert_called_once()
        self.assertTrue(resumed.enabled)
        self.assertEqual(('trust-1', 'member-user', None),
                         (resumed.trust_id, resumed.user_id,
                          resumed.paused_reason))

    def test_deleting_a_template_keeps_its_policies(self):
        template = self.template()
        instance = uuidutils.generate_uuid()
        self.announce(instance)
        template_obj.delete_template(self.manager, template)
        self.assertRaises(exception.TemplateNotFound,
                          template_obj.get_template, self.admin, template.id)
        self.assertEqual(1, len(self.policies_of(instance)))
        self.assertEqual({}, db_templates.enrolments(self.admin,
                                                     template.id))

    def test_what_a_template_refuses(self):
        self.assertRaises(exception.Invalid, self.template,
                          schedule_type='interval', schedule='3600')
        self.assertRaises(exception.InvalidSchedule, self.template,
                          schedule='0 0 30 2 *')
        self.template()
        self.assertRaises(exception.TemplateNameExists, self.template)


class TestTemplatesSQLite(_TemplateTests, base.TestCase):
    DRIVER = 'sqlite'


class TestTemplatesMySQL(_TemplateTests, base.TestCase):
    DRIVER = 'mysql'


class TestTemplatesPostgreSQL(_TemplateTests, base.TestCase):
    DRIVER = 'postgresql'
