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
"""Which Trove notifications the engines act on, and in which project."""

from unittest import mock

import fixtures
from oslo_db import exception as db_exc
import oslo_messaging as messaging

from dbaas_scheduler.engine import notification_listener as listener
from dbaas_scheduler.tests import base


class TestTrustedPublishers(base.TestCase):

    def test_the_defaults_match_what_trove_sends(self):
        for publisher in ('0.0.0.0', 'taskmanager.trove-1',
                          'conductor.trove-2'):
            self.assertTrue(listener.trusted_publisher(self.conf, publisher),
                            publisher)
        for publisher in ('nova-compute.host', 'trove-taskmanager.host',
                          'TASKMANAGER.x', '', None, 42):
            self.assertFalse(listener.trusted_publisher(self.conf,
                                                        publisher),
                             publisher)

    def test_an_operators_patterns(self):
        self.flags(trove_notification_publishers=['trove-?', '10.0.0.*'],
                   group='engine')
        self.assertTrue(listener.trusted_publisher(self.conf, 'trove-1'))
        self.assertTrue(listener.trusted_publisher(self.conf, '10.0.0.7'))
        self.assertFalse(listener.trusted_publisher(self.conf, '0.0.0.0'))


class TestEndpoint(base.TestCase):

    def setUp(self):
        super().setUp()
        self.delete = self.useFixture(fixtures.MockPatch(
            'dbaas_scheduler.objects.backup_policy.'
            'delete_policies_for_instance', return_value=[])).mock
        self.endpoint = listener.TroveNotificationEndpoint(self.conf)

    def info(self, publisher, payload):
        return self.endpoint.info({}, publisher, 'trove.instance.delete',
                                  payload, {})

    def test_acts_on_trove_policies_of_the_payloads_project(self):
        self.info('0.0.0.0', {'instance_id': 'i', 'tenant_id': 'p'})
        self.delete.assert_called_once_with(
            mock.ANY, self.conf, 'i', project_id='p', backend='trove')

    def test_ignores_what_it_cannot_trust_or_place(self):
        with self.assertLogs(listener.LOG.logger, 'WARNING') as logs:
            self.info('nova.host', {'instance_id': 'i', 'tenant_id': 'p'})
            self.info('0.0.0.0', {'instance_id': 'i'})
            self.info('0.0.0.0', {'tenant_id': 'p'})
            self.info('0.0.0.0', ['not', 'a', 'dict'])
        self.delete.assert_not_called()
        self.assertEqual(4, len(logs.records))
        self.assertIn("publisher 'nova.host' ignored", logs.output[0])
        self.assertIn('without a tenant_id', logs.output[1])


class TestCreatedInstances(base.TestCase):

    def setUp(self):
        super().setUp()
        self.enrol = self.useFixture(fixtures.MockPatch(
            'dbaas_scheduler.objects.template.enrol_new_instance',
            return_value=[])).mock
        self.endpoint = listener.TroveNotificationEndpoint(self.conf)

    def test_the_filter_takes_the_end_of_a_creation_only(self):
        rule = listener.TroveNotificationEndpoint.filter_rule

        def taken(event_type):
            return rule.match({}, '0.0.0.0', event_type, {}, {})

        self.assertTrue(taken('trove.instance.create.end'))
        # What Trove 26 sends once the instance is ACTIVE (its task
        # manager's TroveInstanceCreate); there is no create.end.
        self.assertTrue(taken('trove.instance.create'))
        self.assertFalse(taken('trove.instance.create.start'))
        self.assertTrue(taken('trove.instance.delete'))

    def test_the_payloads_project_enrols_the_instance(self):
        self.endpoint.info({}, '0.0.0.0', 'trove.instance.create.end',
                           {'instance_id': 'i', 'tenant_id': 'p'}, {})
        self.enrol.assert_called_once_with(mock.ANY, self.conf, 'p', 'i',
                                           'trove')

    def test_troves_own_event_enrols_the_instance(self):
        self.endpoint.info({}, '0.0.0.0', 'trove.instance.create',
                           {'instance_id': 'i', 'tenant_id': 'p'}, {})
        self.enrol.assert_called_once_with(mock.ANY, self.conf, 'p', 'i',
                                           'trove')

    def test_an_untrusted_publisher_enrols_nothing(self):
        with self.assertLogs(listener.LOG.logger, 'WARNING'):
            self.endpoint.info({}, 'nova.host', 'trove.instance.create.end',
                               {'instance_id': 'i', 'tenant_id': 'p'}, {})
        self.enrol.assert_not_called()

    def created(self):
        return self.endpoint.info({}, '0.0.0.0', 'trove.instance.create.end',
                                  {'instance_id': 'i', 'tenant_id': 'p'}, {})

    def test_a_database_outage_puts_it_back_in_its_queue(self):
        self.useFixture(fixtures.MockPatch(
            'dbaas_scheduler.engine.notification_listener.REQUEUE_DELAY', 0))
        self.enrol.side_effect = db_exc.DBConnectionError('gone')
        self.assertEqual(messaging.NotificationResult.REQUEUE, self.created())

    def test_any_other_error_is_not_put_back(self):
        self.enrol.side_effect = ValueError('bad')
        self.assertRaises(ValueError, self.created)
