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
"""A process's registration in the service table, and its identity."""

import json
import os
import subprocess
import sys
import time
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
        self.assertEqual(servicegroup.ProcessIdentity.of(),
                         servicegroup.ProcessIdentity.parse(
                             values['process_identity']))
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


class TestProcessIdentity(base.TestCase):
    """Real processes: this one, and children that have exited."""

    def _exited_child(self):
        child = subprocess.Popen([sys.executable, '-c', 'pass'])
        identity = servicegroup.ProcessIdentity.of(child.pid)
        child.wait()
        return identity

    def test_this_process_is_alive(self):
        me = servicegroup.ProcessIdentity.of()
        self.assertEqual(os.getpid(), me.pid)
        self.assertEqual(servicegroup.ALIVE, me.judge())

    def test_written_and_read_back(self):
        me = servicegroup.ProcessIdentity.of()
        text = str(me)
        self.assertLessEqual(len(text), 255)
        self.assertEqual(me, servicegroup.ProcessIdentity.parse(text))

    def test_not_an_identity(self):
        for text in (None, '', 'pid 12', 'a b c d e', 'a b twelve 3',
                     'a b 0 3', 'a b -1 3'):
            self.assertIsNone(servicegroup.ProcessIdentity.parse(text), text)

    def test_an_exited_process_is_gone(self):
        identity = self._exited_child()
        self.assertIsNotNone(identity)
        self.assertEqual(servicegroup.GONE, identity.judge())

    def test_a_reused_pid_is_gone(self):
        # Another process with the recorded pid: not the one recorded.
        me = servicegroup.ProcessIdentity.of()
        earlier = me._replace(start_time=me.start_time - 1)
        self.assertEqual(servicegroup.GONE, earlier.judge())

    def test_a_zombie_is_gone(self):
        child = subprocess.Popen([sys.executable, '-c', 'pass'])
        identity = servicegroup.ProcessIdentity.of(child.pid)
        self.addCleanup(child.wait)

        def zombie():
            stat = servicegroup.process_stat(child.pid)
            return stat is not None and stat[0] == 'Z'
        self.assertTrue(process_wait(zombie))
        self.assertEqual(servicegroup.GONE, identity.judge())

    def test_a_process_hidden_from_proc_is_not_judged(self):
        # /proc mounted with hidepid: another user's live process has no
        # entry there, but the kernel still knows it.
        me = servicegroup.ProcessIdentity.of()
        self.useFixture(fixtures.MockPatchObject(
            servicegroup, 'process_stat', return_value=None))
        self.useFixture(fixtures.MockPatchObject(
            servicegroup.os, 'kill', side_effect=PermissionError))
        self.assertEqual(servicegroup.UNKNOWN, me.judge())

    def test_another_boot_or_pid_namespace_is_unknown(self):
        # Even for a process that is certainly gone here: its pid is
        # another boot's or another namespace's.
        identity = self._exited_child()
        for other in (identity._replace(boot_id='another-boot'),
                      identity._replace(pid_namespace='pid:[1]')):
            self.assertEqual(servicegroup.UNKNOWN, other.judge())


def process_wait(predicate, timeout=10):
    """Wait for ``predicate``; whether it came true."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


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
