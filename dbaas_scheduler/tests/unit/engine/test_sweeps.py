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
"""Pacing the sweeps' casts: the token bucket and a sweep pass.  No I/O."""

import datetime
from unittest import mock

from dbaas_scheduler.engine import sweeps
from dbaas_scheduler.tests import base

NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=datetime.timezone.utc)
CLAIM_WAITING = 'dbaas_scheduler.db.scheduling.claim_waiting_executions'


class FakeClock:

    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class TestRecastLimiter(base.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = FakeClock()
        self.limiter = sweeps.RecastLimiter(100, 500, clock=self.clock)

    def test_starts_full_and_never_exceeds_the_burst(self):
        self.assertEqual(500, self.limiter.available())
        self.clock.now += 3600
        self.assertEqual(500, self.limiter.available())

    def test_refills_at_the_rate(self):
        self.limiter.spend(500)
        self.assertEqual(0, self.limiter.available())
        self.clock.now += 0.5
        self.assertEqual(50, self.limiter.available())
        self.limiter.spend(50)
        self.clock.now += 2
        self.assertEqual(200, self.limiter.available())

    def test_average_rate_over_many_passes(self):
        # A pass every 10 s, each taking all it may: after the first
        # (the burst), 100 a second on average, never more.
        cast = []
        for _ in range(30):
            budget = self.limiter.available()
            self.limiter.spend(budget)
            cast.append(budget)
            self.clock.now += 10
        self.assertEqual(500, cast[0])
        self.assertEqual(500 + 29 * 500, sum(cast))
        self.limiter = sweeps.RecastLimiter(100, 5000, clock=self.clock)
        cast = []
        for _ in range(30):
            budget = self.limiter.available()
            self.limiter.spend(budget)
            cast.append(budget)
            self.clock.now += 10
        self.assertEqual(5000 + 29 * 1000, sum(cast))
        self.assertEqual({1000}, set(cast[1:]))

    def test_a_clock_going_back_adds_nothing(self):
        self.limiter.spend(500)
        self.clock.now -= 60
        self.assertEqual(0, self.limiter.available())


@mock.patch('dbaas_scheduler.engine.protection.sweep',
            new=mock.Mock(return_value=[]))
@mock.patch('dbaas_scheduler.db.scheduling.expire_unclaimed_executions',
            new=mock.Mock(return_value=[]))
@mock.patch('dbaas_scheduler.db.services.delete_expired_services',
            autospec=True, return_value=0)
@mock.patch('dbaas_scheduler.dispatch.dispatch', autospec=True,
            side_effect=lambda api, ctx, ids, per, at: list(ids))
@mock.patch('dbaas_scheduler.db.scheduling.reclaim_expired_leases',
            autospec=True, return_value=[])
class TestSweepPacing(base.TestCase):
    """A backlog of waiting executions goes out within the budget."""

    def setUp(self):
        super().setUp()
        self.flags(batch_size=100, group='engine')
        self.backlog = ['e-%05d' % n for n in range(2000)]
        self.clock = FakeClock()

    def claim(self, context, now, stale_before, limit, limits=None):
        taken, self.backlog = self.backlog[:limit], self.backlog[limit:]
        return taken

    def test_a_pass_casts_at_most_its_budget(self, reclaim, dispatch,
                                             delete):
        limiter = sweeps.RecastLimiter(50, 250, clock=self.clock)
        with mock.patch(CLAIM_WAITING,
                        autospec=True, side_effect=self.claim) as claim:
            result = sweeps.sweep('ctx', 'api', self.conf, NOW, limiter)
            self.assertEqual(250, result.recast)
            self.assertTrue(result.deferred)
            # Batches of batch_size, the last one cut to the budget.
            self.assertEqual([100, 100, 50],
                             [c.args[3] for c in claim.call_args_list])
            self.assertEqual(250, sum(len(c.args[2])
                                      for c in dispatch.call_args_list))
            self.assertEqual(1750, len(self.backlog))

            # The next pass, 2 s later: 100 more, at 50 a second.
            self.clock.now += 2
            self.assertEqual(
                100, sweeps.sweep('ctx', 'api', self.conf, NOW,
                                  limiter).recast)
            # At once again: nothing; no claim is even tried.
            claim.reset_mock()
            result = sweeps.sweep('ctx', 'api', self.conf, NOW, limiter)
            self.assertEqual((0, True), (result.recast, result.deferred))
            claim.assert_not_called()

    def test_resumed_executions_share_the_budget_and_go_first(
            self, reclaim, dispatch, delete):
        reclaim.side_effect = [[('r-%d' % n, 'dead') for n in range(100)],
                               [('r-x', 'dead')]]
        limiter = sweeps.RecastLimiter(50, 150, clock=self.clock)
        with mock.patch(CLAIM_WAITING,
                        autospec=True, side_effect=self.claim):
            result = sweeps.sweep('ctx', 'api', self.conf, NOW, limiter)
        self.assertEqual((101, 49, True),
                         (result.resumed, result.recast, result.deferred))
        self.assertEqual(['r-%d' % n for n in range(100)],
                         dispatch.call_args_list[0].args[2])

    def test_small_backlog_is_cast_in_one_pass(self, reclaim, dispatch,
                                               delete):
        self.backlog = self.backlog[:130]
        limiter = sweeps.RecastLimiter(50, 5000, clock=self.clock)
        with mock.patch(CLAIM_WAITING,
                        autospec=True, side_effect=self.claim):
            result = sweeps.sweep('ctx', 'api', self.conf, NOW, limiter)
        self.assertEqual((130, False), (result.recast, result.deferred))

    def test_a_failed_cast_ends_the_pass(self, reclaim, dispatch, delete):
        dispatch.side_effect = lambda api, ctx, ids, per, at: list(ids)[:10]
        limiter = sweeps.RecastLimiter(50, 5000, clock=self.clock)
        with mock.patch(CLAIM_WAITING,
                        autospec=True, side_effect=self.claim) as claim:
            result = sweeps.sweep('ctx', 'api', self.conf, NOW, limiter)
        self.assertEqual((10, False), (result.recast, result.deferred))
        claim.assert_called_once()

    def test_without_a_limiter_a_pass_is_capped(self, reclaim, dispatch,
                                                delete):
        self.flags(sweep_recast_max_per_pass=300, group='engine')
        with mock.patch(CLAIM_WAITING,
                        autospec=True, side_effect=self.claim):
            result = sweeps.sweep('ctx', 'api', self.conf, NOW)
        self.assertEqual((300, True), (result.recast, result.deferred))
