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
"""How the poller reports a state it could not record."""

import logging
import types

import fixtures
from oslo_db import exception as db_exc
from oslotest import base
import sqlalchemy as sa

from dbaas_scheduler.worker import poller

EXECUTION = types.SimpleNamespace(id='e1', backup_id='b1')


class TestRecordingFailed(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name='dbaas_scheduler.worker.poller', level=logging.INFO,
            format='%(levelname)s %(message)s'))

    def raised(self, exc):
        before = len(self.log.output)
        try:
            raise exc
        except Exception as caught:
            poller._recording_failed(EXECUTION, caught)
        return self.log.output[before:]

    def test_a_database_down_is_one_line(self):
        refused = sa.exc.OperationalError(
            'SELECT 1', {}, Exception('connection to server at "127.0.0.1"'
                                      ', port 5432 failed:\n\tConnection '
                                      'refused'))
        for exc in (refused, db_exc.DBConnectionError(refused)):
            output = self.raised(exc)
            self.assertEqual(1, len(output.splitlines()), output)
            self.assertIn('WARNING Execution e1: could not record the state '
                          'of backup b1: the database is unavailable',
                          output)
            self.assertIn('Connection refused); next pass', output)
            self.assertNotIn('Traceback', output)

    def test_anything_else_keeps_its_traceback(self):
        output = self.raised(KeyError('bug'))
        self.assertIn('ERROR Execution e1: recording the state of backup b1 '
                      'failed', output)
        self.assertIn('Traceback', output)
