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
"""Gabbi tests of the REST API: one YAML file per story, in gabbits/."""

import os

from gabbi import driver

from dbaas_scheduler.tests.functional.api import fixtures

GABBITS = os.path.join(os.path.dirname(__file__), 'gabbits')


def load_tests(loader, tests, pattern):
    """Build one test per request of every YAML file in gabbits/."""
    fixtures.PORT = fixtures.free_port()
    return driver.build_tests(GABBITS, loader, host='127.0.0.1',
                              port=fixtures.PORT,
                              fixture_module=fixtures,
                              test_loader_name=__name__)
