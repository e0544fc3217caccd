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
"""Gabbi fixtures: the REST API over HTTP on SQLite, MariaDB or PostgreSQL.

Each YAML file runs once per database backend (see test_api.py).  Every
run gets a database of its own, at the newest revision, and the API served
by cheroot on 127.0.0.1 without authentication: requests name their
project and roles with the X-Project-Id and X-Roles headers.

SQLite needs no server: the database is a file in a temporary directory,
so each of cheroot's threads opens a connection of its own, as in
dbaas-scheduler-all, with the service's SQLite tuning.  MariaDB and
PostgreSQL databases are provisioned with oslo.db on the servers of this
machine (see tools/test-setup.sh); without the server the tests are
skipped, or fail with DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS=1.
"""

import datetime
import json
import os
import threading
import types
import unittest

from cheroot import wsgi as cheroot_wsgi
import fixtures
from gabbi import fixture
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import provision
from oslo_policy import opts as policy_opts
from oslo_utils import uuidutils

from dbaas_scheduler.api import service as api_service
from dbaas_scheduler.backends import fake
from dbaas_scheduler.backends import loader
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.policies import backend as backend_rules
from dbaas_scheduler import policy
from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

# Chosen when the tests are loaded, once per test process.
PORT = None


class APIServer(fixture.GabbiFixture):
    """A fresh database and the API serving it, for one YAML file.

    ``DRIVER`` names the database backend as oslo.db does; each variant of
    the YAML files gets a subclass from :func:`fixtures_for`.
    """

    DRIVER = 'sqlite'
    # [api] default_backend, when set: the backend of a policy created
    # without one.
    DEFAULT_BACKEND = None
    # cheroot's worker threads: requests served at once.
    THREADS = 4
    # [quota] options set for the file.
    QUOTAS = {}
    # Every backend enabled and open to project members (the stories of
    # the scheduler itself use the fake backend as members); False: the
    # defaults of [api] enabled_backends and of the backends' rules.
    OPEN_BACKENDS = True
    # [api] enabled_backends when OPEN_BACKENDS is False (None: unset).
    ENABLED_BACKENDS = None
    # [local_backend] instances and instance_projects.
    LOCAL_INSTANCES = {}
    INSTANCE_PROJECTS = {}
    # [oslo_policy] enforce_new_defaults: secure RBAC's defaults only.
    NEW_POLICY_DEFAULTS = False
    # [api] public_endpoint, when set.
    PUBLIC_ENDPOINT = None

    def start_fixture(self):
        try:
            self._start()
        except BaseException:
            # gabbi stops only the fixtures that started: drop what this
            # one created before it failed or skipped.
            self.stop_fixture()
            raise

    def _start(self):
        conf = cfg.ConfigOpts()
        dbaas_conf.register_opts(conf)
        conf([], project='dbaas-scheduler', default_config_files=[])
        conf.set_override('connection', self._create_database(),
                          group='database')
        conf.set_override('auth_strategy', 'noauth')
        conf.set_override('rpc_transport', 'none')
        self.conf = conf
        for name, value in self.QUOTAS.items():
            conf.set_override(name, value, group='quota')
        if self.DEFAULT_BACKEND:
            conf.set_override('default_backend', self.DEFAULT_BACKEND,
                              group='api')
        self._backend_access(conf)
        # Backends are made once per process, with the conf of the first
        # caller: this file's options must reach them.
        loader.reset()
        # The process-wide transaction context points at this database
        # for the duration of the file, tuned as db_api.configure() tunes
        # the service's own.
        self.facade = enginefacade.transaction_context()
        self.facade.configure(connection=conf.database.connection)
        self.facade.append_on_engine_create(db_api._tune_sqlite)
        self.facade.append_on_engine_create(db_api.use_read_committed)
        self.facade.append_on_engine_create(db_api._tune_mysql)
        self.restore_factory = db_api.context_manager.patch_factory(
            self.facade._factory)
        migration.upgrade('head')
        # Always: an override of the [api] group lives in its OptGroup,
        # which every ConfigOpts of the process shares.
        conf.set_override('public_endpoint', self.PUBLIC_ENDPOINT,
                          group='api')
        policy.reset()
        policy.set_defaults(conf)
        conf.set_override('enforce_new_defaults', self.NEW_POLICY_DEFAULTS,
                          group='oslo_policy')
        policy.get_enforcer(conf)
        self.server = cheroot_wsgi.Server(
            ('127.0.0.1', PORT), api_service.make_application(conf),
            numthreads=self.THREADS)
        self.server.request_queue_size = api_service.LISTEN_BACKLOG
        self.conf = conf
        self.server.prepare()
        self.thread = threading.Thread(target=self.server.serve,
                                       daemon=True)
        self.thread.start()

    def _backend_access(self, conf):
        conf.set_override('instances', self.LOCAL_INSTANCES,
                          group='local_backend')
        conf.set_override('instance_projects', self.INSTANCE_PROJECTS,
                          group='local_backend')
        if not self.OPEN_BACKENDS:
            if self.ENABLED_BACKENDS is not None:
                conf.set_override('enabled_backends', self.ENABLED_BACKENDS,
                                  group='api')
            return
        self.policy_dir = fixtures.TempDir()
        self.policy_dir.setUp()
        policy_opts.set_defaults(conf)
        for group, options in backend_fixtures.config_sections(
                self.policy_dir.path).items():
            for name, value in options.items():
                conf.set_override(name, value, group=group)

    def _create_database(self):
        """Create an empty database; return its URL."""
        if self.DRIVER == 'sqlite':
            # A file, not oslo.db's in-memory sqlite://: that is one
            # connection shared by all threads (StaticPool), and two of
            # cheroot's threads in a transaction at once would collide on
            # it ("cannot start a transaction within a transaction").
            self.tempdir = fixtures.TempDir()
            self.tempdir.setUp()
            return 'sqlite:///%s' % os.path.join(self.tempdir.path,
                                                 'dbaas_scheduler.sqlite')
        try:
            self.backend = provision.Backend.backend_for_database_type(
                self.DRIVER)
        except db_exc.BackendNotAvailable as exc:
            if db_fixtures.backends_required():
                raise
            raise unittest.SkipTest(str(exc))
        self.database = 'api_%s' % uuidutils.generate_uuid(dashed=False)[:16]
        self.backend.create_named_database(self.database)
        url = self.backend.provisioned_database_url(self.database)
        return url.render_as_string(hide_password=False)

    def stop_fixture(self):
        if getattr(self, 'thread', None) is not None:
            self.server.stop()
            self.thread.join()
        if getattr(self, 'conf', None) is not None:
            # Every ConfigOpts of the process shares the [quota] group's
            # options, and with them their overrides.
            for name in self.QUOTAS:
                self.conf.clear_override(name, group='quota')
        if getattr(self, 'restore_factory', None) is not None:
            self.restore_factory()
            self.facade._factory.dispose_pool()
        if getattr(self, 'database', None):
            self.backend.drop_named_database(self.database)
        if getattr(self, 'tempdir', None) is not None:
            self.tempdir.cleanUp()
        if getattr(self, 'policy_dir', None) is not None:
            self.policy_dir.cleanUp()
        if getattr(self, 'conf', None) is not None:
            self.conf.clear_override('public_endpoint', group='api')
        policy.reset()
        loader.reset()


class BackendAccess(APIServer):
    """The backends' defaults: what a tenant of a real cloud may choose.

    Local instances ``orders`` (project-a's) and ``wiki`` (no project's);
    the fake backend is not offered.
    """

    OPEN_BACKENDS = False
    ENABLED_BACKENDS = ['local', 'trove']
    LOCAL_INSTANCES = {'orders': 'sqlite:////nonexistent/orders.db',
                       'wiki': 'sqlite:////nonexistent/wiki.db'}
    INSTANCE_PROJECTS = {'orders': 'project-a'}


class LocalOwners(BackendAccess):
    """As :class:`BackendAccess`, members allowed the local backend.

    The operator opened ``dbaas_scheduler:backup_policy:backend:local`` to
    members: each project may use the local instances it owns.
    """

    def _backend_access(self, conf):
        super()._backend_access(conf)
        self.policy_dir = fixtures.TempDir()
        self.policy_dir.setUp()
        path = os.path.join(self.policy_dir.path, 'policy.json')
        with open(path, 'w') as stream:
            json.dump({backend_rules.rule_name('local'):
                       'role:admin or (role:member and '
                       'project_id:%(project_id)s)'}, stream)
        policy_opts.set_defaults(conf)
        conf.set_override('policy_file', path, group='oslo_policy')


class RetentionHistory(fixture.GabbiFixture):
    """A succeeded execution of project-a with deleted backups.

    Retention deleted two; a duplicate of its own backup was deleted too.

    Recorded the way the worker records it (``deleted_backups`` times as
    ``isoformat()`` writes them).  List it after :class:`APIServer`.
    """

    def start_fixture(self):
        utc = datetime.timezone.utc
        finished = datetime.datetime(2027, 1, 31, 1, 40, tzinfo=utc)
        db_api.create_execution(dbaas_context.get_admin_context(), {
            'policy_id': uuidutils.generate_uuid(),
            'project_id': 'project-a', 'instance_id': 'orders-db',
            'scheduled_at': datetime.datetime(2027, 1, 31, 1, 30,
                                              tzinfo=utc),
            'status': 'SUCCEEDED', 'backup_id': 'backup-new',
            'finished_at': finished,
            'deleted_backups': [
                {'id': 'backup-old', 'created_at': datetime.datetime(
                    2027, 1, 1, 1, 30, tzinfo=utc).isoformat()},
                {'id': 'backup-older', 'created_at': datetime.datetime(
                    2026, 12, 1, 1, 30, 0, 250000, tzinfo=utc).isoformat()},
                # A second backup of the same run, found and deleted.
                {'id': 'backup-twice', 'created_at': datetime.datetime(
                    2027, 1, 31, 1, 31, tzinfo=utc).isoformat(),
                 'reason': 'duplicate', 'deleted_at': datetime.datetime(
                     2027, 1, 31, 1, 36, 30, tzinfo=utc).isoformat()},
            ]})

    def stop_fixture(self):
        pass


class HeldBackups(fixture.GabbiFixture):
    """Policy ``kept-policy`` of project-a: three backups, a FAILED run.

    List it after :class:`APIServer`.
    """

    def start_fixture(self):
        admin = dbaas_context.get_admin_context()
        utc = datetime.timezone.utc
        policy = db_api.create_policy(admin, {
            'name': 'kept-policy', 'project_id': 'project-a',
            'user_id': 'alice', 'instance_id': 'orders-db',
            'backend': 'fake', 'schedule_type': 'cron',
            'schedule': '0 * * * *', 'timezone': 'UTC',
            'next_execution_time': datetime.datetime(2099, 1, 1,
                                                     tzinfo=utc),
            'keep_last': 1, 'min_keep': 2})
        for day in (1, 2, 3, 4):
            db_api.create_execution(admin, {
                'policy_id': policy.id, 'project_id': 'project-a',
                'instance_id': 'orders-db',
                'scheduled_at': datetime.datetime(2027, 1, day, 1, 30,
                                                  tzinfo=utc),
                'status': 'FAILED' if day == 4 else 'SUCCEEDED',
                'backup_id': None if day == 4 else 'backup-%d' % day})

    def stop_fixture(self):
        pass


class RestoreSources(fixture.GabbiFixture):
    """Executions of project-a to restore, their ids in the environment.

    ``GABBI_RESTORE_OK``: a SUCCEEDED execution of a paused ``fake``
    policy, with a backup; ``GABBI_RESTORE_FAILED``: a FAILED one of the
    same policy; ``GABBI_RESTORE_ORPHAN``: a SUCCEEDED one whose policy
    was deleted.  List it after :class:`APIServer`.
    """

    def start_fixture(self):
        context = dbaas_context.get_admin_context()
        utc = datetime.timezone.utc
        scheduled = datetime.datetime(2027, 1, 31, 1, 30, tzinfo=utc)
        found = db_api.create_policy(context, {
            'name': 'restorable', 'project_id': 'project-a',
            'instance_id': 'orders-db', 'backend': 'fake',
            'schedule_type': 'interval', 'schedule': '3600',
            'enabled': False, 'paused_reason': 'created paused'})
        values = {'policy_id': found.id, 'project_id': 'project-a',
                  'instance_id': 'orders-db'}
        ok = db_api.create_execution(context, dict(
            values, scheduled_at=scheduled, status='SUCCEEDED',
            backup_id='backup-ok', finished_at=scheduled))
        failed = db_api.create_execution(context, dict(
            values, scheduled_at=scheduled + datetime.timedelta(hours=1),
            status='FAILED', finished_at=scheduled))
        orphan = db_api.create_execution(context, dict(
            values, policy_id=uuidutils.generate_uuid(),
            scheduled_at=scheduled, status='SUCCEEDED',
            backup_id='backup-orphan', finished_at=scheduled))
        self.names = {'GABBI_RESTORE_OK': ok.id,
                      'GABBI_RESTORE_FAILED': failed.id,
                      'GABBI_RESTORE_ORPHAN': orphan.id,
                      'GABBI_RESTORE_POLICY': found.id}
        os.environ.update(self.names)

    def stop_fixture(self):
        for name in getattr(self, 'names', {}):
            os.environ.pop(name, None)


class LargeValues(fixture.GabbiFixture):
    """Values too large to write in a YAML file, as environment variables.

    A story names them as ``$ENVIRON['GABBI_...']``.
    """

    VALUES = {
        # A name of 255 characters (the column's size) of 4 bytes each.
        'GABBI_EMOJI_NAME': '\U0001F600' * 255,
        # A description as long as every backend stores, and one more.
        'GABBI_EMOJI_DESCRIPTION': '\U0001F4BE' * 16383,
        'GABBI_EMOJI_DESCRIPTION_TOO_LONG': '\U0001F4BE' * 16384,
        # backup_params {"blob": ...} of 65,535 characters of JSON, and one
        # more.
        'GABBI_BLOB_FITS': 'x' * (65535 - len('{"blob": ""}')),
        'GABBI_BLOB_TOO_LARGE': 'x' * (65536 - len('{"blob": ""}')),
        'GABBI_PROJECT_255': 'p' * 255,
        'GABBI_PROJECT_256': 'p' * 256,
        'GABBI_LARGE_INPUT': 'x' * 100000,
        # As long as a URL the test client sends may be.
        'GABBI_LONG_TEXT': 'x' * 10000,
        'GABBI_DEEP_JSON': '[' * 100000 + ']' * 100000,
        'GABBI_DEEP_PARAMS': (
            '{"backup_policy": {"instance_id": "db", "backend": "fake", '
            '"schedule": "@daily", "backup_params": %s1%s}}'
            % ('{"a": ' * 40, '}' * 40)),
    }

    def start_fixture(self):
        os.environ.update(self.VALUES)

    def stop_fixture(self):
        for name in self.VALUES:
            os.environ.pop(name, None)


class CoverageInstances(fixture.GabbiFixture):
    """The instances the fake backend lists for project-a and project-b.

    The coverage report lists them (the fake backend stands for Trove).
    """

    INSTANCES = {
        'project-a': {'orders-db': 'orders', 'wiki-db': 'wiki',
                      'crm-db': 'crm', 'logs-db': 'logs'},
        'project-b': {'their-db': 'theirs'},
    }

    def start_fixture(self):
        self.saved = fake.FakeBackend.instances
        fake.FakeBackend.instances = self.INSTANCES

    def stop_fixture(self):
        fake.FakeBackend.instances = getattr(self, 'saved', {})


def fixtures_for(driver):
    """The fixtures the YAML files name, serving a database of ``driver``.

    gabbi instantiates fixture classes without arguments, so each backend
    gets an APIServer subclass of its own.  A new fixture in this module
    that YAML files use must be listed here too.
    """
    server = type('APIServer', (APIServer,), {'DRIVER': driver})
    # The quota stories: two policies a project, two manual runs an hour.
    small_quotas = type('SmallQuotas', (APIServer,), {
        'DRIVER': driver, 'QUOTAS': {'policies_per_project': 2,
                                     'manual_runs_per_policy_per_hour': 2}})
    return types.SimpleNamespace(APIServer=server,
                                 SmallQuotas=small_quotas,
                                 BackendAccess=type(
                                     'BackendAccess', (BackendAccess,),
                                     {'DRIVER': driver}),
                                 LocalOwners=type(
                                     'LocalOwners', (LocalOwners,),
                                     {'DRIVER': driver}),
                                 SecureRBAC=type('SecureRBAC', (server,), {
                                     'NEW_POLICY_DEFAULTS': True}),
                                 PublicEndpoint=type(
                                     'PublicEndpoint', (server,), {
                                         'PUBLIC_ENDPOINT':
                                             'https://backup.example.com/bs'}),
                                 LargeValues=LargeValues,
                                 RetentionHistory=RetentionHistory,
                                 HeldBackups=HeldBackups,
                                 RestoreSources=RestoreSources,
                                 CoverageInstances=CoverageInstances)
