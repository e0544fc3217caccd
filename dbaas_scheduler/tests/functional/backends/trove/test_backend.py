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
"""The trove backend over real HTTP, against the fake Trove server.

The contract tests (contract.py) and the faults only this server can
produce: slow answers, 5xx, dropped connections.
"""

import concurrent.futures
import datetime
import time
import types

from oslo_context import context
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import backend as trove
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.backends.trove import contract

UTC = datetime.timezone.utc


class Clock:
    """A POSIX clock the test moves by hand."""

    def __init__(self):
        self.now = time.time()

    def __call__(self):
        return self.now

    def advance(self, seconds):
        self.now += seconds


def make_policy(instance_id, project_id=None, **backup_params):
    return types.SimpleNamespace(
        id=uuidutils.generate_uuid(), instance_id=instance_id,
        project_id=project_id or uuidutils.generate_uuid(dashed=False),
        backup_params=backup_params or None)


class TroveBackendTestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.clock = Clock()
        self.trove = self.useFixture(fake_trove.FakeTrove(
            clock=self.clock, behaviour=fake_trove.BackupBehaviour(
                new_seconds=5, build_seconds=60)))
        self.flags(group='service_credentials', auth_type='none', timeout=5)
        self.flags(group='trove', endpoint_override=self.trove.url)
        self.backend = trove.TroveBackend(self.conf)
        self.instance_id = self.trove.add_instance()
        self.policy = make_policy(self.instance_id)
        self.execution_id = uuidutils.generate_uuid()
        self.description = 'Backup of policy p. %s' % backends.execution_tag(
            self.execution_id)

    def create(self, policy=None):
        return self.backend.create_backup(policy or self.policy,
                                          'nightly-20270131T023000Z',
                                          self.description)

    def finish_backups(self):
        self.clock.advance(3600)


class TestContractOnFakeTrove(contract.BackendContract,
                              TroveBackendTestCase):
    """The contract tests, on the in-repo server (tests/trove: on Trove)."""

    def new_instance(self):
        return self.trove.add_instance()

    def settle(self, backup_id, policy=None):
        self.finish_backups()


class TestBackupLifecycle(TroveBackendTestCase):

    def test_create_then_progress_to_completed(self):
        backup = self.create()
        self.assertEqual(backends.BackupStatus.NEW, backup.status)
        self.assertEqual(self.instance_id, backup.instance_id)
        self.assertEqual('nightly-20270131T023000Z', backup.name)
        self.assertEqual(self.description, backup.description)
        self.assertEqual(UTC, backup.created_at.tzinfo)
        self.assertLess(abs(time.time() - backup.created_at.timestamp()), 5)
        self.assertFalse(backup.finished)

        self.clock.advance(10)
        building = self.backend.get_backup(self.policy, backup.id)
        self.assertEqual(backends.BackupStatus.BUILDING, building.status)
        self.assertIsNone(building.location)

        self.clock.advance(60)
        done = self.backend.get_backup(self.policy, backup.id)
        self.assertEqual(backends.BackupStatus.COMPLETED, done.status)
        self.assertTrue(done.finished)
        self.assertEqual(int(round(0.12 * 1024 ** 3)), done.size_bytes)
        self.assertIn(backup.id, done.location)
        self.assertIsNone(done.fault)
        self.assertEqual(65, (done.updated_at - done.created_at).seconds)
        self.assertEqual(1, self.trove.create_count(self.instance_id))

    def test_request_body_is_trove_api_ref_shape(self):
        parent_id = self.trove.add_backup(self.policy.project_id,
                                          self.instance_id)
        self.finish_backups()
        policy = make_policy(self.instance_id, self.policy.project_id,
                             incremental=True, parent_id=parent_id,
                             swift_container='my-backups')
        backup = self.create(policy)

        posts = [r for r in self.trove.requests if r.method == 'POST']
        self.assertEqual(1, len(posts))
        self.assertEqual('/v1.0/%s/backups' % policy.project_id,
                         posts[0].path)
        self.assertEqual({'backup': {
            'name': 'nightly-20270131T023000Z',
            'instance': self.instance_id,
            'description': self.description,
            'incremental': 1,
            'parent_id': parent_id,
            'swift_container': 'my-backups'}}, posts[0].body)
        self.assertEqual(parent_id, backup.parent_id)
        # The instance is looked at first, in the policy's project.
        self.assertEqual(
            ('GET', '/v1.0/%s/instances/%s' % (policy.project_id,
                                               self.instance_id)),
            (self.trove.requests[0].method, self.trove.requests[0].path))

    def test_request_body_without_backup_params(self):
        self.create()
        post = [r for r in self.trove.requests if r.method == 'POST'][0]
        self.assertEqual({'backup': {
            'name': 'nightly-20270131T023000Z',
            'instance': self.instance_id,
            'description': self.description}}, post.body)

    def test_failed_backup(self):
        self.trove.set_behaviour(self.instance_id, final_status='FAILED')
        backup = self.create()
        self.finish_backups()
        failed = self.backend.get_backup(self.policy, backup.id)
        self.assertEqual(backends.BackupStatus.FAILED, failed.status)
        self.assertTrue(failed.finished)
        self.assertIn('guest agent', failed.fault)

    def test_slow_backup_stays_building(self):
        self.trove.set_behaviour(self.instance_id, build_seconds=7200)
        backup = self.create()
        self.clock.advance(3600)
        self.assertEqual(
            backends.BackupStatus.BUILDING,
            self.backend.get_backup(self.policy, backup.id).status)

    def test_get_missing_backup(self):
        missing = uuidutils.generate_uuid()
        exc = self.assertRaises(backends.BackupNotFound,
                                self.backend.get_backup, self.policy, missing)
        self.assertIn(missing, str(exc))

    def test_delete_and_delete_missing(self):
        backup = self.create()
        self.finish_backups()
        self.backend.delete_backup(self.policy, backup.id)
        self.assertRaises(backends.BackupNotFound,
                          self.backend.get_backup, self.policy, backup.id)
        self.backend.delete_backup(self.policy, backup.id)
        deletes = [r for r in self.trove.requests if r.method == 'DELETE']
        self.assertEqual(2, len(deletes))

    def test_delete_running_backup_is_busy(self):
        backup = self.create()
        exc = self.assertRaises(backends.InstanceBusy,
                                self.backend.delete_backup, self.policy,
                                backup.id)
        self.assertIn('cannot be deleted because it is running', str(exc))

    def test_incremental_backup_and_cascading_delete(self):
        full = self.create()
        self.finish_backups()
        incremental = self.create(make_policy(
            self.instance_id, self.policy.project_id, incremental=True))
        self.assertEqual(full.id, incremental.parent_id)
        self.finish_backups()
        # Trove deletes the incremental backups built on a deleted one.
        self.backend.delete_backup(self.policy, full.id)
        self.assertEqual([], self.backend.list_backups(self.policy))

    def test_backups_are_kept_per_project(self):
        other = make_policy(self.instance_id)
        self.create()
        self.finish_backups()
        self.assertEqual([], self.backend.list_backups(other))
        self.assertEqual(1, len(self.backend.list_backups(self.policy)))


class TestFindAndList(TroveBackendTestCase):

    def add_backups(self, count, instance_id=None, project_id=None):
        start = self.clock() - count * 60
        return [self.trove.add_backup(
            project_id or self.policy.project_id,
            instance_id or self.instance_id, name='old-%d' % number,
            description='Backup %d' % number, created=start + number * 60)
            for number in range(count)]

    def test_find_backup_across_pages(self):
        # The oldest backup carries the tag: it is on the last page.
        tagged = self.trove.add_backup(
            self.policy.project_id, self.instance_id,
            description=self.description,
            created=self.clock() - 10 ** 6)
        self.add_backups(2 * trove.PAGE_SIZE + 10)
        self.finish_backups()

        found = self.backend.find_backup(
            self.policy, backends.execution_tag(self.execution_id))
        self.assertEqual(tagged, found.id)

        lists = [r for r in self.trove.requests if r.method == 'GET']
        self.assertEqual(3, len(lists))
        page = trove.PAGE_SIZE
        self.assertEqual([None, str(page), str(2 * page)],
                         [r.query.get('marker') for r in lists])
        for request in lists:
            self.assertEqual(self.instance_id, request.query['instance_id'])
            self.assertEqual(str(trove.PAGE_SIZE), request.query['limit'])

    def test_find_backup_absent(self):
        self.add_backups(trove.PAGE_SIZE)
        self.assertIsNone(self.backend.find_backup(
            self.policy, backends.execution_tag(self.execution_id)))

    def test_find_backup_of_a_new_create(self):
        created = self.create()
        found = self.backend.find_backup(
            self.policy, backends.execution_tag(self.execution_id))
        self.assertEqual(created.id, found.id)

    def test_list_backups_of_the_instance_only(self):
        ours = self.add_backups(trove.PAGE_SIZE * 2)
        self.add_backups(3, instance_id=self.trove.add_instance())
        self.add_backups(3, project_id='another-project')
        self.finish_backups()
        listed = self.backend.list_backups(self.policy)
        self.assertEqual(sorted(ours), sorted(b.id for b in listed))
        self.assertTrue(all(b.status == backends.BackupStatus.COMPLETED
                            for b in listed))

    def test_list_empty(self):
        self.assertEqual([], self.backend.list_backups(self.policy))


class TestInstanceChecks(TroveBackendTestCase):

    def test_unknown_instance(self):
        policy = make_policy(uuidutils.generate_uuid())
        exc = self.assertRaises(backends.InstanceNotFound, self.create,
                                policy)
        self.assertIn('Resource %s cannot be found.' % policy.instance_id,
                      str(exc))
        self.assertFalse([r for r in self.trove.requests
                          if r.method == 'POST'])

    def test_instance_deleted_after_its_first_backup(self):
        self.create()
        self.finish_backups()
        self.trove.remove_instance(self.instance_id)
        self.assertRaises(backends.InstanceNotFound, self.create)

    def test_instance_of_another_project(self):
        instance_id = self.trove.add_instance(project_id='someone-else')
        self.assertRaises(backends.InstanceNotFound, self.create,
                          make_policy(instance_id))

    def test_instance_deleted_between_check_and_create(self):
        self.trove.inject_failure(
            404, operation=fake_trove.BACKUP_CREATE,
            message='Resource %s cannot be found.' % self.instance_id)
        self.assertRaises(backends.InstanceNotFound, self.create)

    def test_busy_statuses(self):
        for status in ('BUILD', 'REBOOT', 'RESIZE', 'BACKUP', 'UPGRADE'):
            self.trove.set_instance_status(self.instance_id, status)
            exc = self.assertRaises(backends.InstanceBusy, self.create)
            self.assertIn(status, str(exc))
        self.assertEqual(0, self.trove.create_count(self.instance_id))

    def test_broken_statuses_are_permanent(self):
        self.trove.set_instance_status(self.instance_id, 'ERROR',
                                       fault='Volume attach failed')
        exc = self.assertRaises(backends.PermanentBackendError, self.create)
        self.assertNotIsInstance(exc, backends.InstanceNotFound)
        self.assertIn('ERROR', str(exc))
        self.assertIn('Volume attach failed', str(exc))

    def test_second_backup_while_one_runs(self):
        self.create()
        exc = self.assertRaises(backends.InstanceBusy, self.create)
        self.assertIn('BACKUP', str(exc))
        self.finish_backups()
        self.create()
        self.assertEqual(2, self.trove.create_count(self.instance_id))


class TestErrors(TroveBackendTestCase):

    def test_422_is_instance_busy(self):
        message = ('Instance %s is not currently available for an action to '
                   'be performed (task status was BACKING_UP).'
                   % self.instance_id)
        self.trove.inject_failure(422, operation=fake_trove.BACKUP_CREATE,
                                  message=message)
        exc = self.assertRaises(backends.InstanceBusy, self.create)
        self.assertIsInstance(exc, backends.TransientBackendError)
        self.assertIn(message, str(exc))
        self.assertIn('HTTP 422', str(exc))

    def test_server_errors_are_transient_then_succeed(self):
        for status in (500, 503):
            self.trove.inject_failure(status, count=1,
                                      instance_id=self.instance_id,
                                      message='Trove says %d' % status)
            exc = self.assertRaises(backends.TransientBackendError,
                                    self.create)
            self.assertNotIsInstance(exc, backends.PermanentBackendError)
            self.assertIn('Trove says %d' % status, str(exc))
        self.create()
        self.assertEqual(1, self.trove.create_count(self.instance_id))

    def test_default_trove_message_reaches_the_error(self):
        self.trove.inject_failure(503, operation=fake_trove.BACKUP_SHOW)
        exc = self.assertRaises(backends.TransientBackendError,
                                self.backend.get_backup, self.policy, 'b')
        self.assertIn('The server is currently unavailable', str(exc))

    def test_dropped_connection_is_transient(self):
        self.trove.inject_failure(fake_trove.DROP,
                                  operation=fake_trove.BACKUP_CREATE)
        exc = self.assertRaises(backends.TransientBackendError, self.create)
        self.assertIn('could not reach Trove', str(exc))

    def test_timeout_is_transient(self):
        self.flags(group='service_credentials', timeout=0.3)
        backend = trove.TroveBackend(self.conf)
        self.trove.inject_delay(1.5, count=1)
        self.assertRaises(backends.TransientBackendError,
                          backend.list_backups, self.policy)

    def test_connection_refused_is_transient(self):
        port = ports.free_port()
        self.flags(group='trove',
                   endpoint_override='http://127.0.0.1:%d/v1.0/'
                                     '%%(project_id)s' % port)
        backend = trove.TroveBackend(self.conf)
        self.assertRaises(backends.TransientBackendError,
                          backend.get_backup, self.policy, 'b')

    def test_403_is_forbidden(self):
        self.trove.inject_failure(
            403, message='User with tenant id x cannot access this resource.')
        exc = self.assertRaises(backends.BackendForbidden, self.create)
        self.assertIsInstance(exc, backends.PermanentBackendError)
        self.assertIn('cannot access this resource', str(exc))
        self.assertIn(self.instance_id, str(exc))

    def test_request_ids_both_ways(self):
        context.RequestContext(global_request_id='req-%s' % self.execution_id,
                               overwrite=True)
        self.addCleanup(context.RequestContext, overwrite=True)
        self.trove.inject_failure(400, operation=fake_trove.BACKUP_CREATE,
                                  message='Invalid.<br /><br />\nReally.')
        exc = self.assertRaises(backends.PermanentBackendError, self.create)
        self.assertEqual({'req-%s' % self.execution_id},
                         {r.global_request_id for r in self.trove.requests})
        self.assertRegex(str(exc), r'Invalid\. Really\. \(Trove request '
                                   r'id req-[0-9a-f-]{36}\)$')

    def test_rate_limiting_is_waited_out(self):
        self.flags(group='trove', rate_limit_max_wait=10)
        backend = trove.TroveBackend(self.conf)
        self.trove.inject_failure(413, count=3, message='This request was '
                                  'rate-limited.', retry_after=0.2)
        started = time.monotonic()
        self.assertEqual([], backend.list_backups(self.policy))
        self.assertGreater(time.monotonic() - started, 0.5)
        self.assertEqual(4, len(self.trove.requests))

    def test_rate_limiting_too_long_is_transient(self):
        self.flags(group='trove', rate_limit_max_wait=1)
        backend = trove.TroveBackend(self.conf)
        self.trove.inject_failure(413, count=None, message='This request '
                                  'was rate-limited.', retry_after=0.4)
        exc = self.assertRaises(backends.TransientBackendError,
                                backend.list_backups, self.policy)
        self.assertIn('rate_limit_max_wait', str(exc))

    def test_400_is_permanent(self):
        self.trove.inject_failure(400, operation=fake_trove.BACKUP_CREATE,
                                  message='Invalid swift container.')
        exc = self.assertRaises(backends.PermanentBackendError, self.create)
        self.assertIn('Invalid swift container.', str(exc))

    def test_token_hook_refusal(self):
        seen = []

        def check_token(token, project_id):
            seen.append((token, project_id))
            raise fake_trove.TroveFault(401, 'Token rejected.')

        self.trove.check_token = check_token
        exc = self.assertRaises(backends.PermanentBackendError,
                                self.backend.get_backup, self.policy, 'b')
        self.assertIn('Token rejected.', str(exc))
        # keystoneauth's "none" plugin sends a placeholder token.
        self.assertEqual(self.policy.project_id, seen[0][1])

    def test_wrong_endpoint_does_not_mean_instance_gone(self):
        self.flags(group='trove', endpoint_override=self.trove.url.replace(
            '/v1.0', '/v2'))
        backend = trove.TroveBackend(self.conf)
        exc = self.assertRaises(backends.PermanentBackendError,
                                backend.create_backup, self.policy, 'n', 'd')
        self.assertNotIsInstance(exc, backends.InstanceNotFound)
        self.assertIn('endpoint_override', str(exc))


class TestConcurrency(TroveBackendTestCase):

    def test_one_backup_per_instance_from_many_threads(self):
        policies = [make_policy(self.trove.add_instance())
                    for _ in range(40)]
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            created = list(pool.map(self.create, policies))
            self.clock.advance(10)
            polled = list(pool.map(
                lambda pair: self.backend.get_backup(*pair),
                zip(policies, (b.id for b in created))))
        self.assertEqual(40, len({b.id for b in created}))
        self.assertTrue(all(b.status == backends.BackupStatus.BUILDING
                            for b in polled))
        for policy in policies:
            self.assertEqual(1, self.trove.create_count(policy.instance_id))
