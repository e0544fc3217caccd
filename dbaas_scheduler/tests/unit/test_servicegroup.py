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
"""A process's registration in the service table."""

import json
import os
from unittest import mock

import fixtures
from oslo_db import exception as db_exc

from dbaas_scheduler.db import services as db_services
from dbaas_scheduler import servicegroup
from dbaas_scheduler import stats
from dbaas_scheduler.tests import base


class TestServiceRegistration(base.TestCase):

    def setUp(self):
        super().setUp()
        self.insert = self.useFixture(fixtures.MockPatchObject(
            db_services, 'register_service')).mock
        self.stamp = self.useFixture(fixtures.MockPatchObject(
            db_services, 'update_service_heartbeat',
            return_value=True)).mock
        self.registration = servicegroup.ServiceRegistration(
            self.conf, 'ctx', 'dbaas-scheduler-worker', 'topic')

    def test_first_heartbeat_registers_this_process(self):
        self.registration.heartbeat()
        [(context, values)] = [c.args for c in self.insert.call_args_list]
        self.assertEqual((self.registration.service_id, os.getpid()),
                         (values['id'], values['pid']))
        self.registration.heartbeat()
        self.assertEqual(1, self.insert.call_count)
        self.stamp.assert_called_once()

    def test_an_insert_committed_before_its_answer_was_lost(self):
        # The retried insert finds the row: it is ours, and beats on.
        self.insert.side_effect = db_exc.DBDuplicateEntry()
        self.registration.heartbeat()
        self.assertTrue(self.registration.registered)
        self.assertEqual(self.registration.service_id,
                         self.stamp.call_args.args[1])
        self.insert.side_effect = None
        self.registration.heartbeat()
        self.assertEqual(1, self.insert.call_count)

    def test_an_expired_row_is_made_again(self):
        self.registration.heartbeat()
        self.stamp.return_value = False
        self.registration.heartbeat()
        self.assertEqual(2, self.insert.call_count)

    def test_every_registration_is_another_id(self):
        other = servicegroup.ServiceRegistration(
            self.conf, 'ctx', 'dbaas-scheduler-worker', 'topic')
        self.assertNotEqual(self.registration.service_id, other.service_id)


class TestServiceStats(base.TestCase):

    def setUp(self):
        super().setUp()
        self.insert = self.useFixture(fixtures.MockPatchObject(
            db_services, 'register_service')).mock
        self.stamp = self.useFixture(fixtures.MockPatchObject(
            db_services, 'update_service_heartbeat',
            return_value=True)).mock
        self.registry = stats.Registry()
        self.lost = self.registry.counter('lost_total')
        self.registry.counter('not_mine_total')

    def test_each_heartbeat_writes_the_services_metrics(self):
        registration = servicegroup.ServiceRegistration(
            self.conf, 'ctx', 'dbaas-scheduler-worker', 'topic',
            stats_metrics=['lost_total'], registry=self.registry)
        registration.heartbeat()
        [(_, values)] = [c.args for c in self.insert.call_args_list]
        self.assertEqual({'lost_total': [[[], 0]]},
                         json.loads(values['stats'])['counters'])
        self.lost.inc(amount=2)
        registration.heartbeat()
        self.assertEqual({'lost_total': [[[], 2]]}, json.loads(
            self.stamp.call_args.kwargs['stats'])['counters'])

    def test_a_service_without_metrics_writes_none(self):
        registration = servicegroup.ServiceRegistration(
            self.conf, 'ctx', 'dbaas-scheduler-api', registry=self.registry)
        registration.heartbeat()
        registration.heartbeat()
        self.assertIsNone(self.insert.call_args.args[1]['stats'])
        self.assertIsNone(self.stamp.call_args.kwargs['stats'])

    def test_the_heartbeat_beats_when_the_metrics_fail(self):
        registration = servicegroup.ServiceRegistration(
            self.conf, 'ctx', 'dbaas-scheduler-worker',
            stats_metrics=['lost_total'], registry=self.registry)
        registration.heartbeat()
        with mock.patch.object(self.registry, 'snapshot', autospec=True,
                               side_effect=RuntimeError('bug')):
            registration.heartbeat()
        self.assertIsNone(self.stamp.call_args.kwargs['stats'])
