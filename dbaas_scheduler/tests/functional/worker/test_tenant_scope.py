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
"""Two projects naming the same instance id never act on each other.

An instance is ``(backend, project_id, instance_id)``: overlap, queueing,
retention and reconciliation of project A's Trove instance are not held
up, decided or carried out by project B's policy that names the same id
(here with the fake backend, which takes any id, and a long build), on
each database.
"""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.worker import test_worker
from dbaas_scheduler.worker import reconciler

A = 'project-a'
B = 'project-b'


class _TenantScopeTests(test_worker.WorkerMixin):

    def setUp(self):
        super().setUp()
        self.reconciler = reconciler.Reconciler(self.conf)
        # A's Trove instance; B names its id with the fake backend.
        self.instance = self.trove.add_instance(project_id=A,
                                                build_seconds=3600)

    def add_policy(self, project_id, backend, instance_id=None, **values):
        row = dict(name=db_fixtures.policy_name(self), project_id=project_id,
                   instance_id=instance_id or self.instance, backend=backend,
                   schedule_type='cron', schedule='30 2 * * *',
                   timezone='UTC', next_execution_time=timeutils.utcnow(True)
                   + datetime.timedelta(days=1))
        row.update(values)
        return db_api.create_policy(self.context, row)

    def add_execution(self, policy, minutes=0, **values):
        row = dict(policy_id=policy.id, project_id=policy.project_id,
                   instance_id=policy.instance_id, status='DISPATCHED',
                   scheduled_at=timeutils.utcnow(True)
                   - datetime.timedelta(minutes=minutes))
        row.update(values)
        return db_api.create_execution(self.context, row)

    def execution(self, execution_id):
        return db_api.get_execution(self.context, execution_id)

    def start(self, execution):
        self.runner.run(self.context, [execution.id])
        return self.execution(execution.id)

    # Overlap and queueing ----------------------------------------------

    def test_another_projects_running_backup_does_not_skip_ours(self):
        theirs = self.add_execution(self.add_policy(
            B, 'fake', backup_params={'fake_build_seconds': 3600}))
        self.assertEqual('RUNNING', self.start(theirs).status)
        ours = self.start(self.add_execution(self.add_policy(A, 'trove')))
        self.assertEqual(('RUNNING', None), (ours.status, ours.status_reason))
        self.assertEqual(1, self.trove.create_count(self.instance))

    def test_nor_queues_ours(self):
        theirs = self.add_execution(self.add_policy(
            B, 'fake', backup_params={'fake_build_seconds': 3600}))
        self.start(theirs)
        ours = self.start(self.add_execution(self.add_policy(
            A, 'trove', overlap_policy='queue')))
        self.assertEqual('RUNNING', ours.status)

    def test_our_own_running_backup_still_goes_first(self):
        policy = self.add_policy(A, 'trove')
        first = self.start(self.add_execution(policy, minutes=1))
        other_policy = self.add_policy(A, 'trove')
        second = self.start(self.add_execution(other_policy))
        self.assertEqual('SKIPPED', second.status)
        # It names an execution of A's own, never B's.
        self.assertEqual('overlap: execution %s of the same instance is '
                         'still running' % first.id, second.status_reason)

    def test_the_same_id_at_another_backend_is_another_instance(self):
        fake = self.add_execution(self.add_policy(
            A, 'fake', backup_params={'fake_build_seconds': 3600}))
        self.assertEqual('RUNNING', self.start(fake).status)
        trove = self.start(self.add_execution(self.add_policy(A, 'trove')))
        self.assertEqual('RUNNING', trove.status)

    # Retention -----------------------------------------------------------

    def succeed(self, policy):
        execution = self.add_execution(policy)
        self.start(execution)
        self.poller.run_pass(self.context)
        done = self.execution(execution.id)
        self.assertEqual('SUCCEEDED', done.status, done.fault)
        return done

    def test_retention_keeps_to_its_own_project(self):
        # The fake backend lists every backup of an id, whoever made it:
        # A's retention sees B's backups, and must leave them.
        self.conf.set_override('retention_grace', 0, group='worker')
        shared = 'shared-%s' % uuidutils.generate_uuid()[:8]
        theirs = self.add_policy(B, 'fake', shared, keep_last=1)
        b_backups = [self.succeed(theirs).backup_id for _ in range(2)]
        ours = self.add_policy(A, 'fake', shared, keep_last=1)
        a_first = self.succeed(ours).backup_id
        a_last = self.succeed(ours)
        self.assertEqual([a_first], [entry['id'] for entry in
                                     a_last.deleted_backups or ()])
        listed = {backup.id for backup in loader.get_backend(
            self.conf, 'fake').list_backups(ours)}
        # B's own retention deleted its first; A's touched neither.
        self.assertEqual({b_backups[1], a_last.backup_id}, listed)

    # Reconciliation ----------------------------------------------------

    def tagged_backup(self, project_id, execution_id):
        # Finished: the instance's own backups take an hour.
        return self.trove.add_backup(
            project_id, self.instance,
            description='Backup. ' + backends.execution_tag(execution_id),
            build_seconds=0)

    def queue(self, policy):
        now = timeutils.utcnow(True)
        db_reconciliation.schedule(
            self.context, db_reconciliation.InstanceToReconcile(
                policy.instance_id, policy.id,
                now - datetime.timedelta(seconds=1),
                now + datetime.timedelta(hours=1)))

    def test_each_project_is_reconciled_through_its_own_policy(self):
        ours = self.add_policy(A, 'trove')
        skipped = self.add_execution(ours, minutes=3, status='SKIPPED')
        orphan = self.tagged_backup(A, skipped.id)
        theirs = self.add_policy(B, 'fake',
                                 backup_params={'fake_build_seconds': 0})
        their_skipped = self.add_execution(theirs, minutes=2,
                                           status='SKIPPED')
        # A backup in A's project that names B's execution: not A's to
        # delete as an orphan of its own.
        named_for_b = self.tagged_backup(A, their_skipped.id)
        # B queues the same id after A: it must not take A's turn.
        self.queue(ours)
        self.queue(theirs)
        totals = self.reconciler.run_pass(self.context)
        self.assertEqual((2, 1), (totals['instances'], totals['orphan']))
        left = {backup['id'] for backup in self.trove.backups(A)}
        self.assertNotIn(orphan, left)
        self.assertIn(named_for_b, left)

    def test_no_other_projects_policy_is_acted_through(self):
        ours = self.add_policy(A, 'trove')
        skipped = self.add_execution(ours, minutes=3, status='SKIPPED')
        orphan = self.tagged_backup(A, skipped.id)
        self.queue(ours)
        # A's policy goes; B's policy of the same id stays, and is no
        # way to A's backups.
        self.add_policy(B, 'fake')
        db_api.delete_policy(self.context, ours.id)
        self.reconciler.run_pass(self.context)
        self.assertIn(orphan, {b['id'] for b in self.trove.backups(A)})
        self.assertEqual(0, db_reconciliation.count_queued(self.context))


class TestTenantScopeSQLite(_TenantScopeTests, base.TestCase):
    DRIVER = 'sqlite'


class TestTenantScopeMySQL(_TenantScopeTests, base.TestCase):
    DRIVER = 'mysql'


class TestTenantScopePostgreSQL(_TenantScopeTests, base.TestCase):
    DRIVER = 'postgresql'
