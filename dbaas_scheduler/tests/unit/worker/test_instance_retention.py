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
"""Retention over an instance's backup chains, and when a chain starts."""

import datetime
import types

from oslotest import base

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.worker import backup_request
from dbaas_scheduler.worker import retention

UTC = datetime.timezone.utc
START = datetime.datetime(2027, 1, 1, tzinfo=UTC)
NOW = START + datetime.timedelta(days=30)
DONE = backends.BackupStatus.COMPLETED


def backup(backup_id, hour, parent_id=None, status=DONE):
    return backends.Backup(
        id=backup_id, instance_id='db', status=status, parent_id=parent_id,
        created_at=START + datetime.timedelta(hours=hour))


def rules(**values):
    return retention.PolicyRetention(retention.RetentionRules(**values), UTC)


class TestInstanceRetention(base.BaseTestCase):

    def plan(self, backups, owners, policies, policy_id='A'):
        return retention.plan_instance_retention(backups, policy_id, owners,
                                                 policies, NOW)

    def test_another_policys_kept_incremental_keeps_its_parent(self):
        # Issue 10: A's keep_last 1 deleted a1, and Trove took b1 with it.
        backups = [backup('a1', 1), backup('b1', 2, 'a1'), backup('a2', 3)]
        owners = {'a1': 'A', 'b1': 'B', 'a2': 'A'}
        decision = self.plan(backups, owners, {
            'A': rules(keep_last=1), 'B': rules(keep_last=5)})
        self.assertEqual([], decision.delete)
        self.assertEqual(['parent of b1'], decision.keep['a1'])
        # B keeps nothing of it any more: a1 goes, b1 with it.
        decision = self.plan(backups + [backup('b2', 4, 'a2')],
                             dict(owners, b2='B'),
                             {'A': rules(keep_last=1),
                              'B': rules(keep_last=1)})
        self.assertEqual(['a1'], [b.id for b in decision.delete])
        self.assertEqual({'b1': 'a1'}, decision.cascade)

    def test_foreign_deleted_policy_and_running_backups_keep_parents(self):
        backups = [backup('a1', 1), backup('m1', 2, 'a1'),
                   backup('a2', 3), backup('x1', 4, 'a2'),
                   backup('a3', 5), backup('r1', 6, 'a3',
                                           backends.BackupStatus.BUILDING),
                   backup('a4', 7), backup('a5', 8)]
        owners = {'a1': 'A', 'a2': 'A', 'x1': 'gone', 'a3': 'A', 'r1': 'A',
                  'a4': 'A', 'a5': 'A'}
        decision = self.plan(backups, owners, {'A': rules(keep_last=1)})
        self.assertEqual(['a4'], [b.id for b in decision.delete])
        self.assertEqual(['parent of m1'], decision.keep['a1'])
        self.assertEqual(['parent of x1'], decision.keep['a2'])
        self.assertEqual(['parent of r1'], decision.keep['a3'])

    def test_chains_are_kept_and_deleted_as_units(self):
        # Two chains of three: c1 <- c2 <- c3, c4 <- c5 <- c6.
        backups = [backup('c1', 1), backup('c2', 2, 'c1'),
                   backup('c3', 3, 'c2'), backup('c4', 4),
                   backup('c5', 5, 'c4'), backup('c6', 6, 'c5')]
        owners = {b.id: 'A' for b in backups}
        decision = self.plan(backups, owners, {'A': rules(keep_last=1)})
        self.assertEqual(['c1'], [b.id for b in decision.delete])
        self.assertEqual({'c2': 'c1', 'c3': 'c1'}, decision.cascade)
        self.assertEqual({'c4', 'c5', 'c6'}, set(decision.keep))

    def test_a_kept_chain_keeps_its_newer_backups_too(self):
        # keep_monthly picks c2 (newest of January); c3 is in February
        # but not kept by any rule: it stays with its chain.
        backups = [backup('c1', 24 * 20), backup('c2', 24 * 25, 'c1'),
                   backup('c3', 24 * 40, 'c2'), backup('d1', 24 * 50),
                   backup('d2', 24 * 55, 'd1')]
        owners = {b.id: 'A' for b in backups}
        decision = self.plan(backups, owners,
                             {'A': rules(keep_monthly=2, keep_last=1)})
        self.assertEqual([], decision.delete)
        self.assertEqual(1, len(decision.keep['c3']))
        self.assertTrue(decision.keep['c3'][0].startswith('same chain as'))

    def test_others_backups_are_never_candidates(self):
        backups = [backup('a1', 1), backup('b1', 2), backup('m1', 3)]
        decision = self.plan(backups, {'a1': 'A', 'b1': 'B'},
                             {'A': rules(keep_last=1),
                              'B': rules(keep_last=1)})
        self.assertEqual([], decision.delete)
        self.assertEqual({'a1'}, set(decision.keep))


class TestChainStep(base.BaseTestCase):

    def policy(self, **params):
        return types.SimpleNamespace(id='p', backup_params=params or None)

    def incremental(self, policy, made):
        params = backup_request.chain_step(policy, made).backup_params or {}
        return bool(params.get('incremental'))

    def test_every_full_every_th_backup_is_full(self):
        policy = self.policy(incremental=True, full_every=3)
        self.assertEqual([False, True, True, False, True, True, False],
                         [self.incremental(policy, n) for n in range(7)])
        # The policy itself is left as it is.
        self.assertTrue(policy.backup_params['incremental'])

    def test_default_and_odd_values(self):
        self.assertEqual(
            [False] + [True] * 6 + [False],
            [self.incremental(self.policy(incremental=True), n)
             for n in range(8)])
        for bad in ('x', 0, -2):
            self.assertFalse(self.incremental(
                self.policy(incremental=True, full_every=bad), 0))

    def test_full_policies_and_explicit_parents_are_left_alone(self):
        full = self.policy(full_every=2)
        self.assertIs(full, backup_request.chain_step(full, 0))
        explicit = self.policy(incremental=True, parent_id='b')
        self.assertIs(explicit, backup_request.chain_step(explicit, 0))

    def test_the_count_is_read_only_for_a_chained_policy(self):
        counted = []

        def count():
            counted.append(True)
            return 3

        full = self.policy(full_every=2)
        self.assertIs(full, backup_request.chain_step(full, count))
        self.assertEqual([], counted)
        chained = self.policy(incremental=True, full_every=3)
        self.assertFalse(backup_request.chain_step(
            chained, count).backup_params['incremental'])
        self.assertEqual([True], counted)


class TestOneLine(base.BaseTestCase):

    def test_control_characters_and_breaks(self):
        self.assertEqual('a b c', backup_request.one_line('a\nb\r\n\tc'))
        self.assertEqual('x y', backup_request.one_line(' x\x00\x7f y\u2028'))
        self.assertEqual('', backup_request.one_line(None))
