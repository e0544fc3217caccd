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
"""Fair capacity: limits on running backups, round robin, project backoff.

Workers in this process (runners with owner ids of their own), on each
database, against a fake Trove; the engine's sweep is called directly.
"""

import datetime
import threading

from oslo_utils import timeutils
import sqlalchemy as sa

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import capacity as db_capacity
from dbaas_scheduler.db import models
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.worker import test_worker

EXECUTIONS = models.BackupExecution.__table__
QUOTA = 'Quota exceeded for resources: [\'backups\'].'


class _CapacityTests(test_worker.WorkerMixin):

    def add_execution(self, project_id, minutes=0, **values):
        instance_id = self.trove.add_instance()
        now = timeutils.utcnow(True)
        policy = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self) + instance_id[:8],
            project_id=project_id, instance_id=instance_id,
            schedule_type='cron', schedule='30 2 * * *', timezone='UTC',
            next_execution_time=now + datetime.timedelta(days=1)))
        row = dict(policy_id=policy.id, project_id=project_id,
                   instance_id=instance_id, status='DISPATCHED',
                   scheduled_at=now - datetime.timedelta(hours=1)
                   + datetime.timedelta(minutes=minutes),
                   start_deadline=now + datetime.timedelta(hours=1))
        row.update(values)
        return db_api.create_execution(self.context, row).id

    def statuses(self):
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(
                EXECUTIONS.c.id, EXECUTIONS.c.project_id,
                EXECUTIONS.c.status, EXECUTIONS.c.status_reason)).all()
        return {row.id: row for row in rows}

    def running(self, project_id=None):
        return sorted(row.id for row in self.statuses().values()
                      if row.status == 'RUNNING'
                      and project_id in (None, row.project_id))

    def test_limits_hold_with_two_workers_racing(self):
        self.flags(group='worker', max_running_per_project=3, max_running=5)
        executions = [self.add_execution(project, minutes=number)
                      for number in range(8)
                      for project in ('project-a', 'project-b')]
        runners = [self.runner, self.new_runner()]
        # Each worker is offered every execution, one cast at a time, in
        # opposite orders: every claim races the other worker's.
        orders = [executions, executions[::-1]]
        errors = []

        def work(runner, order, barrier):
            context = dbaas_context.get_admin_context()
            try:
                if barrier is not None:
                    barrier.wait(30)
                for execution_id in order:
                    runner.run(context, [execution_id])
            except Exception as exc:
                errors.append(exc)

        if self.DRIVER == 'sqlite':
            # One shared connection: the workers take turns.
            for runner, order in zip(runners, orders):
                work(runner, order, None)
        else:
            barrier = threading.Barrier(2)
            threads = [threading.Thread(target=work,
                                        args=(runner, order, barrier))
                       for runner, order in zip(runners, orders)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(300)
        self.assertEqual([], errors)
        self.assertEqual(5, len(self.running()))
        self.assertLessEqual(len(self.running('project-a')), 3)
        self.assertLessEqual(len(self.running('project-b')), 3)
        queued = [row for row in self.statuses().values()
                  if row.status != 'RUNNING']
        self.assertEqual(11, len(queued))
        for row in queued:
            self.assertEqual('PENDING', row.status)
            self.assertTrue(row.status_reason.startswith('queued:'),
                            row.status_reason)
        # Backups started for the RUNNING ones only.
        self.assertEqual(5, len(self.trove.backups('project-a'))
                         + len(self.trove.backups('project-b')))

    def test_defaults_keep_no_limit(self):
        executions = [self.add_execution('project-a', minutes=number)
                      for number in range(6)]
        self.assertEqual(sorted(executions),
                         sorted(self.runner.run(self.context, executions)))

    def test_queued_executions_are_offered_round_robin(self):
        self.flags(group='worker', max_running=4)
        limits = db_capacity.limits_from_conf(self.conf)
        a = [self.add_execution('project-a', minutes=number)
             for number in range(6)]
        # Project B's slots are later than most of A's.
        b = [self.add_execution('project-b', minutes=4.5 + number)
             for number in range(2)]
        # The region's four go to the first four slots, all A's.
        self.assertEqual(sorted(a[:4]), sorted(
            self.runner.run(self.context, a[::-1] + b)))
        self.assertEqual(sorted(a[:4]), self.running())
        statuses = self.statuses()
        for execution_id in a[4:] + b:
            self.assertEqual('PENDING', statuses[execution_id].status)
        now = timeutils.utcnow(True)
        stale = now - datetime.timedelta(seconds=60)
        self.assertEqual([], db_scheduling.claim_waiting_executions(
            self.context, now, stale, 10, limits=limits))
        # Two backups end: B's first and A's next go, not A's two next.
        self._finish(a[:2])
        offered = db_scheduling.claim_waiting_executions(
            self.context, timeutils.utcnow(True), stale, 10, limits=limits)
        self.assertEqual(sorted([a[4], b[0]]), sorted(offered))
        # Without limits the sweep takes the oldest, whichever project.
        self.assertEqual(sorted([a[5], b[1]]), sorted(
            db_scheduling.claim_waiting_executions(
                self.context, timeutils.utcnow(True), stale, 10)))

    def _finish(self, execution_ids):
        with self.engine.begin() as connection:
            connection.execute(
                EXECUTIONS.update().where(EXECUTIONS.c.id.in_(execution_ids))
                .values(status='SUCCEEDED',
                        finished_at=timeutils.utcnow(True)))

    def test_a_queued_execution_expires_at_the_end_of_its_window(self):
        self.flags(group='worker', max_running_per_project=1)
        first = self.add_execution('project-a')
        late = self.add_execution(
            'project-a', minutes=1,
            start_deadline=timeutils.utcnow(True)
            + datetime.timedelta(seconds=1))
        self.assertEqual([first],
                         self.runner.run(self.context, [first, late]))
        later = timeutils.utcnow(True) + datetime.timedelta(seconds=5)
        expired = db_scheduling.expire_unclaimed_executions(
            self.context, later, 10)
        self.assertEqual([late], [row.id for row in expired])
        self.assertEqual('EXPIRED', self.statuses()[late].status)

    def test_a_quota_413_slows_down_only_that_project(self):
        self.flags(group='worker', project_backoff=600)
        a1 = self.add_execution('project-a')
        a2 = self.add_execution('project-a', minutes=1)
        b1 = self.add_execution('project-b', minutes=2)
        instance = db_api.get_execution(self.context, a1).instance_id
        self.trove.inject_failure(413, instance_id=instance, message=QUOTA,
                                  operation=fake_trove.BACKUP_CREATE)
        self.assertEqual([a1], self.runner.run(self.context, [a1]))
        waiting = db_api.get_execution(self.context, a1)
        self.assertEqual('PENDING', waiting.status)
        self.assertIn('queued: the backend asked project project-a',
                      waiting.status_reason)
        until, reason = db_capacity.get_backoff(self.context, 'project-a')
        self.assertIn('Quota exceeded', reason)
        self.assertEqual(until, waiting.next_attempt_at)
        # Project A's next backup waits; project B's starts.
        self.assertEqual([b1], self.runner.run(self.context, [a2, b1]))
        self.assertEqual([b1], self.running())
        self.assertEqual('PENDING', self.statuses()[a2].status)
        # The sweep does not offer A's while it backs off.
        limits = db_capacity.limits_from_conf(self.conf)
        later = timeutils.utcnow(True) + datetime.timedelta(seconds=120)
        self.assertEqual([], db_scheduling.claim_waiting_executions(
            self.context, later, later, 10, limits=limits))
        # Only one create reached Trove for project A.
        self.assertEqual(1, len([r for r in self.trove.requests
                                 if r.method == 'POST'
                                 and '/project-a/' in r.path]))

    def test_without_backoff_a_quota_413_fails_as_before(self):
        a1 = self.add_execution('project-a')
        instance = db_api.get_execution(self.context, a1).instance_id
        self.trove.inject_failure(413, instance_id=instance, message=QUOTA,
                                  operation=fake_trove.BACKUP_CREATE)
        self.runner.run(self.context, [a1])
        failed = db_api.get_execution(self.context, a1)
        self.assertEqual('FAILED', failed.status)
        self.assertIn('Quota exceeded', failed.fault)
        self.assertIsNone(db_capacity.get_backoff(self.context, 'project-a'))

    def test_a_rate_limit_beyond_the_wait_backs_the_project_off(self):
        self.flags(group='worker', project_backoff=600)
        self.flags(group='trove', rate_limit_max_wait=1)
        a1 = self.add_execution('project-a')
        instance = db_api.get_execution(self.context, a1).instance_id
        self.trove.inject_failure(413, instance_id=instance, retry_after=30,
                                  message='This request was rate-limited.',
                                  operation=fake_trove.BACKUP_CREATE)
        self.runner.run(self.context, [a1])
        self.assertEqual('PENDING', self.statuses()[a1].status)
        self.assertIsNotNone(db_capacity.get_backoff(self.context,
                                                     'project-a'))
        self.assertIsNone(db_capacity.get_backoff(self.context, 'project-b'))


class TestCapacitySQLite(_CapacityTests, base.TestCase):
    DRIVER = 'sqlite'


class TestCapacityMySQL(_CapacityTests, base.TestCase):
    DRIVER = 'mysql'


class TestCapacityPostgreSQL(_CapacityTests, base.TestCase):
    DRIVER = 'postgresql'
