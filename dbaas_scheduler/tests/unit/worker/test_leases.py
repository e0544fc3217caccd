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
"""The claims a worker holds and the renewal of their leases."""

from unittest import mock

from dbaas_scheduler import stats
from dbaas_scheduler.tests import base
from dbaas_scheduler.worker import leases


class TestLeaseKeeper(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(lease_duration=60, group='worker')
        self.keeper = leases.LeaseKeeper(self.conf)

    def test_renewed_five_times_per_lease(self):
        self.assertEqual(12, self.keeper.renew_interval)

    def test_a_newer_claim_replaces_an_older_one(self):
        self.keeper.hold({'e-1': 'c-1', 'e-2': 'c-1'})
        self.keeper.hold({'e-1': 'c-2'})
        # The older claim's holder cannot drop the newer one.
        self.keeper.drop('e-1', 'c-1')
        self.assertEqual({'e-1': 'c-2', 'e-2': 'c-1'}, self.keeper.claims())
        self.assertFalse(self.keeper.holds('e-1', 'c-1'))
        self.assertTrue(self.keeper.holds('e-1', 'c-2'))

    def test_adopt_keeps_what_is_held(self):
        self.keeper.hold({'e-1': 'c-2'})
        self.keeper.adopt({'e-1': 'c-1', 'e-3': 'c-3'})
        self.assertEqual({'e-1': 'c-2', 'e-3': 'c-3'}, self.keeper.claims())

    @mock.patch.object(leases.db_leases, 'lost_claims', autospec=True,
                       return_value=set())
    @mock.patch.object(leases.db_leases, 'renew_leases', autospec=True)
    def test_a_claim_the_renewal_misses_is_dropped(self, renew, lost):
        self.keeper.hold({'e-1': 'c-1', 'e-2': 'c-1'})
        renew.return_value = {'e-1'}
        self.assertEqual((1, 1), self.keeper.renew(mock.sentinel.context))
        [call] = renew.call_args_list
        self.assertEqual({'e-1': 'c-1', 'e-2': 'c-1'}, call.args[1])
        self.assertEqual(60, call.args[3])
        self.assertEqual({'e-1': 'c-1'}, self.keeper.claims())

    @mock.patch.object(leases.db_leases, 'lost_claims', autospec=True)
    @mock.patch.object(leases.db_leases, 'renew_leases', autospec=True)
    def test_claims_taken_away_are_counted(self, renew, lost_claims):
        stats.REGISTRY.reset()
        self.addCleanup(stats.REGISTRY.reset)
        self.keeper.hold({'e-1': 'c-1', 'e-2': 'c-1', 'e-3': 'c-1'})
        renew.return_value = {'e-1'}
        # e-2 finished under its claim; e-3 was claimed by another.
        lost_claims.return_value = {'e-3'}
        self.assertEqual((1, 2), self.keeper.renew(mock.sentinel.context))
        lost_claims.assert_called_once_with(
            mock.sentinel.context, {'e-2': 'c-1', 'e-3': 'c-1'})
        self.assertEqual(1, stats.LEASE_RENEWALS_LOST.value())
        # Nothing missed, nothing read.
        renew.return_value = {'e-1'}
        self.keeper.renew(mock.sentinel.context)
        lost_claims.assert_called_once()
        # Not knowing which were lost counts none, and renews all the same.
        self.keeper.hold({'e-4': 'c-1'})
        lost_claims.side_effect = RuntimeError('database away')
        self.assertEqual((1, 1), self.keeper.renew(mock.sentinel.context))
        self.assertEqual(1, stats.LEASE_RENEWALS_LOST.value())

    @mock.patch.object(leases.db_leases, 'renew_leases', autospec=True)
    def test_nothing_held_nothing_written(self, renew):
        self.assertEqual((0, 0), self.keeper.renew(mock.sentinel.context))
        renew.assert_not_called()

    @mock.patch.object(leases.db_leases, 'release_claims', autospec=True)
    def test_release_all(self, release):
        self.keeper.hold({'e-1': 'c-1', 'e-2': 'c-2'})
        release.return_value = {'e-1', 'e-2'}
        self.assertEqual(['e-1', 'e-2'],
                         self.keeper.release_all(mock.sentinel.context))
        self.assertEqual({}, self.keeper.claims())
