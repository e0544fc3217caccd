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
"""The API reference (api-ref/) and the OpenAPI document agree.

Route by route: the same operations, the same statuses, the same path,
query and body parameters (with their types and whether they are
required), and the same response fields and headers.  A response section
of the reference may name only the top-level fields (and refer to another
call for the rest); where it names the fields of an object, it names them
all.  The request and response samples validate against the document's
schemas, and the request samples are the schemas' examples.
"""

import json
import os
import re

import jsonschema
from oslotest import base
import yaml

from dbaas_scheduler.api import openapi
from dbaas_scheduler.api.schemas import responses

API_REF = os.path.join(os.path.dirname(__file__), '..', '..', '..', '..',
                       'api-ref', 'source')
INCLUDES = ('versions.inc', 'backup-policies.inc', 'schedule-preview.inc',
            'executions.inc', 'restores.inc', 'coverage.inc',
            'policy-templates.inc',
            'services.inc')

_METHOD = re.compile(r'\.\. rest_method:: (\S+) (\S+)$')
_ITEM = re.compile(r'   - (.+)$')


def reference_operations():
    """{(method, path): {'statuses', 'request', 'response'}} of api-ref."""
    with open(os.path.join(API_REF, 'parameters.yaml')) as source:
        parameters = yaml.safe_load(source)
    operations = {}
    for name in INCLUDES:
        with open(os.path.join(API_REF, name)) as source:
            lines = source.read().splitlines()
        operation = block = None
        for line in lines:
            match = _METHOD.match(line)
            if match:
                operation = {'statuses': set(), 'request': [],
                             'response': []}
                operations[match.group(1), match.group(2)] = operation
                section, block = 'request', None
                continue
            if operation is None:
                continue
            if line == 'Response':
                section = 'response'
            if line.startswith('.. rest_status_code::'):
                block = 'statuses'
            elif line.startswith('.. rest_parameters::'):
                block = section
            elif line.startswith('.. '):
                block = None
            match = _ITEM.match(line)
            if not match or block is None:
                continue
            if block == 'statuses':
                operation['statuses'].add(int(match.group(1).split(':')[0]))
            else:
                name, key = (part.strip()
                             for part in match.group(1).split(':'))
                spec = parameters[key]
                operation[block].append((name, spec['in'], spec['type'],
                                         spec.get('required', False)))
    return operations


def _resolve(document, schema):
    while '$ref' in schema:
        node = document
        for part in schema['$ref'].lstrip('#/').split('/'):
            node = node[part]
        schema = node
    return schema


def _type(schema):
    kind = schema.get('type', 'string')
    if isinstance(kind, list):
        kind = [k for k in kind if k != 'null'][0]
    return kind


def _fields(document, schema):
    """{name: (type, required)} of an object and of its objects' fields.

    Returns (top, nested): ``nested`` maps each top-level field to the
    fields of its object (or of its array's objects).
    """
    schema = _resolve(document, schema or {})
    top, nested = {}, {}
    for name, field in schema.get('properties', {}).items():
        field = _resolve(document, field)
        top[name] = (_type(field), name in schema.get('required', ()))
        inner = field.get('items', field) if _type(field) == 'array' \
            else field
        inner = _resolve(document, inner)
        if inner.get('properties'):
            nested[name] = {
                sub: (_type(_resolve(document, value)),
                      sub in inner.get('required', ()))
                for sub, value in inner['properties'].items()}
    return top, nested


class TestReferenceAgreesWithTheDocument(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.document = openapi.document()
        self.reference = reference_operations()

    def _operation(self, method, path):
        return self.document['paths'][path][method.lower()]

    def test_the_same_operations(self):
        self.assertEqual(set(openapi.OPERATIONS), set(self.reference))

    def test_the_same_statuses(self):
        for key, documented in self.reference.items():
            statuses = {int(code) for code in
                        self._operation(*key)['responses']}
            self.assertEqual(statuses, documented['statuses'], key)

    def test_the_same_request_parameters(self):
        for key, documented in self.reference.items():
            operation = self._operation(*key)
            item = self.document['paths'][key[1]]
            expected = {(p['name'], p['in'], _type(p['schema']),
                         p['required'])
                        for p in item.get('parameters', []) +
                        operation['parameters']}
            if operation.get('security') != []:
                expected.add(('X-Auth-Token', 'header', 'string', True))
            body = operation.get('requestBody', {}).get(
                'content', {}).get('application/json', {}).get('schema')
            top, nested = _fields(self.document, body)
            for name, (kind, required) in top.items():
                expected.add((name, 'body', kind, required))
            for fields in nested.values():
                expected.update((name, 'body', kind, required)
                                for name, (kind, required) in fields.items())
            self.assertEqual(expected, set(documented['request']), key)

    def test_the_same_response_fields(self):
        named = set()
        for key, documented in self.reference.items():
            operation = self._operation(*key)
            success = [answer for code, answer
                       in operation['responses'].items()
                       if code.startswith('2')][0]
            schema = success.get('content', {}).get(
                'application/json', {}).get('schema')
            top, nested = _fields(self.document, schema)
            listed = {(name, kind, required) for name, where, kind, required
                      in documented['response'] if where == 'body'}
            expected = {(name, kind, required)
                        for name, (kind, required) in top.items()}
            for name, fields in nested.items():
                inner = {(sub, kind, required)
                         for sub, (kind, required) in fields.items()}
                if inner & (listed - expected):
                    # Named: all of them.
                    expected |= inner
                    named |= {(name, sub) for sub in fields}
            self.assertEqual(expected, listed, key)
            headers = {name for name, where, kind, required
                       in documented['response'] if where == 'header'}
            self.assertEqual(set(success.get('headers', {})), headers, key)
        # Each resource's fields are named by one call at least.
        for resource in ('backup_policy', 'execution', 'services',
                         'versions'):
            self.assertIn(resource, {name for name, _ in named})

    def test_the_samples_validate(self):
        samples = os.path.join(API_REF, 'samples')
        bodies = dict(responses.BODIES, Error=responses.ERRORS,
                      Unauthorized=responses.UNAUTHORIZED)
        schema_of = {
            'versions-list': 'Versions', 'version-show': 'Version',
            'backup-policies-list': 'BackupPolicies',
            'backup-policy-next-runs': 'NextRuns',
            'backup-policy-lifecycle': 'Lifecycle',
            'schedule-preview': 'SchedulePreview',
            'backup-policy-run': 'Execution',
            'execution-show': 'Execution', 'executions-list': 'Executions',
            'services-list': 'Services',
            'error-unauthorized': 'Unauthorized',
        }
        checked = 0
        for name in sorted(os.listdir(samples)):
            with open(os.path.join(samples, name)) as source:
                sample = json.load(source)
            stem = name.rsplit('-', 1)[0]
            if name.endswith('-request.json'):
                schema = openapi.REQUEST_BODIES[{
                    'backup-policy-create': 'BackupPolicyCreate',
                    'backup-policy-update': 'BackupPolicyUpdate',
                    'backup-policy-pause': 'BackupPolicyPause'}[stem]]
                self.assertEqual([sample], schema['examples'], name)
            elif stem in schema_of:
                schema = bodies[schema_of[stem]]
            elif stem.startswith('error-'):
                schema = bodies['Error']
            else:
                schema = bodies['BackupPolicy']
            jsonschema.Draft202012Validator(schema).validate(sample)
            checked += 1
        self.assertGreater(checked, 20)
