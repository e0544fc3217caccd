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
"""Retention maths of floors (min_keep), holds and the grace."""

import datetime

from oslotest import base

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler import retention

UTC = datetime.timezone.utc
START = datetime.datetime(2027, 1, 1, tzinfo=UTC)
NOW = START + datetime.timedelta(days=30)
DONE = backends.BackupStatus.COMPLETED
HOUR = datetime.timedelta(hours=1)


def backup(backup_id, hour, parent_id=None, status=DONE):
    return backends.Backup(
        id=backup_id, instance_id='db', status=status, parent_id=parent_id,
        created_at=START + hour * HOUR)


def rules(**values):
    return retention.PolicyRetention(retention.RetentionRules(**values), UTC)


def ids(backups):
    return [b.id for b in backups]


class TestFloor(base.BaseTestCase):

    def test_min_keep_outvotes_max_age(self):
        backups = [backup('b%d' % i, i) for i in range(6)]
        # Every backup is 30 days old: max_age_days 1 keeps none of them.
        decision = retention.plan_retention(
            backups, retention.RetentionRules(max_age_days=1, min_keep=3),
            UTC, NOW)
        self.assertEqual(['b0', 'b1', 'b2'], ids(decision.delete))
        self.assertEqual(['min_keep', 'newest'], sorted(decision.keep['b5']))
        self.assertEqual(['min_keep'], decision.keep['b3'])

    def test_without_floor_only_the_newest_stays(self):
        backups = [backup('b%d' % i, i) for i in range(6)]
        decision = retention.plan_retention(
            backups, retention.RetentionRules(max_age_days=1), UTC, NOW)
        self.assertEqual(['b0', 'b1', 'b2', 'b3', 'b4'],
                         ids(decision.delete))

    def test_floor_counts_successful_backups_only(self):
        backups = [backup('b0', 0), backup('b1', 1),
                   backup('f2', 2, status=backends.BackupStatus.FAILED),
                   backup('b3', 3)]
        decision = retention.plan_retention(
            backups, retention.RetentionRules(keep_last=1, min_keep=2),
            UTC, NOW)
        self.assertEqual(['b0'], ids(decision.delete))
        self.assertEqual({'b1', 'b3'}, set(decision.keep))

    def test_min_keep_alone_deletes_nothing(self):
        backups = [backup('b%d' % i, i) for i in range(6)]
        rules_ = retention.RetentionRules(min_keep=2)
        self.assertFalse(rules_.any)
        decision = retention.plan_retention(backups, rules_, UTC, NOW)
        self.assertEqual([], decision.delete)


class TestHolds(base.BaseTestCase):

    def plan(self, backups, held, **values):
        return retention.plan_instance_retention(
            backups, 'A', {b.id: 'A' for b in backups},
            {'A': rules(**values)}, NOW, held)

    def test_held_backup_is_kept(self):
        backups = [backup('b%d' % i, i) for i in range(4)]
        decision = self.plan(backups, {'b1'}, keep_last=1)
        self.assertEqual(['b0', 'b2'], ids(decision.delete))
        self.assertEqual(['held'], decision.keep['b1'])

    def test_held_incremental_keeps_its_chain(self):
        # f0 <- i1 <- i2, then f3 (a full backup) and f4.
        backups = [backup('f0', 0), backup('i1', 1, 'f0'),
                   backup('i2', 2, 'i1'), backup('f3', 3), backup('f4', 4)]
        decision = self.plan(backups, {'i2'}, keep_last=1)
        self.assertEqual(['f3'], ids(decision.delete))
        self.assertEqual(['parent of i2'], decision.keep['i1'])
        self.assertEqual(['parent of i2'], decision.keep['f0'])
        self.assertEqual({}, decision.cascade)

    def test_without_hold_the_chain_goes(self):
        backups = [backup('f0', 0), backup('i1', 1, 'f0'),
                   backup('i2', 2, 'i1'), backup('f3', 3), backup('f4', 4)]
        decision = self.plan(backups, set(), keep_last=1)
        self.assertEqual(['f0', 'f3'], ids(decision.delete))
        self.assertEqual({'i1': 'f0', 'i2': 'f0'}, decision.cascade)


class TestGrace(base.BaseTestCase):

    def decision(self):
        backups = [backup('b%d' % i, i) for i in range(5)]
        return retention.plan_instance_retention(
            backups, 'A', {b.id: 'A' for b in backups},
            {'A': rules(keep_last=2)}, NOW)

    def test_new_deletions_only_expire(self):
        plan = retention.plan_grace(self.decision(), {}, NOW, 24 * HOUR)
        self.assertEqual(['b0', 'b1', 'b2'], ids(plan.expire))
        self.assertEqual([], plan.delete)
        self.assertEqual([], plan.cancel)

    def test_no_grace_deletes_at_once(self):
        plan = retention.plan_grace(self.decision(), {}, NOW,
                                    datetime.timedelta(0))
        self.assertEqual(['b0', 'b1', 'b2'], ids(plan.expire))
        self.assertEqual(['b0', 'b1', 'b2'], ids(plan.delete))

    def test_due_expiries_are_deleted_others_wait(self):
        states = {'b0': ('expiring', NOW - HOUR),
                  'b1': ('expiring', NOW + HOUR),
                  'b2': ('deleted', None),
                  'b4': ('expiring', NOW - HOUR)}
        plan = retention.plan_grace(self.decision(), states, NOW, 24 * HOUR)
        self.assertEqual(['b0'], ids(plan.delete))
        self.assertEqual([], ids(plan.expire))
        # b4 is kept now (keep_last): its expiry is cancelled.
        self.assertEqual(['b4'], plan.cancel)
