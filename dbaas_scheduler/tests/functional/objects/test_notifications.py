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
"""What policy changes really notify, from the domain layer and the API.

Every message is checked against its sample in doc/notification_samples/,
the one the admin guide shows.
"""

import json

import fixtures
import webob

from dbaas_scheduler.api import service as api_service
from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler import policy as api_policy
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.objects import test_backup_policy
from dbaas_scheduler.tests import notification_fixtures

WRAPPER = notification_fixtures.WRAPPER


class _NotificationTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.flags(group='api', default_backend='fake')
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        self.addCleanup(loader.reset)
        self.recorder = self.useFixture(
            notification_fixtures.Recorder(self.conf))
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='user-a')

    def data(self, message):
        return message['payload'][WRAPPER + 'data']

    def test_a_policys_life(self):
        policy = backup_policy_obj.create_policy(
            self.context, self.conf,
            {'instance_id': 'instance-1', 'schedule': '30 2 * * *',
             'timezone': 'Europe/Berlin', 'backup_params': {'a': 1},
             'keep_last': 3})
        policy = backup_policy_obj.update_policy(
            self.context, self.conf, policy, {'schedule': '0 3 * * *'})
        policy = backup_policy_obj.pause_policy(self.context, self.conf,
                                                policy, 'maintenance')
        # Nothing changes: nothing is notified.
        backup_policy_obj.pause_policy(self.context, self.conf, policy)
        policy = backup_policy_obj.resume_policy(self.context, self.conf,
                                                 policy)
        backup_policy_obj.resume_policy(self.context, self.conf, policy)
        execution = backup_policy_obj.run_policy(
            self.context, self.conf, policy,
            test_backup_policy._RecordingWorkerAPI())
        policy = db_api.get_policy(self.context, policy.id)
        backup_policy_obj.delete_policy(self.context, self.conf, policy)

        # Pausing leaves no slot to come (at risk); resuming makes the
        # policy protected again (protection.py): their own events.
        self.assertEqual(
            ['backup_policy.create.end', 'backup_policy.update.end',
             'backup_policy.pause.end', 'backup_policy.protection.at_risk',
             'backup_policy.resume.end', 'backup_policy.protection.ok',
             'backup_policy.run.end', 'backup_policy.delete.end'],
            self.recorder.event_types())
        for message in self.recorder.messages():
            notification_fixtures.assert_matches_sample(self, message)
        create, update, pause, resume, run, delete = (
            self.data(message) for message in self.recorder.messages()
            if '.protection.' not in message['event_type'])
        self.assertEqual(
            (policy.id, 'project-a', 'user-a', '30 2 * * *', {'a': 1}, 3,
             True),
            (create['id'], create['project_id'], create['user_id'],
             create['schedule'], create['backup_params'],
             create['keep_last'], create['enabled']))
        self.assertEqual('0 3 * * *', update['schedule'])
        self.assertEqual((False, 'maintenance', None),
                         (pause['enabled'], pause['paused_reason'],
                          pause['next_execution_time']))
        self.assertEqual((True, None), (resume['enabled'],
                                        resume['paused_reason']))
        self.assertIsNotNone(resume['next_execution_time'])
        self.assertEqual((execution.id, policy.id, 'manual', 'DISPATCHED'),
                         (run['id'], run['policy_id'], run['trigger'],
                          run['status']))
        self.assertEqual((policy.id, execution.id),
                         (delete['id'], delete['last_execution_id']))
        # Times travel as ISO 8601 with their offset.
        self.assertTrue(create['created_at'].endswith('+00:00'),
                        create['created_at'])
        # The request's identity, without its token.
        ctxt = self.recorder.contexts()[0]
        self.assertEqual(('project-a', 'user-a'),
                         (ctxt.project_id, ctxt.user_id))

    def test_deleted_instance_pauses_then_deletes(self):
        for _ in range(2):
            backup_policy_obj.create_policy(
                self.context, self.conf,
                {'instance_id': 'gone', 'schedule': '@daily'})
        self.recorder.clear()
        deleted = backup_policy_obj.delete_policies_for_instance(
            dbaas_context.get_admin_context(), self.conf, 'gone',
            project_id=None)
        # Each pause also leaves the policy at risk (no slot to come).
        self.assertEqual(
            ['backup_policy.pause.end', 'backup_policy.protection.at_risk']
            * 2 + ['backup_policy.delete.end'] * 2,
            self.recorder.event_types())
        messages = [m for m in self.recorder.messages()
                    if '.protection.' not in m['event_type']]
        self.assertEqual(
            sorted(deleted) * 2,
            sorted(self.data(m)['id'] for m in messages[:2])
            + sorted(self.data(m)['id'] for m in messages[2:]))
        self.assertEqual(
            'instance gone was deleted',
            self.data(messages[0])['paused_reason'])

    def test_refused_change_notifies_nothing(self):
        self.assertRaises(exception.InvalidSchedule,
                          backup_policy_obj.create_policy,
                          self.context, self.conf,
                          {'instance_id': 'i', 'schedule': 'not cron'})
        self.assertEqual([], self.recorder.messages())

    def test_a_broken_broker_fails_no_request(self):
        # Through the whole API: the notifier raising on every send is
        # logged, and each request answers as usual.
        class Broken:
            def is_enabled(self):
                return True

            def info(self, *args):
                raise ConnectionError('the broker is on fire')

        notifications._NOTIFIER = Broken()
        log = self.useFixture(fixtures.FakeLogger(
            name='dbaas_scheduler.notifications'))
        self.flags(auth_strategy='noauth', rpc_transport='none')
        api_policy.reset()
        self.addCleanup(api_policy.reset)
        api_policy.get_enforcer(self.conf)
        app = api_service.make_application(self.conf)
        headers = {'X-Project-Id': 'project-a', 'X-User-Id': 'user-a',
                   'X-Roles': 'member,reader',
                   'Content-Type': 'application/json'}

        def call(method, path, body=None):
            request = webob.Request.blank(
                path, method=method, headers=headers,
                body=json.dumps(body).encode() if body is not None else b'')
            return request.get_response(app)

        created = call('POST', '/v1/backup-policies', {'backup_policy': {
            'instance_id': 'instance-1', 'schedule': '@daily'}})
        self.assertEqual(201, created.status_int, created.text)
        policy_id = created.json['backup_policy']['id']
        path = '/v1/backup-policies/%s' % policy_id
        for method, suffix, body, status in (
                ('PATCH', '', {'backup_policy': {'name': 'n'}}, 200),
                ('POST', '/pause', {}, 200),
                ('POST', '/resume', {}, 200),
                ('POST', '/run', {}, 202),
                ('DELETE', '', None, 204)):
            response = call(method, path + suffix, body)
            self.assertEqual(status, response.status_int,
                             '%s %s: %s' % (method, suffix, response.text))
        for event in ('create', 'update', 'pause', 'resume', 'run',
                      'delete'):
            self.assertIn('Could not send the backup_policy.%s.end' % event,
                          log.output)


class TestNotificationsSQLite(_NotificationTests, base.TestCase):
    DRIVER = 'sqlite'


class TestNotificationsPostgreSQL(_NotificationTests, base.TestCase):
    DRIVER = 'postgresql'
