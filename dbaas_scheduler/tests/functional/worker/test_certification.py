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
"""A worker's write that loses a deadlock at commit is taken again.

On a Galera cluster, two nodes that change the same row at once both run
their statements; the second to commit fails certification and gets a
deadlock error (1213), its transaction rolled back.  Workers on different
nodes meet that way on a claim (the same execution cast twice), a
recorded backup id, a lease renewal or a reconciliation claim.  Each is a
conditional write, so the transaction is taken again and decides anew on
what the database holds then; before this, the claim's message failed and
its executions waited for the engine's re-cast, and a backup id waited
for the lease to run out.  A commit hook fails the first commit here, as
certification would.
"""

import datetime

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import leases as db_leases
from dbaas_scheduler.db import reconciliation as db_reconciliation
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures


class _CertificationTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.get_admin_context()
        self.failures = 0
        self.policy = policy = db_api.create_policy(self.context, dict(
            name='nightly', project_id='project-a', instance_id='instance',
            schedule_type='cron', schedule='30 2 * * *', timezone='UTC',
            next_execution_time=timeutils.utcnow(True)
            + datetime.timedelta(days=1)))
        self.execution = db_api.create_execution(self.context, dict(
            policy_id=policy.id, project_id=policy.project_id,
            instance_id=policy.instance_id, status='DISPATCHED',
            scheduled_at=timeutils.utcnow(True)))

    def fail_commits(self, count=1):
        """The next ``count`` commits fail as certification does."""
        def commit(connection):
            if self.failures < count:
                self.failures += 1
                raise db_exc.DBDeadlock()
        sa.event.listen(self.engine, 'commit', commit)
        self.addCleanup(sa.event.remove, self.engine, 'commit', commit)

    def claim(self, claim_id=None):
        return db_worker.claim_executions(
            self.context, [self.execution.id], 'worker-a',
            claim_id or uuidutils.generate_uuid(), timeutils.utcnow(True),
            300)

    def test_a_claim_that_fails_certification_is_taken_again(self):
        self.fail_commits()
        self.assertEqual([self.execution.id], self.claim())
        self.assertEqual(1, self.failures)
        execution = db_api.get_execution(self.context, self.execution.id)
        # The failed attempt left nothing: one attempt, one claim.
        self.assertEqual(('RUNNING', 1), (execution.status,
                                          execution.attempts))

    def test_a_claim_lost_to_another_node_stays_lost(self):
        # The other node's claim won; this node's retry finds it taken.
        self.claim()
        self.fail_commits()
        self.assertEqual([], self.claim())

    def test_a_backup_id_that_fails_certification_is_recorded(self):
        claim_id = uuidutils.generate_uuid()
        self.claim(claim_id)
        self.fail_commits()
        self.assertEqual({self.execution.id}, db_worker.record_backup_ids(
            self.context, [(self.execution.id, claim_id, 'backup-1')]))
        self.assertEqual('backup-1', db_api.get_execution(
            self.context, self.execution.id).backup_id)

    def test_a_renewal_that_fails_certification_is_taken_again(self):
        claim_id = uuidutils.generate_uuid()
        self.claim(claim_id)
        self.fail_commits()
        self.assertEqual({self.execution.id}, db_leases.renew_leases(
            self.context, {self.execution.id: claim_id},
            timeutils.utcnow(True), 300))
        self.assertEqual(1, self.failures)

    def test_a_reconciliation_claim_is_taken_again(self):
        now = timeutils.utcnow(True)
        db_reconciliation.schedule(
            self.context, db_reconciliation.InstanceToReconcile(
                'instance', self.policy.id,
                now - datetime.timedelta(seconds=1),
                now + datetime.timedelta(hours=1)))
        self.fail_commits()
        claimed = db_reconciliation.claim_due(self.context, now, 10, 300)
        self.assertEqual(['instance'], [item.instance_id
                                        for item in claimed])
        self.assertEqual(1, self.failures)


class TestCertificationMySQL(_CertificationTests, base.TestCase):
    DRIVER = 'mysql'


class TestCertificationPostgreSQL(_CertificationTests, base.TestCase):
    DRIVER = 'postgresql'
