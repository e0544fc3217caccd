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
"""Database fixtures for functional tests on SQLite, MariaDB and PostgreSQL.

oslo.db's opportunistic fixtures provision a throw-away database per test
process on the servers of this machine (user and password
``openstack_citest``, see ``tools/test-setup.sh``; override the admin URLs
with ``OS_TEST_DBAPI_ADMIN_CONNECTION``).  When a server is unreachable the
tests are skipped on a developer machine, and fail when
``DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS=1`` is set, as CI does: a missing
database must never turn a CI run green.
"""

import os

from oslo_db.sqlalchemy import test_fixtures

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.db import models

REQUIRE_BACKENDS_ENV = 'DBAAS_SCHEDULER_TEST_REQUIRE_BACKENDS'

BACKENDS = ('sqlite', 'mysql', 'postgresql')


def backends_required():
    """True when an unavailable database server must fail the tests."""
    return os.environ.get(REQUIRE_BACKENDS_ENV, '').lower() in (
        '1', 'true', 'yes')


class EmptyDatabase(test_fixtures.OpportunisticDbFixture):
    """A provisioned database with no schema; emptied after each test."""

    def get_enginefacade(self):
        return db_api.context_manager


class MigratedDatabase(test_fixtures.GeneratesSchemaFromMigrations,
                       test_fixtures.DeletesFromSchema,
                       EmptyDatabase):
    """A database at the newest revision; rows are deleted between tests."""

    def generate_schema_migrations(self, engine):
        migration.upgrade('head', engine=engine)

    def delete_from_schema(self, engine):
        with engine.begin() as connection:
            for table in reversed(models.Base.metadata.sorted_tables):
                connection.execute(table.delete())


class DatabaseMixin(test_fixtures.OpportunisticDBTestMixin):
    """Runs a test case on the database named by ``DRIVER``.

    Mix in before the TestCase class.  ``self.engine`` is the provisioned
    engine; :mod:`dbaas_scheduler.db.api` is pointed at it for the test,
    with the isolation level the services use
    (:func:`~dbaas_scheduler.db.api.use_read_committed`).
    """

    DRIVER = 'sqlite'
    FIXTURE = MigratedDatabase
    SKIP_ON_UNAVAILABLE_DB = not backends_required()

    def generate_fixtures(self):
        return self.FIXTURE(test=self, driver=self.DRIVER)

    def setUp(self):
        super().setUp()
        self.engine = db_api.get_engine()
        db_api.use_read_committed(self.engine)
