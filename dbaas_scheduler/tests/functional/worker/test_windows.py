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
"""Start windows in the worker and the sweep, on each database.

A slot is taken within its start window or ends EXPIRED, never both:
the worker's EXPIRED is a compare-and-set under its claim that also needs
no backup id recorded, and the sweep only expires executions no worker
ever claimed.
"""

import datetime

from oslo_utils import timeutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.worker import test_worker
from dbaas_scheduler.tests import notification_fixtures

PROJECT = 'project-a'
EXECUTIONS = models.BackupExecution.__table__


def _ago(seconds):
    return timeutils.utcnow(True) - datetime.timedelta(seconds=seconds)


class _WindowTests(test_worker.WorkerMixin):

    def add_policy(self, **values):
        row = dict(name=db_fixtures.policy_name(self), project_id=PROJECT,
                   instance_id=self.trove.add_instance(),
                   schedule_type='cron', schedule='30 2 * * *',
                   timezone='UTC', next_execution_time=timeutils.utcnow(True)
                   + datetime.timedelta(days=1))
        row.update(values)
        return db_api.create_policy(self.context, row)

    def add_execution(self, policy, deadline_in, **values):
        now = timeutils.utcnow(True)
        row = dict(policy_id=policy.id, project_id=policy.project_id,
                   instance_id=policy.instance_id, status='DISPATCHED',
                   scheduled_at=now - datetime.timedelta(seconds=60),
                   start_deadline=now + datetime.timedelta(
                       seconds=deadline_in),
                   completion_deadline=now + datetime.timedelta(hours=1))
        row.update(values)
        return db_api.create_execution(self.context, row)

    def execution(self, execution_id):
        return db_api.get_execution(self.context, execution_id)

    def set_values(self, execution_id, **values):
        with self.engine.begin() as connection:
            connection.execute(EXECUTIONS.update().where(
                EXECUTIONS.c.id == execution_id).values(**values))

    def creates(self, instance_id):
        return self.trove.create_count(instance_id)

    def test_past_its_window_nothing_is_created(self):
        recorder = self.useFixture(
            notification_fixtures.Recorder(self.conf))
        policy = self.add_policy()
        execution = self.add_execution(policy, deadline_in=-1)
        self.runner.run(self.context, [execution.id])
        done = self.execution(execution.id)
        self.assertEqual('EXPIRED', done.status)
        self.assertIn('start window ended at', done.status_reason)
        self.assertIsNone(done.backup_id)
        self.assertIsNotNone(done.finished_at)
        self.assertEqual(0, self.creates(policy.instance_id))
        self.assertEqual(['backup_execution.expired',
                          'dbaas_scheduler.execution.expired'],
                         sorted(recorder.event_types()))
        for message in recorder.messages():
            notification_fixtures.assert_matches_sample(self, message)

    def test_within_its_window_it_runs(self):
        policy = self.add_policy()
        execution = self.add_execution(policy, deadline_in=600)
        self.runner.run(self.context, [execution.id])
        running = self.execution(execution.id)
        self.assertEqual('RUNNING', running.status)
        self.assertIsNotNone(running.backup_id)

    def test_transient_failures_are_tried_again_within_the_window(self):
        policy = self.add_policy()
        execution = self.add_execution(policy, deadline_in=600)
        # Busy for longer than [worker] max_attempts (3) in one claim.
        self.trove.inject_failure(422, count=4,
                                  operation=fake_trove.BACKUP_CREATE,
                                  message='Instance is busy.')
        before = timeutils.utcnow(True)
        self.runner.run(self.context, [execution.id])
        waiting = self.execution(execution.id)
        self.assertEqual('PENDING', waiting.status)
        self.assertIsNone(waiting.backup_id)
        self.assertIn('retrying within its start window',
                      waiting.status_reason)
        self.assertGreater(waiting.next_attempt_at, before)
        self.assertLess(waiting.next_attempt_at, waiting.start_deadline)
        # Its time comes (the sweep casts it again): the fourth failure,
        # then a backup.
        self.set_values(execution.id, next_attempt_at=_ago(1))
        self.runner.run(self.context, [execution.id])
        running = self.execution(execution.id)
        self.assertEqual(('RUNNING', 2), (running.status, running.attempts))
        self.assertIsNotNone(running.backup_id)
        self.assertEqual(1, self.creates(policy.instance_id))

    def test_transient_failures_until_the_window_ends_expire_it(self):
        policy = self.add_policy()
        execution = self.add_execution(policy, deadline_in=600)
        self.trove.inject_failure(503, count=100,
                                  operation=fake_trove.BACKUP_CREATE)
        self.runner.run(self.context, [execution.id])
        self.assertEqual('PENDING', self.execution(execution.id).status)
        # The window ends before its next try.
        self.set_values(execution.id, next_attempt_at=_ago(2),
                        start_deadline=_ago(1))
        self.runner.run(self.context, [execution.id])
        done = self.execution(execution.id)
        self.assertEqual('EXPIRED', done.status)
        self.assertIsNone(done.backup_id)
        self.assertEqual(0, self.creates(policy.instance_id))

    def test_a_backup_made_under_an_earlier_claim_is_taken_not_expired(self):
        policy = self.add_policy()
        execution = self.add_execution(policy, deadline_in=-1, attempts=1)
        # Its earlier claim's create landed, but its id was never recorded.
        backup_id = self.trove.add_backup(
            PROJECT, policy.instance_id,
            description='Backup. ' + backends.execution_tag(execution.id))
        self.runner.run(self.context, [execution.id])
        running = self.execution(execution.id)
        self.assertEqual(('RUNNING', backup_id),
                         (running.status, running.backup_id))
        self.assertEqual(0, self.creates(policy.instance_id))

    def test_expired_and_taken_exclude_each_other(self):
        policy = self.add_policy()
        execution = self.add_execution(policy, deadline_in=600)
        now = timeutils.utcnow(True)
        [claimed] = db_worker.claim_executions(
            self.context, [execution.id], 'w-1', 'claim-1', now, 300)
        self.assertTrue(db_worker.record_backup_id(
            self.context, execution.id, 'claim-1', 'b-1'))
        # A backup id is recorded: the same claim cannot expire it.
        self.assertFalse(db_worker.finish_execution(
            self.context, execution.id, 'claim-1', 'EXPIRED', now))
        self.assertEqual(('RUNNING', 'b-1'),
                         (self.execution(execution.id).status,
                          self.execution(execution.id).backup_id))
        # And once EXPIRED, no backup id can be recorded.
        other = self.add_execution(self.add_policy(), deadline_in=600)
        db_worker.claim_executions(self.context, [other.id], 'w-1',
                                   'claim-2', now, 300)
        self.assertTrue(db_worker.finish_execution(
            self.context, other.id, 'claim-2', 'EXPIRED', now))
        self.assertFalse(db_worker.record_backup_id(
            self.context, other.id, 'claim-2', 'b-2'))
        self.assertEqual((None, 'EXPIRED'),
                         (self.execution(other.id).backup_id,
                          self.execution(other.id).status))

    def test_the_sweep_expires_only_what_no_worker_claimed(self):
        policy = self.add_policy()
        never = self.add_execution(policy, deadline_in=-1)
        claimed_before = self.add_execution(
            policy, deadline_in=-1, attempts=1,
            scheduled_at=_ago(120))
        in_time = self.add_execution(policy, deadline_in=600,
                                     scheduled_at=_ago(180))
        running = self.add_execution(policy, deadline_in=-1,
                                     scheduled_at=_ago(240))
        db_worker.claim_executions(self.context, [running.id], 'w-1',
                                   'claim-3', timeutils.utcnow(True), 300)
        no_window = self.add_execution(policy, deadline_in=0,
                                       start_deadline=None,
                                       scheduled_at=_ago(300))
        expired = db_scheduling.expire_unclaimed_executions(
            self.context, timeutils.utcnow(True), 100)
        self.assertEqual([never.id], [row.id for row in expired])
        self.assertEqual('EXPIRED', self.execution(never.id).status)
        for other in (claimed_before, in_time, no_window):
            self.assertEqual('DISPATCHED', self.execution(other.id).status)
        self.assertEqual('RUNNING', self.execution(running.id).status)
        # A late message for it claims nothing.
        self.assertEqual([], self.runner.run(self.context, [never.id]))
        self.assertEqual(0, self.creates(policy.instance_id))

    def test_the_sweep_counts_what_it_expires_on_the_policy(self):
        # An RPO an hour long, last met 10 minutes ago: ok until the
        # slots start to expire; two in a row pause the policy.
        policy = self.add_policy(pause_after_failures=2, effective_rpo=3600,
                                 last_success_at=_ago(600),
                                 protected_until=_ago(600)
                                 + datetime.timedelta(hours=1),
                                 protection='ok')
        first = self.add_execution(policy, deadline_in=-1,
                                   scheduled_at=_ago(120))
        [expired] = db_scheduling.expire_unclaimed_executions(
            self.context, timeutils.utcnow(True), 100)
        self.assertEqual(first.id, expired.id)
        self.assertEqual('at_risk', expired.outcome.transition.protection)
        self.assertIsNone(expired.outcome.paused_reason)
        row = db_api.get_policy(self.context, policy.id)
        self.assertEqual((1, 'at_risk', True), (
            row.consecutive_failures, row.protection, row.enabled))
        self.add_execution(policy, deadline_in=-1, scheduled_at=_ago(60))
        [expired] = db_scheduling.expire_unclaimed_executions(
            self.context, timeutils.utcnow(True), 100)
        self.assertIn('paused after 2 failed backups in a row',
                      expired.outcome.paused_reason)
        self.assertIn('before any worker claimed it',
                      expired.outcome.paused_reason)
        row = db_api.get_policy(self.context, policy.id)
        self.assertEqual((2, False), (row.consecutive_failures, row.enabled))
        self.assertIn('paused after 2', row.paused_reason)


class TestWindowsSQLite(_WindowTests, base.TestCase):
    DRIVER = 'sqlite'


class TestWindowsMySQL(_WindowTests, base.TestCase):
    DRIVER = 'mysql'


class TestWindowsPostgreSQL(_WindowTests, base.TestCase):
    DRIVER = 'postgresql'
