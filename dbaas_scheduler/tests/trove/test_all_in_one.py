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
"""The whole service on the real Trove: API, engine, worker, Trove.

``dbaas-scheduler-all`` in a process of its own, reaching Trove as an
operator would configure it (``[service_credentials] auth_type =
admin_token``, ``[trove] endpoint_override``): a policy created through
the REST API fires on its schedule, the engine records and dispatches the
execution, the worker has Trove take the backup, watches it and applies
retention.
"""

import datetime

import fixtures
from oslo_utils import timeutils

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.fixtures import trove_fixtures


class TestAllInOneOnTrove(base.TestCase):

    def setUp(self):
        super().setUp()
        self.trove = trove_fixtures.use_trove(self)
        self.instance_id = self.trove.create_instance()
        tempdir = self.useFixture(fixtures.TempDir()).path
        self.service = self.useFixture(process_fixtures.AllInOneProcess(
            tempdir, {
                'DEFAULT': {'debug': True},
                # noauth's default backend is local: this all-in-one backs
                # up through Trove.
                'api': {'default_backend': 'trove',
                        'enabled_backends': 'trove'},
                'engine': {'scan_interval': 0.5},
                # Retention deletes as it decides, with no grace.
                'worker': {'poll_interval': 1, 'retention_grace': 0},
                'service_credentials': {'auth_type': 'admin_token',
                                        'token': self.trove.project_id},
                'trove': {'endpoint_override': self.trove.endpoint_override},
            }, headers={'X-Project-Id': self.trove.project_id,
                        'X-User-Id': 'someone',
                        'X-Roles': 'member,reader'}))

    def finished_executions(self, policy_id, count):
        executions = self.service.request(
            'GET', '/v1/executions?policy_id=%s' % policy_id)[1]['executions']
        done = [e for e in executions if e['status'] not in (
            'PENDING', 'DISPATCHED', 'RUNNING')]
        return done if len(done) >= count else None

    def test_a_scheduled_backup_on_trove(self):
        # Far enough ahead that a loaded machine's request still comes
        # before it (the API refuses a once schedule in the past).
        at = timeutils.utcnow(True) + datetime.timedelta(seconds=15)
        status, body = self.service.request('POST', '/v1/backup-policies', {
            'backup_policy': {
                'name': 'once', 'instance_id': self.instance_id,
                'schedule_type': 'once',
                'schedule': at.strftime('%Y-%m-%dT%H:%M:%SZ'),
                'keep_last': 1}})
        self.assertEqual(201, status, body)
        policy_id = body['backup_policy']['id']
        [execution] = process_fixtures.wait_until(
            lambda: self.finished_executions(policy_id, 1), 90, 0.5)
        self.assertEqual('SUCCEEDED', execution['status'], execution)
        self.assertEqual('schedule', execution['trigger'])
        backup = self.trove.backup(execution['backup_id'])
        self.assertEqual('COMPLETED', backup['status'])
        self.assertIn(backends.execution_tag(execution['id']),
                      backup['description'])

        # A manual run of it: the second backup, and retention (keep_last
        # 1) deletes the first one at Trove.
        self.trove.wait_instance_idle(self.instance_id)
        status, body = self.service.request(
            'POST', '/v1/backup-policies/%s/run' % policy_id)
        self.assertEqual(202, status, body)
        done = process_fixtures.wait_until(
            lambda: self.finished_executions(policy_id, 2), 90, 0.5)
        second = [e for e in done if e['id'] != execution['id']][0]
        self.assertEqual('SUCCEEDED', second['status'], second)

        # Retention runs once the execution is recorded SUCCEEDED.
        def deleted():
            return self.service.request(
                'GET', '/v1/executions/%s' % second['id'])[1]['execution'][
                'deleted_backups']
        self.assertEqual([execution['backup_id']], [
            d['id'] for d in process_fixtures.wait_until(deleted, 30, 0.5)])
        self.trove.wait(
            lambda: [b['id'] for b in self.trove.backups(self.instance_id)]
            == [second['backup_id']], 30, what='the first backup deleted')
