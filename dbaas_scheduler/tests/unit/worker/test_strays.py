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
"""Which tagged backups are one too many, and how the tag is read."""

import datetime
import types

from oslotest import base

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.worker import strays

EXECUTION_ID = '0b7c7e0e-6b8f-4a39-9a4e-2d1b3c4d5e6f'


def _execution(status, backup_id=None):
    return types.SimpleNamespace(id=EXECUTION_ID, status=status,
                                 backup_id=backup_id)


class TestStrayReason(base.BaseTestCase):

    def test_the_recorded_backup_is_never_a_stray(self):
        for status in ('RUNNING', 'SUCCEEDED', 'FAILED', 'DISPATCHED'):
            self.assertIsNone(strays.stray_reason(
                _execution(status, 'b-1'), 'b-1'))

    def test_another_backup_of_an_execution_with_one_is_a_duplicate(self):
        # Also while the execution still runs: its backup id never changes.
        for status in ('RUNNING', 'DISPATCHED', 'SUCCEEDED', 'FAILED'):
            self.assertEqual(strays.DUPLICATE, strays.stray_reason(
                _execution(status, 'b-1'), 'b-2'))

    def test_a_backup_of_an_execution_that_ended_without_one(self):
        for status in ('SKIPPED', 'FAILED', 'SUCCEEDED'):
            self.assertEqual(strays.ORPHAN, strays.stray_reason(
                _execution(status), 'b-2'))

    def test_undecided_while_the_execution_may_still_record_it(self):
        for status in ('PENDING', 'DISPATCHED', 'RUNNING'):
            self.assertIsNone(strays.stray_reason(_execution(status),
                                                  'b-2'))

    def test_deleted_entry(self):
        created = datetime.datetime(2027, 3, 10, 2, 0, 41,
                                    tzinfo=datetime.timezone.utc)
        now = created + datetime.timedelta(minutes=5)
        self.assertEqual(
            {'id': 'b-2', 'created_at': '2027-03-10T02:00:41+00:00',
             'reason': 'duplicate', 'deleted_at': now.isoformat()},
            strays.deleted_entry(backends.Backup('b-2', 'i', 'COMPLETED',
                                                 created_at=created),
                                 strays.DUPLICATE, now))


class TestTag(base.BaseTestCase):

    def test_the_tag_is_read_back(self):
        description = 'Scheduled backup of policy p (x) for y. %s' % (
            backends.execution_tag(EXECUTION_ID))
        self.assertEqual(EXECUTION_ID,
                         backends.tagged_execution_id(description))

    def test_no_tag(self):
        for description in (None, '', 'made by hand',
                            'dbaas-scheduler-execution:not-a-uuid'):
            self.assertIsNone(backends.tagged_execution_id(description))
