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
"""The chaos checker's verdict on scheduled verifications."""

import datetime
import types
import uuid

from tools.chaos import checker

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.testing.fake_trove import model
from dbaas_scheduler.tests import base

T0 = datetime.datetime(2026, 11, 28, 1, 0, tzinfo=datetime.timezone.utc)
POLICY = str(uuid.uuid4())


def _execution(minute, verified=None, **values):
    row = dict(
        id=str(uuid.uuid4()), policy_id=POLICY,
        scheduled_at=T0 + datetime.timedelta(minutes=minute),
        status='SUCCEEDED', status_reason=None, backup_id=str(uuid.uuid4()),
        deleted_backups=None, held_at=None, backup_state=None,
        started_at=None, start_deadline=None, attempts=1,
        finished_at=T0 + datetime.timedelta(minutes=minute, seconds=20),
        verified_at=None, verify_result=None)
    if verified is not None:
        row.update(verified_at=T0 + datetime.timedelta(minutes=verified),
                   verify_result='passed')
    row.update(values)
    return types.SimpleNamespace(**row)


def _record(execution, deleted_minute=None):
    return model.BackupRecord(
        id=execution.backup_id, project_id='p', instance_id='i',
        description=backends.execution_tag(execution.id),
        created=execution.scheduled_at.timestamp(),
        deleted=(None if deleted_minute is None else
                 (T0 + datetime.timedelta(minutes=deleted_minute))
                 .timestamp()))


def _verification(execution, **values):
    verify_id = str(uuid.uuid4())
    row = dict(id=verify_id, policy_id=POLICY, verify_slot=execution.id,
               status='SUCCEEDED', status_reason=None, attempts=1,
               duration=1.5, target_id=backends.scratch_name(verify_id),
               scratch_deleted_at=T0)
    row.update(values)
    return types.SimpleNamespace(**row)


class TestVerifications(base.TestCase):

    def _verdict(self, executions, deleted=None, rows=(), at_backend=()):
        deleted = deleted or {}
        history = [_record(row, deleted.get(row.id)) for row in executions]
        verdict = checker.Verdict({}, executions, history)
        verdict.verifications({POLICY: 2}, list(rows), list(at_backend))
        return verdict

    def test_holds(self):
        first, second = _execution(0), _execution(1, verified=2)
        verdict = self._verdict([first, second],
                                rows=[_verification(second)])
        self.assertTrue(verdict.holds, dict(verdict.problems))
        self.assertEqual('1 / 0',
                         verdict.figures['scratch targets recorded / left'])

    def test_slot_verified_twice(self):
        first, second = _execution(0), _execution(1, verified=2)
        verdict = self._verdict(
            [first, second],
            rows=[_verification(second), _verification(second)])
        self.assertFalse(verdict.holds)
        self.assertEqual([second.id],
                         verdict.problems['slots verified more than once'])

    def test_due_not_recorded(self):
        verdict = self._verdict([_execution(0), _execution(1)])
        self.assertFalse(verdict.holds)
        self.assertEqual(
            1, verdict.figures['verifications due and never recorded'])

    def test_scratch_left(self):
        first, second = _execution(0), _execution(1, verified=2)
        row = _verification(second, scratch_deleted_at=None)
        verdict = self._verdict([first, second], rows=[row])
        self.assertFalse(verdict.holds)
        self.assertEqual(1, len(verdict.problems['scratch targets left']))
        stray = backends.scratch_name(str(uuid.uuid4()))
        verdict = self._verdict([first, second], rows=[_verification(second)],
                                at_backend=[stray])
        self.assertEqual(['%s (at the backend, recorded nowhere)' % stray],
                         verdict.problems['scratch targets left'])

    def test_newest_verified_deleted(self):
        first = _execution(0)
        second = _execution(1, verified=2, backup_state='deleted')
        verdict = self._verdict([first, second], deleted={second.id: 3},
                                rows=[_verification(second)])
        self.assertEqual(1, len(
            verdict.problems['newest verified backup deleted']))
        # Once a newer backup is verified, the older one may go.
        third, fourth = _execution(3), _execution(4, verified=5)
        verdict = self._verdict(
            [first, second, third, fourth], deleted={second.id: 6},
            rows=[_verification(second), _verification(fourth)])
        self.assertTrue(verdict.holds, dict(verdict.problems))

    def test_scratch_names(self):
        name = backends.scratch_name(str(uuid.uuid4()))
        self.assertEqual([name], checker.scratch_names(
            [name, 'restored-db', None]))
