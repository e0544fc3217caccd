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
"""The protection state on the policy row, on every database.

Outcomes counted in the transaction that finishes an execution, the
failure streak and pause_after_failures, and the sweep's transitions:
made by exactly one of several sweepers (compare-and-set under the row
lock).
"""

import datetime
import threading

import fixtures
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import protection as db_protection
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler.engine import protection as engine_protection
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

HOUR = datetime.timedelta(hours=1)
RPO = 36 * 3600


class _Protection(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.get_admin_context()
        self.now = timeutils.utcnow(True)

    def add_policy(self, **values):
        row = dict(name=db_fixtures.policy_name(self), project_id='p1',
                   instance_id=uuidutils.generate_uuid(),
                   schedule_type='cron', schedule='0 1 * * *',
                   timezone='UTC', created_at=self.now,
                   next_execution_time=self.now + 24 * HOUR,
                   effective_rpo=RPO,
                   protected_until=self.now + datetime.timedelta(seconds=RPO),
                   protection='ok', consecutive_failures=0)
        row.update(values)
        return db_api.create_policy(self.context, row)

    def finish(self, policy, status, scheduled_at, started_at, finished_at,
               fault=None):
        execution = db_api.create_execution(self.context, dict(
            policy_id=policy.id, project_id=policy.project_id,
            instance_id=policy.instance_id, scheduled_at=scheduled_at,
            status='DISPATCHED'))
        claim = uuidutils.generate_uuid()
        self.assertEqual([execution.id], db_worker.claim_executions(
            self.context, [execution.id], 'w1', claim, started_at, 600))
        return db_worker.finish_execution(self.context, execution.id, claim,
                                          status, finished_at, fault=fault)

    def policy(self, policy_id):
        return db_api.get_policy(self.context, policy_id)

    def test_a_success_renews_and_measures(self):
        policy = self.add_policy()
        slot = self.now - HOUR
        outcome = self.finish(policy, 'SUCCEEDED', slot,
                              slot + datetime.timedelta(seconds=30),
                              slot + datetime.timedelta(seconds=630))
        self.assertTrue(outcome)
        self.assertIsNone(outcome.transition)   # ok stays ok
        stored = self.policy(policy.id)
        self.assertEqual(slot + datetime.timedelta(seconds=30),
                         stored.last_success_at)
        self.assertEqual(stored.last_success_at
                         + datetime.timedelta(seconds=RPO),
                         stored.protected_until)
        self.assertEqual((30.0, 600.0),
                         (stored.lateness_p95, stored.duration_p95))
        self.assertEqual(('ok', 0), (stored.protection,
                                     stored.consecutive_failures))
        # The next moment time alone changes it: the latest start that
        # can still renew it in time.
        self.assertEqual(
            stored.protected_until - datetime.timedelta(seconds=600)
            - datetime.timedelta(seconds=RPO / 10),
            stored.protection_check_at)

    def test_a_failure_raises_at_risk_once_and_a_success_clears_it(self):
        policy = self.add_policy()
        slot = self.now - HOUR
        outcome = self.finish(policy, 'FAILED', slot, slot, slot + HOUR / 2,
                              fault='Trove reports backup b1 FAILED')
        transition = outcome.transition
        self.assertEqual(('at_risk', 'ok', 1),
                         (transition.protection,
                          transition.previous_protection,
                          transition.consecutive_failures))
        # A second failure: still at risk, no second transition.
        outcome = self.finish(policy, 'FAILED', slot + HOUR, slot + HOUR,
                              slot + HOUR)
        self.assertIsNone(outcome.transition)
        self.assertEqual(2, self.policy(policy.id).consecutive_failures)
        # SKIPPED neither counts nor ends the streak.
        self.finish(policy, 'SKIPPED', slot + 2 * HOUR, self.now, self.now)
        self.assertEqual(2, self.policy(policy.id).consecutive_failures)
        outcome = self.finish(policy, 'SUCCEEDED', slot + 3 * HOUR,
                              self.now, self.now)
        self.assertEqual(('ok', 'at_risk', 0),
                         (outcome.transition.protection,
                          outcome.transition.previous_protection,
                          outcome.transition.consecutive_failures))

    def test_pause_after_failures_names_the_last_fault(self):
        policy = self.add_policy(pause_after_failures=2)
        slot = self.now - 3 * HOUR
        first = self.finish(policy, 'FAILED', slot, slot, slot,
                            fault='instance busy')
        self.assertIsNone(first.paused_reason)
        self.assertTrue(self.policy(policy.id).enabled)
        second = self.finish(policy, 'FAILED', slot + HOUR, slot + HOUR,
                             slot + HOUR,
                             fault='Trove reports backup b2 FAILED')
        self.assertEqual('paused after 2 failed backups in a row; the last '
                         'one failed: Trove reports backup b2 FAILED',
                         second.paused_reason)
        stored = self.policy(policy.id)
        self.assertEqual((False, None, second.paused_reason),
                         (stored.enabled, stored.next_execution_time,
                          stored.paused_reason))

    def test_the_sweep_moves_due_policies_on_once(self):
        until = self.now + HOUR
        due = [self.add_policy(protection='at_risk', protected_until=until,
                               protection_check_at=until)
               for _ in range(3)]
        later = self.add_policy(protection_check_at=self.now + 48 * HOUR)
        self.assertEqual([], db_protection.sweep_due(self.context,
                                                     self.now, 10))
        after = until + datetime.timedelta(seconds=1)
        made = db_protection.sweep_due(self.context, after, 10)
        self.assertEqual(sorted(p.id for p in due),
                         sorted(t.id for t in made))
        self.assertEqual({('breached', 'at_risk', after)},
                         {(t.protection, t.previous_protection,
                           t.changed_at) for t in made})
        # Breached: time alone changes it no more.
        self.assertEqual([], db_protection.sweep_due(self.context, after,
                                                     10))
        self.assertIsNone(self.policy(due[0].id).protection_check_at)
        self.assertEqual('ok', self.policy(later.id).protection)

    def test_concurrent_sweepers_make_each_transition_once(self):
        until = self.now + HOUR
        policies = [self.add_policy(protection='at_risk',
                                    protected_until=until,
                                    protection_check_at=until)
                    for _ in range(40)]
        after = until + datetime.timedelta(seconds=1)
        made, errors = [], []
        start = threading.Barrier(4)

        def sweeper():
            context = dbaas_context.get_admin_context()
            try:
                start.wait()
                while True:
                    batch = db_protection.sweep_due(context, after, 5)
                    made.extend(batch)
                    if not batch:
                        return
            except Exception as exc:   # reported below
                errors.append(exc)

        threads = [threading.Thread(target=sweeper) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual([], errors)
        self.assertEqual(sorted(p.id for p in policies),
                         sorted(t.id for t in made))

    def test_a_stale_compare_and_set_changes_nothing(self):
        policy = self.add_policy(protection='at_risk',
                                 protection_check_at=self.now)
        row = db_api.get_policy(self.context, policy.id)
        # Someone else moved it on meanwhile.
        db_api.update_policy(self.context, policy.id,
                             {'protection': 'breached'})
        with db_api.writer_transaction(self.context):
            self.assertFalse(db_protection._write(
                self.context.session, row, {},
                db_protection.protection.Evaluation('ok', None), self.now))
        self.assertEqual('breached', self.policy(policy.id).protection)

    def test_a_policy_made_before_protection_is_set_up(self):
        # As the upgrade left it: no RPO, no state, a success 2 h ago.
        old = self.add_policy(effective_rpo=None, protected_until=None,
                              protection=None,
                              created_at=self.now - 300 * 24 * HOUR)
        slot = self.now - 2 * HOUR
        execution = db_api.create_execution(self.context, dict(
            policy_id=old.id, project_id=old.project_id,
            instance_id=old.instance_id, scheduled_at=slot,
            status='SUCCEEDED', started_at=slot + HOUR / 60,
            finished_at=slot + HOUR / 6))
        once = self.add_policy(effective_rpo=None, protected_until=None,
                               protection=None, schedule_type='once',
                               schedule=(self.now + HOUR).isoformat())
        self.useFixture(fixtures.MockPatchObject(
            engine_protection, '_next_set_up', 0.0))
        made = engine_protection.sweep(self.context, self.conf, self.now)
        self.assertEqual([(old.id, 'ok')],
                         [(t.id, t.protection) for t in made])
        stored = self.policy(old.id)
        # The daily schedule's default: 36 h from the last success.
        self.assertEqual(RPO, stored.effective_rpo)
        self.assertEqual(execution.started_at, stored.last_success_at)
        self.assertEqual(execution.started_at
                         + datetime.timedelta(seconds=RPO),
                         stored.protected_until)
        self.assertEqual(60.0, stored.lateness_p95)
        self.assertIsNone(self.policy(once.id).protection)
        # Once only.
        self.assertEqual([], engine_protection.sweep(self.context, self.conf,
                                                     self.now))
        self.assertEqual([], db_protection.list_unset(self.context, 10))


class TestProtectionSQLite(_Protection, base.TestCase):
    DRIVER = 'sqlite'

    def test_concurrent_sweepers_make_each_transition_once(self):
        self.skipTest('SQLite runs one engine')


class TestProtectionMySQL(_Protection, base.TestCase):
    DRIVER = 'mysql'


class TestProtectionPostgreSQL(_Protection, base.TestCase):
    DRIVER = 'postgresql'
