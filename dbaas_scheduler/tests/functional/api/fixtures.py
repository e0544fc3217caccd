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
"""Gabbi fixtures: the REST API over real HTTP on a real PostgreSQL.

Each YAML file gets a database of its own (provisioned with oslo.db on the
PostgreSQL of this machine, see tools/test-setup.sh) and the API served by
cheroot on 127.0.0.1, without authentication: requests name their project
and roles with the X-Project-Id and X-Roles headers.  Without PostgreSQL
the tests are skipped, or fail with DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS=1.
"""

import datetime
import socket
import threading
import unittest

from cheroot import wsgi as cheroot_wsgi
from gabbi import fixture
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_db.sqlalchemy import enginefacade
from oslo_db.sqlalchemy import provision
from oslo_utils import uuidutils

from dbaas_scheduler.api import deploy
from dbaas_scheduler.api import policy
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.tests.functional import db_fixtures

# Chosen when the tests are loaded, once per test process.
PORT = None


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


class APIServer(fixture.GabbiFixture):
    """A fresh database and the API serving it, for one YAML file."""

    def start_fixture(self):
        try:
            self.backend = provision.Backend.backend_for_database_type(
                'postgresql')
        except db_exc.BackendNotAvailable as exc:
            if db_fixtures.backends_required():
                raise
            raise unittest.SkipTest(str(exc))
        self.database = 'api_%s' % uuidutils.generate_uuid(dashed=False)[:16]
        self.backend.create_named_database(self.database)
        url = self.backend.provisioned_database_url(self.database)
        conf = cfg.ConfigOpts()
        dbaas_conf.register_opts(conf)
        conf([], project='dbaas-scheduler', default_config_files=[])
        conf.set_override('connection', url.render_as_string(
            hide_password=False), group='database')
        conf.set_override('auth_strategy', 'noauth')
        conf.set_override('rpc_transport', 'none')
        # The process-wide transaction context points at this database
        # for the duration of the file.
        self.facade = enginefacade.transaction_context()
        self.facade.configure(connection=conf.database.connection)
        self.restore_factory = db_api.context_manager.patch_factory(
            self.facade._factory)
        migration.upgrade('head')
        policy.reset()
        policy.get_enforcer(conf)
        self.server = cheroot_wsgi.Server(('127.0.0.1', PORT),
                                          deploy.deploy(conf), numthreads=4)
        self.server.prepare()
        self.thread = threading.Thread(target=self.server.serve,
                                       daemon=True)
        self.thread.start()

    def stop_fixture(self):
        if getattr(self, 'server', None) is not None:
            self.server.stop()
            self.thread.join()
        if getattr(self, 'facade', None) is not None:
            self.restore_factory()
            self.facade._factory.dispose_pool()
        if getattr(self, 'database', None):
            self.backend.drop_named_database(self.database)
        policy.reset()


class RetentionHistory(fixture.GabbiFixture):
    """A succeeded execution of project-a whose retention deleted backups.

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
            ]})

    def stop_fixture(self):
        pass
