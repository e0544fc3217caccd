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
"""The OpenAPI document: the routes, schemas and answers of the code."""

import datetime
import io
import os

import jsonschema
from oslotest import base
import webob
import yaml

from dbaas_scheduler.api import handler
from dbaas_scheduler.api.handlers import backup_policy as policy_handler
from dbaas_scheduler.api.handlers import execution as execution_handler
from dbaas_scheduler.api.handlers import root
from dbaas_scheduler.api import openapi
from dbaas_scheduler.api.schemas import backup_policy as policy_schema
from dbaas_scheduler.api.schemas import execution as execution_schema
from dbaas_scheduler.api.schemas import responses
from dbaas_scheduler.db import models

API_REF = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                       'api-ref', 'source')
UTC = datetime.timezone.utc
METHODS = ('get', 'head', 'post', 'patch', 'delete', 'put')


def _resolve(document, reference):
    node = document
    for part in reference.lstrip('#/').split('/'):
        node = node[part]
    return node


def _references(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key == '$ref':
                yield value
            else:
                yield from _references(value)
    elif isinstance(node, list):
        for value in node:
            yield from _references(value)


class TestDocument(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.document = openapi.document()

    def test_every_route_is_documented(self):
        routes = {(method, openapi.ALIASES.get(path, path))
                  for path, targets in handler.ROUTE_DECLARATIONS.items()
                  for method in targets}
        documented = set(openapi.OPERATIONS) - {('GET', '/healthcheck')}
        self.assertEqual(routes, documented)
        for (method, path) in openapi.OPERATIONS:
            self.assertIn(method.lower(), self.document['paths'][path])
            if method == 'GET':
                self.assertIn('head', self.document['paths'][path])

    def test_request_bodies_are_the_schemas_the_handlers_use(self):
        self.assertIs(policy_schema.CREATE,
                      openapi.REQUEST_BODIES['BackupPolicyCreate'])
        self.assertIs(policy_schema.UPDATE,
                      openapi.REQUEST_BODIES['BackupPolicyUpdate'])
        self.assertIs(policy_schema.PAUSE,
                      openapi.REQUEST_BODIES['BackupPolicyPause'])
        self.assertIs(policy_schema.EMPTY, openapi.REQUEST_BODIES['Empty'])
        for name, schema in openapi.REQUEST_BODIES.items():
            self.assertEqual(schema,
                             self.document['components']['schemas'][name])

    def test_query_parameters_are_the_schemas_the_handlers_use(self):
        for (method, path), query in (
                (('GET', '/v1/backup-policies'), policy_schema.LIST_QUERY),
                (('GET', '/v1/backup-policies/{policy_id}/next-runs'),
                 policy_schema.NEXT_RUNS_QUERY),
                (('GET', '/v1/executions'), execution_schema.LIST_QUERY)):
            self.assertIs(query, openapi.OPERATIONS[method, path]['query'])
            parameters = {
                p['name']: dict(p['schema'], **(
                    {'description': p['description']}
                    if 'description' in p else {}))
                for p in self.document['paths'][path]['get']['parameters']}
            self.assertEqual(query, parameters)

    def test_references_resolve_and_operations_are_unique(self):
        for reference in set(_references(self.document)):
            self.assertIsInstance(_resolve(self.document, reference), dict,
                                  reference)
        ids = [operation['operationId']
               for item in self.document['paths'].values()
               for method, operation in item.items() if method in METHODS]
        self.assertEqual(len(ids), len(set(ids)))

    def test_links_name_operations_that_exist(self):
        ids = {operation['operationId']
               for item in self.document['paths'].values()
               for method, operation in item.items() if method in METHODS}
        for item in self.document['paths'].values():
            for method, operation in item.items():
                if method not in METHODS:
                    continue
                for answer in operation['responses'].values():
                    for link in answer.get('links', {}).values():
                        self.assertIn(link['operationId'], ids)

    def test_the_published_copy_is_current(self):
        # tox -e genopenapi writes it.
        with open(os.path.join(API_REF, 'openapi.yaml')) as published:
            self.assertEqual(self.document, yaml.safe_load(published))
        stream = io.StringIO()
        openapi.dump(stream)
        self.assertTrue(stream.getvalue().startswith(openapi.HEADER))

    def test_served_with_the_servers_url(self):
        served = openapi.document('http://api.example/backup/')
        self.assertEqual([{'url': 'http://api.example/backup'}],
                         served['servers'])
        self.assertNotIn('servers', openapi.document())


class TestAnswersMatchTheDocument(base.BaseTestCase):
    """What the handlers write validates against the answers' schemas."""

    def _validate(self, schema, body):
        jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.FormatChecker()).validate(body)

    def _request(self):
        return webob.Request.blank('http://api.example/v1/x')

    def test_a_policy(self):
        now = datetime.datetime(2027, 1, 31, 1, 30, 0, 250000, tzinfo=UTC)
        for values in ({}, {
                'description': 'd', 'user_id': 'u', 'backup_params': {
                    'incremental': True},
                'start_at': now, 'end_at': now, 'remaining_runs': 3,
                'paused_reason': 'p', 'catchup_window': 60, 'keep_last': 1,
                'keep_daily': 1, 'keep_weekly': 1, 'keep_monthly': 1,
                'max_age_days': 0, 'next_execution_time': now,
                'last_execution_id': 'e', 'updated_at': now}):
            policy = models.BackupPolicy(
                id='p-1', name='n', project_id='pr', instance_id='i',
                backend='fake', schedule_type='cron', schedule='@daily',
                timezone='UTC', enabled=True, overlap_policy='skip',
                created_at=now, **values)
            body = {'backup_policy': policy_handler.serialize(
                self._request(), policy)}
            self._validate(responses.BODIES['BackupPolicy'], body)

    def test_an_execution(self):
        now = datetime.datetime(2027, 1, 31, 1, 30, tzinfo=UTC)
        execution = models.BackupExecution(
            id='e-1', policy_id='p-1', project_id='pr', instance_id='i',
            scheduled_at=now, trigger='manual', status='SUCCEEDED',
            attempts=1, backup_id='b', created_at=now, dispatched_at=now,
            started_at=now, finished_at=now,
            deleted_backups=[{'id': 'b-0', 'created_at': now.isoformat()}])
        body = {'execution': execution_handler.serialize(self._request(),
                                                         execution)}
        self._validate(responses.BODIES['Execution'], body)

    def test_the_versions(self):
        request = self._request()
        self._validate(responses.BODIES['Versions'],
                       {'versions': [root._v1(request)]})
        self._validate(responses.BODIES['Version'],
                       {'version': root._v1(request)})
