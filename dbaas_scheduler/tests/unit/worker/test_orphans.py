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
"""Taking over the executions of a dead worker of this host.

The identities are of real processes: this one (alive) and a child that
has exited (gone); the database calls are mocks.
"""

import subprocess
import sys
import types
from unittest import mock

import fixtures

from dbaas_scheduler import servicegroup
from dbaas_scheduler.tests import base
from dbaas_scheduler.worker import orphans


def _dead_identity():
    child = subprocess.Popen([sys.executable, '-c', 'pass'])
    identity = servicegroup.ProcessIdentity.of(child.pid)
    child.wait()
    return str(identity)


def _row(service_id, identity, binary='dbaas-scheduler-worker'):
    return types.SimpleNamespace(id=service_id, host='here', binary=binary,
                                 pid=1, process_identity=identity)


class TestOrphanTaker(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(host='here')
        self.flags(lease_duration=60, group='worker')
        self.runner = mock.Mock()
        self.taker = orphans.OrphanTaker(self.conf, 'me',
                                         self.runner.start_claimed)
        self.rows = self.useFixture(fixtures.MockPatchObject(
            orphans.db_services, 'list_host_services')).mock
        self.delete = self.useFixture(fixtures.MockPatchObject(
            orphans.db_services, 'delete_service_of',
            return_value=True)).mock
        self.claims = self.useFixture(fixtures.MockPatchObject(
            orphans.db_worker, 'list_running_claims')).mock
        self.take = self.useFixture(fixtures.MockPatchObject(
            orphans.db_worker, 'take_over_execution',
            return_value=True)).mock
        self.dead = _dead_identity()
        self.alive = str(servicegroup.ProcessIdentity.of())

    def test_only_gone_processes_are_taken_from(self):
        other_boot = servicegroup.ProcessIdentity.parse(
            self.dead)._replace(boot_id='another-boot')
        rows = [_row('me', self.dead),            # never itself
                _row('live', self.alive),         # e.g. the -all's engine
                _row('old', None),                # before the upgrade
                _row('garbled', 'not an identity'),
                _row('elsewhere', str(other_boot)),
                _row('dead', self.dead)]
        self.assertEqual(['dead'], [row.id for row in orphans.gone_services(
            rows, 'me')])

    def test_every_running_execution_is_taken_under_its_old_token(self):
        self.rows.return_value = [_row('dead', self.dead),
                                  _row('live', self.alive)]
        self.claims.return_value = {'e-2': 'c-old', 'e-1': None}
        self.take.side_effect = [True, False]
        self.assertEqual(['e-1'], self.taker.run_pass(mock.sentinel.ctx))
        self.rows.assert_called_once_with(mock.sentinel.ctx, 'here')
        self.claims.assert_called_once_with(mock.sentinel.ctx, 'dead')
        calls = [c.args for c in self.take.call_args_list]
        # Conditional on each one's token, all under one new claim.
        self.assertEqual([('e-1', None), ('e-2', 'c-old')],
                         [(c[1], c[2]) for c in calls])
        self.assertEqual({'me'}, {c[3] for c in calls})
        [claim_id] = {c[4] for c in calls}
        self.assertNotIn(claim_id, (None, 'c-old'))
        self.assertEqual({60}, {c[6] for c in calls})
        # Resumed as any claim is; then the dead row goes.
        self.runner.start_claimed.assert_called_once_with(
            mock.sentinel.ctx, ['e-1'], claim_id)
        self.delete.assert_called_once_with(mock.sentinel.ctx, 'dead',
                                            self.dead)

    def test_nothing_taken_nothing_started(self):
        self.rows.return_value = [_row('dead', self.dead)]
        self.claims.return_value = {'e-1': 'c-1'}
        self.take.return_value = False      # another worker was first
        self.assertEqual([], self.taker.run_pass(mock.sentinel.ctx))
        self.runner.start_claimed.assert_not_called()
        self.delete.assert_called_once()

    def test_live_rows_are_left_alone(self):
        self.rows.return_value = [_row('live', self.alive)]
        self.assertEqual([], self.taker.run_pass(mock.sentinel.ctx))
        self.claims.assert_not_called()
        self.take.assert_not_called()
        self.delete.assert_not_called()
