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
"""The notifications' formats, their samples and their documentation.

What the domain layer and the worker really send is checked against the
same samples in the functional tests (objects/test_notifications.py,
worker/test_worker.py).
"""

import datetime
import pathlib
import types

from oslo_messaging.notify import _impl_test

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests import notification_fixtures

UTC = datetime.timezone.utc
DOC = (notification_fixtures.SAMPLES.parent / 'source' / 'admin'
       / 'notifications.rst')


def _execution(**values):
    row = dict.fromkeys(notifications.BackupExecutionPayload.FIELDS)
    row.update(id='e-1', policy_id='p-1', project_id='project-a',
               instance_id='i-1', trigger='schedule', status='RUNNING',
               attempts=1, scheduled_at=datetime.datetime(
                   2026, 11, 24, 1, 30, tzinfo=UTC))
    row.update(values)
    return types.SimpleNamespace(**row)


class TestSamples(base.TestCase):

    def test_every_event_has_a_sample_and_a_section(self):
        documented = DOC.read_text()
        events = (list(notifications.EVENTS)
                  + list(notifications.LEGACY_EVENTS))
        samples = sorted(path.stem for path in
                         notification_fixtures.SAMPLES.glob('*.json'))
        self.assertEqual(sorted(events), samples)
        for event in events:
            self.assertIn('``%s``' % event, documented)
            self.assertIn('notification_samples/%s.json' % event,
                          documented)

    def test_samples_carry_the_current_schemas(self):
        for event, schema in notifications.EVENTS.items():
            payload = notification_fixtures.sample(event)['payload']
            key = notification_fixtures.WRAPPER
            self.assertEqual(
                (schema.NAME, schema.VERSION, 'dbaas_scheduler'),
                (payload[key + 'name'], payload[key + 'version'],
                 payload[key + 'namespace']), event)
            self.assertEqual(sorted(schema.FIELDS),
                             sorted(payload[key + 'data']), event)

    def test_policy_payload_is_what_the_api_shows(self):
        # A new visible field goes into the payload too, with a new minor
        # version and new samples.
        self.assertEqual(
            sorted(backup_policy_obj.VISIBLE_FIELDS),
            sorted(notifications.BackupPolicyPayload.FIELDS))
        self.assertNotIn('trust_id',
                         notifications.BackupPolicyPayload.FIELDS)


class TestSending(base.TestCase):

    def setUp(self):
        super().setUp()
        self.recorder = self.useFixture(
            notification_fixtures.Recorder(self.conf))
        self.context = dbaas_context.RequestContext(
            project_id='project-a', user_id='user-a', auth_token='secret')

    def finish(self, status, **changes):
        notifications.notify_execution(
            self.conf, self.context, status.lower(),
            notifications.execution_payload(
                _execution(), status=status,
                finished_at=datetime.datetime(2026, 11, 24, 1, 41,
                                              tzinfo=UTC), **changes))

    def test_execution_events_in_both_formats(self):
        self.finish('SUCCEEDED', backup_id='b-1')
        self.finish('FAILED', fault='Trove reports backup b-1 FAILED')
        self.finish('SKIPPED', status_reason='overlap: e-0 still runs')
        self.finish('EXPIRED', status_reason='start window ended at ...')
        self.assertEqual(
            ['dbaas_scheduler.execution.succeeded',
             'backup_execution.succeeded',
             'dbaas_scheduler.execution.failed', 'backup_execution.failed',
             'dbaas_scheduler.execution.skipped',
             'backup_execution.skipped',
             'dbaas_scheduler.execution.expired',
             'backup_execution.expired'], self.recorder.event_types())
        for message in self.recorder.messages():
            notification_fixtures.assert_matches_sample(self, message)

    def test_unversioned_payload_is_the_first_releases(self):
        self.finish('SUCCEEDED', backup_id='b-1')
        [legacy] = self.recorder.messages(
            'dbaas_scheduler.execution.succeeded')
        self.assertEqual('2026-11-24T01:41:00+00:00',
                         legacy['payload']['finished_at'])
        self.assertEqual(('e-1', 'SUCCEEDED', 'b-1'),
                         (legacy['payload']['id'],
                          legacy['payload']['status'],
                          legacy['payload']['backup_id']))
        [versioned] = self.recorder.messages('backup_execution.succeeded')
        self.assertEqual(legacy['payload'], versioned['payload'][
            notification_fixtures.WRAPPER + 'data'])

    def test_format_option(self):
        self.flags(notification_format='versioned', group='notifications')
        self.finish('SUCCEEDED')
        notifications.notify_policy(self.conf, self.context, 'create',
                                    types.SimpleNamespace(id='p-1'))
        self.assertEqual(['backup_execution.succeeded',
                          'backup_policy.create.end'],
                         self.recorder.event_types())
        self.flags(notification_format='unversioned',
                   group='notifications')
        self.finish('FAILED')
        notifications.notify_policy(self.conf, self.context, 'create',
                                    types.SimpleNamespace(id='p-1'))
        self.assertEqual('dbaas_scheduler.execution.failed',
                         self.recorder.event_types()[-1])
        self.assertEqual(3, len(self.recorder.messages()))

    def test_the_token_is_never_sent(self):
        self.finish('SUCCEEDED')
        for ctxt, message, _, _ in _impl_test.NOTIFICATIONS:
            self.assertEqual(('project-a', 'user-a', None),
                             (ctxt.project_id, ctxt.user_id,
                              ctxt.auth_token))
            self.assertNotIn('secret', repr(ctxt.to_dict()))
            self.assertNotIn('secret', repr(message))

    def test_wrong_payload_is_not_sent(self):
        notifications.notify(self.conf, self.context,
                             'backup_policy.create.end',
                             notifications.BackupExecutionPayload())
        notifications.notify(self.conf, self.context, 'no.such.event',
                             notifications.BackupPolicyPayload())
        self.assertEqual([], self.recorder.messages())

    def test_a_broken_notifier_raises_nothing(self):
        class Broken:
            def is_enabled(self):
                return True

            def info(self, *args):
                raise RuntimeError('broker on fire')

        notifications._NOTIFIER = Broken()
        self.finish('SUCCEEDED')
        notifications.notify_policy(self.conf, self.context, 'delete',
                                    types.SimpleNamespace(id='p-1'))
        notifications.notify_run(self.conf, self.context, _execution())

    def test_no_driver_sends_nothing(self):
        notifications.reset()
        self.flags(transport_url='fake:/')
        self.finish('SUCCEEDED')
        self.assertEqual([], self.recorder.messages())


class TestDocumentation(base.TestCase):

    def test_every_sample_is_valid_and_included(self):
        for path in pathlib.Path(notification_fixtures.SAMPLES).iterdir():
            self.assertEqual('.json', path.suffix, path)
            self.assertIn(path.stem,
                          notification_fixtures.sample(path.stem)
                          ['event_type'])
