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
"""Database errors a request could still cause are 4xx, on every backend.

The API's checks keep these values out; this is the net behind them:
each backend's real refusal of a value, handed to the fault wrapper, is
a 400 with a message, never a 500.
"""

import json

from oslo_utils import uuidutils

from dbaas_scheduler.api import fault
from dbaas_scheduler import context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures


def _values(**overrides):
    values = {'name': 'nightly', 'project_id': 'project-a',
              'instance_id': uuidutils.generate_uuid(),
              'schedule_type': 'cron', 'schedule': '@daily',
              'timezone': 'UTC', 'enabled': False}
    values.update(overrides)
    return values


class _DatabaseErrors(db_fixtures.DatabaseMixin):

    # What this backend refuses (SQLite enforces neither lengths nor NUL).
    REFUSES = ('too long', 'out of range', 'NUL')

    def setUp(self):
        super().setUp()
        self.context = context.get_admin_context()

    def _answer(self, **values):
        try:
            db_api.create_policy(self.context, _values(**values))
        except Exception as exc:
            response = fault.FaultWrapper.response_for(exc, 'req-1')
            return response.status_int, json.loads(response.text)
        self.fail('the database took %s' % values)

    def test_refused_values_are_400(self):
        cases = {
            'too long': {'project_id': 'p' * 256},
            'out of range': {'remaining_runs': 2 ** 31},
            'NUL': {'name': 'a\x00b'},
        }
        if self.DRIVER == 'sqlite':
            cases['out of range'] = {'remaining_runs': 2 ** 64}
        for case in self.REFUSES:
            status, body = self._answer(**cases[case])
            self.assertEqual(400, status, (case, body))
            self.assertEqual('dbaas_scheduler.invalid',
                             body['errors'][0]['code'], case)
            self.assertIn('does not fit in the database',
                          body['errors'][0]['detail'])

    def test_a_duplicate_is_409(self):
        policy = db_api.create_policy(self.context, _values())
        # Another name: a name in use is refused before the insert.
        status, body = self._answer(id=policy.id, name='another-name')
        self.assertEqual(409, status, body)
        self.assertEqual('dbaas_scheduler.conflict',
                         body['errors'][0]['code'])


class TestDatabaseErrorsSQLite(_DatabaseErrors, base.TestCase):
    DRIVER = 'sqlite'
    REFUSES = ('out of range',)


class TestDatabaseErrorsMySQL(_DatabaseErrors, base.TestCase):
    DRIVER = 'mysql'
    # MariaDB stores a NUL.
    REFUSES = ('too long', 'out of range')


class TestDatabaseErrorsPostgreSQL(_DatabaseErrors, base.TestCase):
    DRIVER = 'postgresql'
