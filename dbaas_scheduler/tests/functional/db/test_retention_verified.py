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
"""Retention never deletes the newest verified backup (its chain either).

Through the worker's own ``apply_retention``, on SQLite, MariaDB and
PostgreSQL: what the database records of the verifications decides.
"""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import fake
from dbaas_scheduler import context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.worker import retention

DAY = datetime.timedelta(days=1)


class _Verified(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = context.get_admin_context()
        self.conf.set_override('max_attempts', 1, group='worker')
        self.conf.set_override('retention_grace', 0, group='worker')
        self.backend = fake.FakeBackend(self.conf)
        self.now = timeutils.utcnow(True)
        self.policy = db_api.create_policy(self.context, {
            'name': 'nightly', 'project_id': 'project-a',
            'user_id': 'user-a', 'instance_id': uuidutils.generate_uuid(),
            'schedule_type': 'cron', 'schedule': '30 2 * * *',
            'timezone': 'UTC', 'next_execution_time': self.now + DAY,
            'backend': 'fake', 'keep_last': 1, 'verify_every': 3})
        # The second backup (an incremental of the first) passed its
        # verification; the fifth failed it: it protects nothing.
        results = {1: 'passed', 4: 'failed'}
        self.executions = []
        parent = None
        for number, age in enumerate(range(6, 0, -1)):
            # The second is an incremental backup of the first.
            execution = self.backup(self.now - age * DAY,
                                    parent if number == 1 else None,
                                    results.get(number))
            parent = execution.backup_id
            self.executions.append(execution)

    def backup(self, created_at, parent_id=None, verify_result=None):
        made = self.backend.create_backup(self.policy, 'b', 'd')
        made.created_at = created_at
        made.parent_id = parent_id
        made.status = backends.BackupStatus.COMPLETED
        return db_api.create_execution(self.context, {
            'policy_id': self.policy.id, 'project_id': 'project-a',
            'instance_id': self.policy.instance_id,
            'scheduled_at': created_at, 'finished_at': created_at,
            'status': 'SUCCEEDED', 'backup_id': made.id,
            'verify_result': verify_result,
            'verified_at': verify_result and created_at})

    def apply(self):
        return retention.apply_retention(self.conf, self.context,
                                         self.executions[-1], self.policy,
                                         self.backend)

    def listed(self):
        return {b.id for b in self.backend.list_backups(self.policy)}

    def test_the_newest_verified_and_its_chain_stay(self):
        self.apply()
        ids = [e.backup_id for e in self.executions]
        self.assertEqual({ids[0], ids[1], ids[5]}, self.listed())

    def test_only_while_verification_is_on(self):
        db_api.update_policy(self.context, self.policy.id,
                             {'verify_every': None})
        self.policy = db_api.get_policy(self.context, self.policy.id)
        self.apply()
        listed = self.listed()
        self.assertNotIn(self.executions[0].backup_id, listed)
        self.assertIn(self.executions[-1].backup_id, listed)
        # The incremental went with its parent (the fake backend does not
        # delete it itself): retention recorded it deleted.
        deleted = {entry['id'] for entry in db_api.get_execution(
            self.context, self.executions[-1].id).deleted_backups}
        self.assertIn(self.executions[1].backup_id, deleted)


class TestVerifiedSQLite(_Verified, base.TestCase):
    pass


class TestVerifiedMySQL(_Verified, base.TestCase):
    DRIVER = 'mysql'


class TestVerifiedPostgreSQL(_Verified, base.TestCase):
    DRIVER = 'postgresql'
