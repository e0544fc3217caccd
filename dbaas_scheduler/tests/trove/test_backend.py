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
"""The trove backend against the real Trove API (26.0.0, fake mode)."""

from concurrent import futures
import datetime
import time
import types

from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import backend as trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.backends.trove import contract
from dbaas_scheduler.tests.functional.fixtures import trove_fixtures
from dbaas_scheduler.worker import backup_request


class TroveTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.trove = trove_fixtures.use_trove(self)
        self.trove.configure(self)
        self.backend = trove.TroveBackend(self.conf)
        self.policy = contract.make_policy(self.trove.create_instance(),
                                           self.trove.project_id)
        self.description = 'Backup of policy nightly. %s' % (
            backends.execution_tag('e0'))

    def new_instance(self):
        return self.trove.create_instance()

    def settle(self, backup_id, policy=None):
        self.trove.wait(
            lambda: self.trove.backup(backup_id)['status'] not in
            backends.BackupStatus.IN_PROGRESS, what='backup %s done'
            % backup_id)
        self.trove.wait_instance_idle(self.policy.instance_id)


class TestContractOnTrove(contract.BackendContract, TroveTestCase):
    """The contract tests, on Trove itself."""


class TestWhatRealTroveShowed(TroveTestCase):
    """Bugs real Trove showed (issue 10); each failed before its fix."""

    def test_rate_limiting_is_waited_out_not_a_quota(self):
        # Trove allows 200 GETs a minute per project, then answers 413
        # overLimit with Retry-After: a pause, not a used-up quota.
        backup = self.create_and_settle()
        started = time.monotonic()
        with futures.ThreadPoolExecutor(8) as pool:
            found = list(pool.map(
                lambda _: self.backend.get_backup(self.policy, backup).id,
                range(300)))
        self.assertEqual([backup] * 300, found)
        # The last ~100 waited for Trove's bucket (0.3 s per request).
        self.assertGreater(time.monotonic() - started, 10)

    def test_a_real_quota_still_fails(self):
        self.trove.set_backup_quota(self.trove.project_id, 0)
        exc = self.assertRaises(backends.PermanentBackendError,
                                self.create)
        self.assertNotIsInstance(exc, backends.TransientBackendError)
        self.assertIn('Quota exceeded', str(exc))

    def test_unhealthy_database_fails_at_once(self):
        for status in ('FAILED', 'SHUTDOWN'):
            self.trove.set_operating_status(self.policy.instance_id, status)
            instance = self.trove.instance(self.policy.instance_id)
            self.assertEqual(('ACTIVE', status), (
                instance['status'], instance['operating_status']))
            exc = self.assertRaises(backends.BackendError, self.create)
            self.assertNotIsInstance(exc, backends.TransientBackendError)
            self.assertIn('unhealthy', str(exc))
            self.assertIn(status, str(exc))

    def test_names_trove_refuses(self):
        for name in ('line\nbreak', '\u65e5\u672c\u8a9e', '  -  ', 'x' * 255,
                     'tab\there'):
            policy = types.SimpleNamespace(
                id=uuidutils.generate_uuid(), name=name)
            execution = types.SimpleNamespace(
                id=uuidutils.generate_uuid(), trigger='manual',
                scheduled_at=datetime.datetime(2027, 1, 31, 2, 30,
                                               tzinfo=datetime.timezone.utc))
            backup = self.backend.create_backup(
                self.policy, backup_request.backup_name(policy, execution),
                backup_request.backup_description(policy, execution))
            self.assertNotIn('\n', backup.name)
            self.assertIn(backends.execution_tag(execution.id),
                          backup.description)
            self.settle(backup.id)

    def test_a_fault_names_troves_request_id(self):
        # What we send is checked on the fake (Trove 26 does not log it).
        self.create()
        exc = self.assertRaises(backends.InstanceBusy, self.create)
        self.assertRegex(str(exc), r'\(Trove request id req-[0-9a-f-]{36}\)')
        exc = self.assertRaises(backends.InstanceNotFound, self.create,
                                contract.make_policy(
                                    uuidutils.generate_uuid(),
                                    self.trove.project_id))
        self.assertRegex(str(exc), r'\(Trove request id req-[0-9a-f-]{36}\)')

    def test_markup_is_stripped_from_faults(self):
        # A token of another project: Trove's 403 carries "<br /><br />".
        policy = contract.make_policy(self.policy.instance_id)
        exc = self.assertRaises(backends.BackendForbidden, self.create,
                                policy)
        self.assertIn('cannot access this resource', str(exc))
        self.assertNotIn('<br', str(exc))

    def create(self, policy=None):
        return self.backend.create_backup(policy or self.policy, 'n',
                                          self.description)

    def create_and_settle(self):
        backup = self.create()
        self.settle(backup.id)
        return backup.id
