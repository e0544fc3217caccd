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
"""Gabbi tests of the REST API, one YAML story per file in gabbits/.

Every story runs on each database backend, as its own tests: their ids are
``dbaas_scheduler.tests.functional.api.test_api.<backend>.<file>_<request>``
with backend ``sqlite``, ``mysql`` (MariaDB) or ``postgresql``, so that
``stestr run test_api.sqlite`` runs the stories on SQLite alone.  The SQLite
variant needs no server and always runs; it is what tests the handlers on
a machine without MariaDB or PostgreSQL.
"""

import os

from gabbi import driver

from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests.functional.api import fixtures
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

GABBITS = os.path.join(os.path.dirname(__file__), 'gabbits')


def load_tests(loader, tests, pattern):
    """Build one test per request of every YAML file, for every backend."""
    fixtures.PORT = ports.free_port()
    for backend in db_fixtures.BACKENDS:
        tests.addTest(driver.build_tests(
            GABBITS, loader, host='127.0.0.1', port=fixtures.PORT,
            fixture_module=fixtures.fixtures_for(backend),
            test_loader_name='%s.%s' % (__name__, backend)))
    return tests
