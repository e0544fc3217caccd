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
"""Retention never deletes the newest verified backup, nor its chain."""

import datetime
import itertools
import types

from oslotest import base

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler import retention

UTC = datetime.timezone.utc
START = datetime.datetime(2027, 1, 1, tzinfo=UTC)
NOW = START + datetime.timedelta(days=30)
HOUR = datetime.timedelta(hours=1)
DONE = backends.BackupStatus.COMPLETED


def backup(backup_id, hour, parent_id=None):
    return backends.Backup(id=backup_id, instance_id='db', status=DONE,
                           parent_id=parent_id,
                           created_at=START + hour * HOUR)


def record(hour, result=None, state=None, policy='p'):
    return types.SimpleNamespace(policy_id=policy, verify_result=result,
                                 backup_state=state,
                                 finished_at=START + hour * HOUR)


def policies(verify=True, **rules):
    return {'p': retention.PolicyRetention(
        retention.RetentionRules(**rules), UTC, verify)}


class TestNewestVerified(base.BaseTestCase):

    def test_the_newest_passed_one(self):
        records = {'b0': record(0, 'passed'), 'b1': record(1, 'passed'),
                   'b2': record(2, 'failed'), 'b3': record(3)}
        self.assertEqual({'b1'},
                         retention.newest_verified(records, policies()))

    def test_none_when_verification_is_off(self):
        records = {'b0': record(0, 'passed')}
        self.assertEqual(set(), retention.newest_verified(
            records, policies(verify=False)))

    def test_a_deleted_one_is_not_kept(self):
        records = {'b0': record(0, 'passed'),
                   'b1': record(1, 'passed', state='deleted')}
        self.assertEqual({'b0'},
                         retention.newest_verified(records, policies()))


class TestRetentionKeepsIt(base.BaseTestCase):

    def _plan(self, backups, verified_id, **rules):
        owners = {b.id: 'p' for b in backups}
        return retention.plan_instance_retention(
            backups, 'p', owners, policies(**rules), NOW, (),
            {verified_id})

    def test_keep_last_one_keeps_the_verified_too(self):
        backups = [backup('b%d' % i, i) for i in range(5)]
        decision = self._plan(backups, 'b1', keep_last=1)
        self.assertEqual(['newest verified'], decision.keep['b1'])
        self.assertEqual(['b0', 'b2', 'b3'],
                         [b.id for b in decision.delete])

    def test_its_incremental_chain_stays(self):
        backups = [backup('full', 0), backup('inc1', 1, 'full'),
                   backup('inc2', 2, 'inc1'), backup('full2', 3),
                   backup('inc3', 4, 'full2')]
        decision = self._plan(backups, 'inc2', keep_last=1, max_age_days=1)
        self.assertIn('full', decision.keep)
        self.assertIn('inc1', decision.keep)
        self.assertIn('inc2', decision.keep)

    def test_no_rule_ever_deletes_it(self):
        # Every combination of the rules, every verified position.
        backups = [backup('b%d' % i, i * 30) for i in range(8)]
        values = (None, 1, 2)
        for keep_last, keep_daily, max_age in itertools.product(
                values, values, values):
            for verified in backups:
                decision = self._plan(
                    backups, verified.id, keep_last=keep_last,
                    keep_daily=keep_daily, max_age_days=max_age)
                self.assertNotIn(verified.id,
                                 [b.id for b in decision.delete])
                self.assertNotIn(verified.id, decision.cascade)
