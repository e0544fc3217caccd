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
"""The engine purges the history by default: what goes after 90 days."""

import datetime

from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler import context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.engine import service as engine_service
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

NOW = timeutils.utcnow(True).replace(microsecond=0)
DAY = datetime.timedelta(days=1)


class _DefaultPurge(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = context.get_admin_context()

    def policy(self):
        instance_id = uuidutils.generate_uuid()
        return db_api.create_policy(self.context, {
            'name': 'p-%s' % instance_id, 'project_id': 'project-a',
            'instance_id': instance_id,
            'schedule_type': 'cron', 'schedule': '0 * * * *',
            'next_execution_time': NOW + DAY})

    def execution(self, policy, days, status='FAILED', **values):
        when = NOW - days * DAY
        return db_api.create_execution(self.context, dict({
            'policy_id': policy.id, 'project_id': 'project-a',
            'instance_id': policy.instance_id, 'scheduled_at': when,
            'status': status, 'created_at': when,
            'finished_at': when + datetime.timedelta(minutes=5)},
            **values)).id

    def remaining(self):
        with self.engine.connect() as connection:
            return set(connection.execute(
                sa.select(models.BackupExecution.id)).scalars())

    def purge_pass(self):
        """One whole pass of the engine's purge loop, as configured."""
        service = engine_service.EngineService(self.conf)
        purge_once = service.purge_once
        interval = self.conf.engine.execution_purge_interval
        for _ in range(100):
            if purge_once(self.context) == interval:
                return
        self.fail('the purge pass did not end')

    def test_default_purges_after_90_days_and_keeps_what_is_needed(self):
        a = self.policy()
        gone = {
            self.execution(a, 200),
            self.execution(a, 120, 'SKIPPED'),
            # Its backup was deleted by retention (recorded below).
            self.execution(a, 180, 'SUCCEEDED', backup_id='bk-1')}
        stay = {
            # Its backup is still kept; it records bk-1's deletion.
            self.execution(a, 150, 'SUCCEEDED', backup_id='bk-2',
                           deleted_backups=[{'id': 'bk-1',
                                             'created_at': 'x'}]),
            # Within the 90 days.
            self.execution(a, 89),
            self.execution(a, 30, 'SUCCEEDED', backup_id='bk-3')}
        # A policy that last ran a year ago keeps its newest execution.
        b = self.policy()
        gone.add(self.execution(b, 400))
        stay.add(self.execution(b, 365))
        # A policy whose last_execution_id is old.
        c = self.policy()
        last = self.execution(c, 300)
        gone.add(self.execution(c, 250))
        stay |= {last, self.execution(c, 200, 'SKIPPED')}
        db_api.update_policy(self.context, c.id,
                             {'last_execution_id': last})
        # Unfinished executions are never purged.
        stay.add(self.execution(c, 500, 'RUNNING', finished_at=None))
        self.assertEqual(gone | stay, self.remaining())
        self.purge_pass()
        self.assertEqual(stay, self.remaining())


class TestDefaultPurgeSQLite(_DefaultPurge, base.TestCase):
    DRIVER = 'sqlite'


class TestDefaultPurgeMySQL(_DefaultPurge, base.TestCase):
    DRIVER = 'mysql'


class TestDefaultPurgePostgreSQL(_DefaultPurge, base.TestCase):
    DRIVER = 'postgresql'
