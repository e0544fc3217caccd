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
"""The request schemas: what they accept fits the columns it is stored in."""

import jsonschema
from oslotest import base

from dbaas_scheduler.api.schemas import backup_policy as policy_schema
from dbaas_scheduler.api.schemas import common
from dbaas_scheduler.api.schemas import execution as execution_schema
from dbaas_scheduler.api import util
from dbaas_scheduler.db import limits
from dbaas_scheduler.db import models
from dbaas_scheduler import exception

POLICY = models.BackupPolicy.__table__.c
EXECUTION = models.BackupExecution.__table__.c


def _types(schema):
    kind = schema.get('type')
    return set(kind) if isinstance(kind, list) else {kind}


class TestBoundsFitTheColumns(base.BaseTestCase):

    def _check(self, name, schema, column):
        types = _types(schema)
        if 'string' in types and 'enum' not in schema:
            self.assertIn('maxLength', schema, name)
            self.assertLessEqual(schema['maxLength'],
                                 limits.max_length(column), name)
        if 'integer' in types:
            low, high = limits.integer_range(column)
            self.assertGreaterEqual(schema['minimum'], low, name)
            self.assertLessEqual(schema['maximum'], high, name)
        if 'object' in types:
            self.assertLessEqual(schema[common.MAX_JSON_LENGTH],
                                 limits.max_json_length(column), name)
        if 'enum' in schema:
            longest = max(len(value) for value in schema['enum'])
            self.assertLessEqual(longest, limits.max_length(column), name)

    def test_policy_fields(self):
        for name, schema in policy_schema.POLICY_PROPERTIES.items():
            if name in ('start_at', 'end_at'):
                # Parsed into a datetime column.
                continue
            self._check(name, schema, POLICY[name])

    def test_pause_reason(self):
        self._check('reason', policy_schema.PAUSE['properties']['reason'],
                    POLICY.paused_reason)

    def test_string_filters(self):
        for query, columns in ((policy_schema.LIST_QUERY, POLICY),
                               (execution_schema.LIST_QUERY, EXECUTION)):
            for name, schema in query.items():
                if schema.get('type') == 'string' and 'format' not in schema:
                    # A marker is the id of an item of the list.
                    column = columns['id' if name == 'marker' else name]
                    self._check(name, schema, column)

    def test_create_takes_the_largest_values(self):
        body = {'backup_policy': {
            'instance_id': 'i' * 255, 'schedule': 's' * 255,
            'name': '\U0001F600' * 255,
            'description': '\U0001F600' * 16383,
            'remaining_runs': 2 ** 31 - 1,
            'max_age_days': policy_schema.MAX_AGE_DAYS,
            'backup_params': {'blob': 'x' * (65535 - 12)}}}
        self.assertEqual([], list(util.Validator(
            policy_schema.CREATE).iter_errors(body)))

    def test_and_refuses_one_more(self):
        validator = util.Validator(policy_schema.CREATE)
        for field, value in (('instance_id', 'i' * 256),
                             ('description', 'd' * 16384),
                             ('remaining_runs', 2 ** 31),
                             ('keep_last', 0),
                             ('max_age_days', policy_schema.MAX_AGE_DAYS + 1),
                             ('backup_params', {'blob': 'x' * (65536 - 12)})):
            body = {'backup_policy': {'instance_id': 'db', 'schedule': 's',
                                      field: value}}
            self.assertEqual(1, len(list(validator.iter_errors(body))),
                             field)

    def test_query_parameters_are_parsed_by_their_schema(self):
        query = execution_schema.LIST_QUERY
        self.assertEqual('FAILED', util.parse_parameter(
            'status', 'FAILED', query['status']))
        self.assertRaises(exception.Invalid, util.parse_parameter,
                          'status', 'failed', query['status'])
        self.assertEqual(7, util.parse_parameter('limit', '7',
                                                 query['limit']))
        self.assertIs(True, util.parse_parameter('all_projects', 'Yes',
                                                 query['all_projects']))
        self.assertEqual(2027, util.parse_parameter(
            'since', '2027-01-31T02:30:00+01:00', query['since']).year)
        for name, value in (('limit', '-1'), ('limit', ' 5'),
                            ('limit', '\u0663'), ('all_projects', 'maybe'),
                            ('marker', 'm' * 37), ('marker', ''),
                            ('instance_id', 'a\x00b')):
            self.assertRaises(exception.Invalid, util.parse_parameter,
                              name, value, query[name])


class TestPolicyName(base.BaseTestCase):

    def valid(self, name):
        try:
            jsonschema.validate({'backup_policy': {
                'name': name, 'instance_id': 'i', 'schedule': '@daily'}},
                policy_schema.CREATE)
        except jsonschema.ValidationError:
            return False
        return True

    def test_names(self):
        for name in ('nightly', 'db 1 - daily', '\u65e5\u6b21', 'a' * 255,
                     ' padded '):
            self.assertTrue(self.valid(name), name)
        for name in ('line\nbreak', 'tab\there', '   ', '', 'nul\x00',
                     'del\x7f', 'a' * 256):
            self.assertFalse(self.valid(name), repr(name))
