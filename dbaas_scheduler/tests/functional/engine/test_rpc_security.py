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
"""Forged contexts against the engine's RPC API, over the real RabbitMQ.

Issue 23's attacks as written: an empty ``RequestContext()``, a member of
another project, a member setting the owner fields, a reader changing a
policy.  Each is refused and changes nothing; a service may act across
projects.  Run against an RPC server in the test process and against a
real ``dbaas-scheduler-engine`` process.
"""

import os
import threading

import fixtures
from oslo_utils import uuidutils
from testtools import content

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.engine import test_rpc_api
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures

REFUSED = (exception.Forbidden, exception.PolicyNotFound)


def context(project_id=None, user_id=None, roles=None, **kwargs):
    # As Keystone's tokens, with the implied roles (a member is a reader).
    return dbaas_context.RequestContext(project_id=project_id,
                                        user_id=user_id, roles=roles or [],
                                        **kwargs)


class _Attacks(db_fixtures.DatabaseMixin):
    """The attacks; subclasses serve the engine's RPC API somewhere."""

    def setUp(self):
        super().setUp()
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        # The policies here use the fake backend, as members.
        self.useFixture(backend_fixtures.OpenBackends(self.conf))
        self.serve()
        self.api = rpcapi.EngineAPI(self.conf, timeout=30)
        self.admin = dbaas_context.get_admin_context()
        # The victim's policy, made through the front door's domain code.
        self.owner = context('victim', 'vic', ['member', 'reader'])
        self.victim = backup_policy_obj.create_policy(
            self.owner, self.conf, {'instance_id': 'shared',
                                    'backend': 'fake', 'keep_last': 3,
                                    'schedule': '0 3 * * *'}).id
        self.bystander = backup_policy_obj.create_policy(
            context('bystander', 'bob', ['member', 'reader']), self.conf,
            {'instance_id': 'shared', 'backend': 'fake',
             'schedule': '0 4 * * *'}).id
        self.before = self.snapshot()

    def serve(self):
        raise NotImplementedError

    def snapshot(self):
        return sorted(
            (p.id, p.project_id, p.user_id, p.trust_id, p.name, p.keep_last,
             p.enabled, p.schedule)
            for p in db_api.list_policies(self.admin))

    def assertNothingChanged(self):
        self.assertEqual(self.before, self.snapshot())

    def values(self, **extra):
        values = {'instance_id': 'mine', 'backend': 'fake',
                  'schedule': '0 5 * * *'}
        values.update(extra)
        return values

    def test_an_empty_context_gets_nothing(self):
        empty = dbaas_context.RequestContext()
        attempts = [
            lambda: self.api.list_policies(empty),
            lambda: self.api.list_policies(empty, all_projects=True),
            lambda: self.api.list_policies(empty, project_id='victim'),
            lambda: self.api.create_policy(empty, self.values()),
            lambda: self.api.update_policy(empty, self.victim,
                                           {'keep_last': 1}),
            lambda: self.api.delete_policy(empty, self.victim),
            lambda: self.api.delete_policies_for_instance(empty, 'shared'),
            lambda: self.api.delete_policies_for_instance(
                empty, 'shared', all_projects=True),
        ]
        for number, attempt in enumerate(attempts):
            error = self.assertRaises(REFUSED, attempt)
            self.assertTrue(str(error).startswith((
                'Policy dbaas_scheduler:', 'Backup policy %s could not be '
                'found' % self.victim)), '%d: %s' % (number, error))
        self.assertNothingChanged()

    def test_another_projects_member_sees_and_changes_nothing(self):
        mallory = context('attacker', 'mallory', ['member', 'reader'])
        self.assertEqual([], self.api.list_policies(mallory))
        for kwargs in ({'project_id': 'victim'}, {'all_projects': True}):
            error = self.assertRaises(exception.Forbidden,
                                      self.api.list_policies, mallory,
                                      **kwargs)
            self.assertIn('dbaas_scheduler:rpc:list_policies:other_project',
                          str(error))
        error = self.assertRaises(exception.PolicyNotFound,
                                  self.api.update_policy, mallory,
                                  self.victim, {'keep_last': 1})
        self.assertIn(self.victim, str(error))
        self.assertRaises(exception.PolicyNotFound, self.api.delete_policy,
                          mallory, self.victim)
        # In its own project: the victim's policy of that instance stays.
        self.assertEqual([], self.api.delete_policies_for_instance(
            mallory, 'shared'))
        for kwargs in ({'project_id': 'victim'}, {'all_projects': True}):
            self.assertRaises(exception.Forbidden,
                              self.api.delete_policies_for_instance,
                              mallory, 'shared', **kwargs)
        # Creating "in" the victim's project lands in its own, if at all.
        self.assertRaises(exception.Invalid, self.api.create_policy,
                          mallory, self.values(project_id='victim'))
        self.assertNothingChanged()

    def test_a_member_cannot_set_the_owner_fields(self):
        planted = uuidutils.generate_uuid()
        for field, value in (('project_id', 'bystander'),
                             ('user_id', 'someone-else'),
                             ('trust_id', planted),
                             ('id', uuidutils.generate_uuid()),
                             ('resolved_schedule', '0 0 * * *')):
            error = self.assertRaises(exception.Invalid,
                                      self.api.create_policy, self.owner,
                                      self.values(**{field: value}))
            self.assertIn("'%s' was unexpected" % field, str(error))
            error = self.assertRaises(exception.Invalid,
                                      self.api.update_policy, self.owner,
                                      self.victim, {field: value})
            self.assertIn("'%s' was unexpected" % field, str(error))
        # And whatever else the REST schema refuses.
        for bad in ({'name': 'two\nlines'}, {'keep_last': 0},
                    {'max_age_days': 10 ** 9}, {'instance_id': 'i' * 256}):
            self.assertRaises(exception.Invalid, self.api.create_policy,
                              self.owner, self.values(**bad))
            self.assertRaises(exception.Invalid, self.api.update_policy,
                              self.owner, self.victim, bad)
        self.assertNothingChanged()

    def test_a_reader_looks_but_does_not_change(self):
        reader = context('victim', 'carol', ['reader'])
        self.assertEqual([self.victim], [
            p['id'] for p in self.api.list_policies(reader)])
        attempts = [
            lambda: self.api.create_policy(reader, self.values()),
            lambda: self.api.update_policy(reader, self.victim,
                                           {'keep_last': 1}),
            lambda: self.api.delete_policy(reader, self.victim),
            lambda: self.api.delete_policies_for_instance(reader, 'shared'),
        ]
        for attempt in attempts:
            error = self.assertRaises(exception.Forbidden, attempt)
            self.assertIn('does not allow this request', str(error))
        self.assertNothingChanged()

    def test_the_owner_and_a_service_may(self):
        created = self.api.create_policy(self.owner, self.values())
        self.assertEqual(('victim', 'vic'),
                         (created['project_id'], created['user_id']))
        self.assertNotIn('trust_id', created)
        changed = self.api.update_policy(self.owner, self.victim,
                                         {'keep_last': 5})
        self.assertEqual(5, changed['keep_last'])
        service = context('service', 'trove', ['service'])
        self.assertEqual(
            {self.victim, created['id']},
            {p['id'] for p in self.api.list_policies(
                service, project_id='victim')})
        self.assertEqual(
            {self.victim, created['id'], self.bystander},
            {p['id'] for p in self.api.list_policies(service,
                                                     all_projects=True)})
        self.assertEqual([self.victim], self.api.delete_policies_for_instance(
            service, 'shared', project_id='victim'))
        self.assertEqual({created['id'], self.bystander},
                         {row[0] for row in self.snapshot()})


class TestRPCAttacksPostgreSQL(_Attacks, base.TestCase):
    """An engine RPC server in the test process."""

    DRIVER = 'postgresql'

    def serve(self):
        test_rpc_api.serve_engine_rpc(self)


class TestRPCAttacksMySQL(TestRPCAttacksPostgreSQL):
    DRIVER = 'mysql'


class TestRPCAttacksEngineProcess(_Attacks, base.TestCase):
    """A real dbaas-scheduler-engine process, its RPC server on RabbitMQ."""

    DRIVER = 'postgresql'

    def serve(self):
        tempdir = self.useFixture(fixtures.TempDir()).path
        config = os.path.join(tempdir, 'engine.conf')
        process_fixtures.write_config(config, dict(
            backend_fixtures.config_sections(tempdir), **{
                'DEFAULT': {
                    'transport_url': messaging_fixtures.transport_url()},
                'database': {'connection': self.engine.url.render_as_string(
                    hide_password=False)},
                'engine': {'topic': self.conf.engine.topic,
                           'scan_interval': 5},
                'worker': {'topic': self.conf.worker.topic},
            }))
        log = os.path.join(tempdir, 'engine.log')
        self.useFixture(process_fixtures.ServiceProcess('engine', config,
                                                        log))
        self.addOnException(lambda exc_info: self.addDetail(
            'engine.log', content.text_content(open(log).read()[-20000:])))
        probe = rpcapi.EngineAPI(self.conf, timeout=2)
        reader = context('probe', 'p', ['reader'])

        def answers():
            try:
                return probe.list_policies(reader) == []
            except Exception:
                return False

        self.assertTrue(process_fixtures.wait_until(answers, 90, 0.5),
                        'the engine never answered')


class ContextRecorder(messaging_fixtures.RecordingEndpoint):
    """A worker endpoint that keeps the contexts it is sent."""

    def __init__(self):
        super().__init__()
        self.contexts = []
        self.arrived = threading.Event()

    def backup_database_instances(self, context, execution_ids):
        self.contexts.append(context)
        self.arrived.set()


class TestCastsCarryNoToken(db_fixtures.DatabaseMixin, base.TestCase):

    DRIVER = 'sqlite'

    def test_the_users_token_stays_with_the_sender(self):
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        recorder = ContextRecorder()
        self.useFixture(messaging_fixtures.RecordingWorker(self.conf,
                                                           recorder))
        user = context('p', 'u', ['member'], auth_token='users-secret',
                       request_id='req-1')
        rpcapi.WorkerAPI(self.conf).backup_database_instances(user, ['e1'])
        self.assertTrue(recorder.arrived.wait(30))
        [received] = recorder.contexts
        self.assertEqual((None, 'p', 'u', 'req-1'),
                         (received.auth_token, received.project_id,
                          received.user_id, received.request_id))
        self.assertNotIn('users-secret', str(received.to_dict()))
        # The engine's own calls keep it: creating a trust needs it.
        self.assertEqual('users-secret',
                         dbaas_context.as_message(user)['auth_token'])
