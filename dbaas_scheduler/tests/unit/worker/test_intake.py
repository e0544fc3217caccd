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
"""The worker's intake: paused while the database is away, then resumed.

The same on real processes, RabbitMQ and a cut database:
tests/functional/worker/test_worker_processes.py
(``test_a_worker_without_its_database_leaves_casts_queued``).
"""

from unittest import mock

import fixtures
from oslo_db import exception as db_exc

from dbaas_scheduler.tests import base
from dbaas_scheduler.worker import intake
from dbaas_scheduler.worker import service


class FakeServer:

    def __init__(self):
        self.calls = []
        self.recast = []
        self.database_up = False
        self.broker_up = True

    def serve(self):
        self.calls.append('serve')

    def unserve(self):
        self.calls.append('unserve')

    def cast(self, execution_ids):
        if not self.broker_up:
            raise RuntimeError('broker away')
        self.recast.append(list(execution_ids))

    def ping(self, context):
        if not self.database_up:
            raise db_exc.DBConnectionError('gone')


class TestIntake(base.TestCase):

    def setUp(self):
        super().setUp()
        self.conf.set_override('retry_interval', 3, group='database')
        self.server = FakeServer()
        self.wakes = []
        self.intake = intake.Intake(
            self.conf, self.server.serve, self.server.unserve,
            self.server.cast, self.server.ping,
            wake=lambda: self.wakes.append(1))
        self.log = self.useFixture(fixtures.FakeLogger(
            name='dbaas_scheduler.worker.intake'))

    def test_serves_while_the_database_answers(self):
        self.assertEqual(intake.IDLE, self.intake.run_pass(None))
        self.assertEqual([], self.server.calls)
        self.assertFalse(self.intake.paused)

    def test_paused_once_resumed_once(self):
        error = db_exc.DBConnectionError('Lost connection')
        self.intake.database_unreachable(error, ['e1', 'e2'])
        self.intake.database_unreachable(error, ['e3'])
        self.intake.database_unreachable(error)
        self.assertEqual(3, len(self.wakes))
        self.assertTrue(self.intake.paused)
        self.assertEqual(3, self.intake.run_pass(None))
        self.assertEqual(3, self.intake.run_pass(None))
        self.assertEqual(['unserve'], self.server.calls)
        self.assertEqual([['e1', 'e2', 'e3']], self.server.recast)
        self.assertEqual(1, self.log.output.count('takes no casts until'))
        self.assertIn('Lost connection', self.log.output)
        self.server.database_up = True
        self.assertEqual(intake.IDLE, self.intake.run_pass(None))
        self.assertEqual(['unserve', 'serve'], self.server.calls)
        self.assertFalse(self.intake.paused)
        self.assertIn('takes casts again', self.log.output)
        self.assertEqual(intake.IDLE, self.intake.run_pass(None))
        self.assertEqual(['unserve', 'serve'], self.server.calls)

    def test_a_recast_that_fails_is_tried_again(self):
        self.server.broker_up = False
        self.intake.database_unreachable(
            db_exc.DBConnectionError('gone'), ['e1'])
        self.intake.run_pass(None)
        self.assertEqual([], self.server.recast)
        self.assertIn('Could not cast again executions e1', self.log.output)
        self.server.broker_up = True
        self.intake.run_pass(None)
        self.assertEqual([['e1']], self.server.recast)


class TestClaimWithoutDatabase(base.TestCase):

    def _runner(self, database_unreachable=None):
        parts = service.build_parts(
            self.conf, 'me', database_unreachable=database_unreachable)
        self.addCleanup(parts.close)
        return parts.runner

    @mock.patch('dbaas_scheduler.db.worker.claim_and_load', autospec=True,
                side_effect=db_exc.DBConnectionError('gone'))
    def test_the_intake_is_told_and_nothing_is_raised(self, claim):
        told = []
        runner = self._runner(lambda error, ids=(): told.append((error, ids)))
        self.assertEqual([], runner.run(None, ['e1', 'e2']))
        [(error, ids)] = told
        self.assertIsInstance(error, db_exc.DBConnectionError)
        self.assertEqual(['e1', 'e2'], list(ids))

    @mock.patch('dbaas_scheduler.db.worker.claim_and_load', autospec=True,
                side_effect=db_exc.DBConnectionError('gone'))
    def test_without_an_intake_the_error_is_raised(self, claim):
        self.assertRaises(db_exc.DBConnectionError,
                          self._runner().run, None, ['e1'])
