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
"""The queue of trusts still to delete, on every database."""

import datetime

from oslo_utils import timeutils

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import trusts as db_trusts
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures


class _TrustQueue(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.get_admin_context()
        self.now = timeutils.utcnow(True)

    def test_record_claim_fail_forget(self):
        db_trusts.record(self.context, 't1', 'p1', 'Keystone away')
        # Recorded twice (two deletions racing): one row, unchanged.
        db_trusts.record(self.context, 't1', 'p1', 'again')
        db_trusts.record(self.context, 't2', None, 'x' * 5000,
                         due_at=self.now + datetime.timedelta(hours=1))
        [row, later] = db_trusts.list_pending(self.context)
        self.assertEqual(('t1', 'p1', 0, 'Keystone away'),
                         (row.trust_id, row.project_id, row.attempts,
                          row.last_error))
        self.assertEqual(1000, len(later.last_error))

        now = timeutils.utcnow(True)
        self.assertEqual([('t1', 0, 'p1')],
                         db_trusts.claim_due(self.context, now, 10, 300))
        # Claimed: not due again until the lease ends.
        self.assertEqual([], db_trusts.claim_due(self.context, now, 10, 300))
        db_trusts.failed(self.context, 't1', now, 'still away')
        self.assertEqual([('t1', 1, 'p1')],
                         db_trusts.claim_due(self.context, now, 10, 300))
        db_trusts.forget(self.context, 't1')
        self.assertEqual(['t2'], [row.trust_id for row in
                                  db_trusts.list_pending(self.context)])


class TestTrustQueueSQLite(_TrustQueue, base.TestCase):
    DRIVER = 'sqlite'


class TestTrustQueueMySQL(_TrustQueue, base.TestCase):
    DRIVER = 'mysql'


class TestTrustQueuePostgreSQL(_TrustQueue, base.TestCase):
    DRIVER = 'postgresql'
