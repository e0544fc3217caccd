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
"""The OpenAPI 3.1 document of API v1, built from the code that serves it.

Request bodies and query parameters are the very schemas the handlers
validate with (``api/schemas``); answers are ``api/schemas/responses``.
What code cannot say -- each operation's name, summary, statuses and
links -- is :data:`OPERATIONS`; a unit test checks that it names every
route of ``handler.ROUTE_DECLARATIONS``, and that the API reference
(``api-ref/``) documents the same routes, fields and statuses.

The API serves the document at ``/v1/openapi.json``; the API reference
publishes a copy, ``api-ref/source/openapi.yaml``, written by
``tox -e genopenapi`` (``python -m dbaas_scheduler.api.openapi FILE``)
and kept equal to this by a unit test.
"""

import copy
import functools
import json
import sys

import yaml

from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import backup_policy as policy_schema
from dbaas_scheduler.api.schemas import coverage as coverage_schema
from dbaas_scheduler.api.schemas import execution as execution_schema
from dbaas_scheduler.api.schemas import responses
from dbaas_scheduler.api.schemas import restore as restore_schema
from dbaas_scheduler.api.schemas import template as template_schema

OPENAPI_PATH = '/v1/openapi.json'

# Routes served under two paths; the document names the first.
ALIASES = {'': '/', '/v1/': '/v1'}

_POLICY = '/v1/backup-policies/{policy_id}'
_EXECUTION = '/v1/executions/{execution_id}'
_TEMPLATE = '/v1/policy-templates/{template_id}'
# The microversion policy templates appeared in.
_TEMPLATES = '1.6'


def _op(operation_id, summary, tag, success, body=None, query=None,
        request=None, errors=(), public=False, headers=(), links=None,
        since=None):
    """One operation; ``since`` is the microversion it appeared in."""
    return {'operation_id': operation_id, 'summary': summary, 'tag': tag,
            'success': success, 'body': body, 'query': query or {},
            'request': request, 'errors': tuple(errors), 'public': public,
            'headers': tuple(headers), 'links': links or {}, 'since': since}


def _policy_links(*operation_ids, source='$response.body#/backup_policy/id'):
    return {operation_id[0].upper() + operation_id[1:]: {
        'operationId': operation_id, 'parameters': {'policy_id': source}}
        for operation_id in operation_ids}


# Links, for readers and for schemathesis' stateful tests: from creating a
# policy to what can be done with it next.  Only the create links out:
# schemathesis starts its scenarios with the operations that link out,
# and they must start with a policy they created, not with a made-up ID.
_ACTIONS = ('showBackupPolicy', 'updateBackupPolicy', 'deleteBackupPolicy',
            'pauseBackupPolicy', 'resumeBackupPolicy', 'runBackupPolicy',
            'listNextRuns', 'showBackupPolicyHead', 'listNextRunsHead',
            'showLifecycle', 'showLifecycleHead')
_CHANGE = (400, 401, 403, 404, 409, 413)

# (method, path) -> what the document says of the operation.
OPERATIONS = {
    ('GET', '/'): _op(
        'listVersions', 'List the versions of the API', 'versions', 200,
        'Versions', public=True),
    ('GET', '/v1'): _op(
        'showVersion', 'Show version 1', 'versions', 200, 'Version',
        errors=(401,)),
    ('GET', OPENAPI_PATH): _op(
        'showOpenAPI', 'Show this OpenAPI document', 'versions', 200,
        public=True),
    ('GET', '/healthcheck'): _op(
        'healthcheck', 'Check the health of this API node', 'versions',
        200, errors=(503,), public=True),
    ('GET', '/v1/backup-policies'): _op(
        'listBackupPolicies', 'List backup policies', 'backup-policies',
        200, 'BackupPolicies', query=policy_schema.LIST_QUERY,
        errors=(400, 401, 403)),
    ('POST', '/v1/backup-policies'): _op(
        'createBackupPolicy', 'Create a backup policy', 'backup-policies',
        201, 'BackupPolicy', request=('BackupPolicyCreate', True),
        errors=(400, 401, 403, 409, 413, 503), headers=('Location',),
        links=_policy_links(*_ACTIONS)),
    ('GET', _POLICY): _op(
        'showBackupPolicy', 'Show a backup policy', 'backup-policies', 200,
        'BackupPolicy', errors=(401, 403, 404)),
    ('PATCH', _POLICY): _op(
        'updateBackupPolicy', 'Change a backup policy', 'backup-policies',
        200, 'BackupPolicy', request=('BackupPolicyUpdate', True),
        errors=_CHANGE),
    ('DELETE', _POLICY): _op(
        'deleteBackupPolicy', 'Delete a backup policy', 'backup-policies',
        204, query=policy_schema.DELETE_QUERY,
        errors=(400, 401, 403, 404, 409, 503)),
    ('POST', _POLICY + '/pause'): _op(
        'pauseBackupPolicy', 'Pause a backup policy', 'backup-policies',
        200, 'BackupPolicy', request=('BackupPolicyPause', False),
        errors=_CHANGE),
    ('POST', _POLICY + '/resume'): _op(
        'resumeBackupPolicy', 'Resume a backup policy', 'backup-policies',
        200, 'BackupPolicy', request=('Empty', False), errors=_CHANGE),
    ('POST', _POLICY + '/run'): _op(
        'runBackupPolicy', 'Take a backup now', 'backup-policies', 202,
        'Execution', request=('Empty', False),
        errors=_CHANGE + (429, 503)),
    ('GET', _POLICY + '/next-runs'): _op(
        'listNextRuns', 'Preview the next runs of a backup policy',
        'backup-policies', 200, 'NextRuns',
        query=policy_schema.NEXT_RUNS_QUERY, errors=(400, 401, 403, 404)),
    ('GET', _POLICY + '/lifecycle'): _op(
        'showLifecycle', 'Preview the lifecycle of a backup policy',
        'backup-policies', 200, 'Lifecycle',
        query=policy_schema.LIFECYCLE_QUERY,
        errors=(400, 401, 403, 404, 503), since='1.1'),
    ('GET', '/v1/schedule-preview'): _op(
        'previewSchedule', 'Preview the run times of a schedule',
        'schedules', 200, 'SchedulePreview',
        query=policy_schema.PREVIEW_QUERY, errors=(400, 401, 403)),
    ('GET', '/v1/executions'): _op(
        'listExecutions', 'List executions', 'executions', 200,
        'Executions', query=execution_schema.LIST_QUERY,
        errors=(400, 401, 403)),
    ('GET', _EXECUTION): _op(
        'showExecution', 'Show an execution', 'executions', 200,
        'Execution', errors=(401, 403, 404)),
    ('POST', _EXECUTION + '/hold'): _op(
        'holdBackup', 'Hold the backup of an execution', 'executions', 200,
        'Execution', request=('Empty', False),
        errors=(400, 401, 403, 404, 409, 413), since='1.3'),
    ('POST', _EXECUTION + '/release'): _op(
        'releaseBackup', 'Release the hold on the backup of an execution',
        'executions', 200, 'Execution', request=('Empty', False),
        errors=(400, 401, 403, 404, 413), since='1.3'),
    ('POST', _EXECUTION + '/restore'): _op(
        'restoreExecution', 'Restore the backup of an execution',
        'restores', 202, 'Restore', request=('RestoreCreate', False),
        errors=(400, 401, 403, 404, 409, 413, 503), since='1.4'),
    ('GET', '/v1/restores'): _op(
        'listRestores', 'List restores', 'restores', 200, 'Restores',
        query=restore_schema.LIST_QUERY, errors=(400, 401, 403),
        since='1.4'),
    ('GET', '/v1/restores/{restore_id}'): _op(
        'showRestore', 'Show a restore', 'restores', 200, 'Restore',
        errors=(401, 403, 404), since='1.4'),
    ('GET', '/v1/coverage'): _op(
        'showCoverage', 'Show the coverage of the instances of a project',
        'coverage', 200, 'Coverage', query=coverage_schema.REPORT_QUERY,
        errors=(400, 401, 403), since=coverage_schema.SINCE),
    ('GET', '/v1/policy-templates'): _op(
        'listPolicyTemplates', 'List policy templates', 'policy-templates',
        200, 'PolicyTemplates', query=template_schema.LIST_QUERY,
        errors=(400, 401, 403), since=_TEMPLATES),
    ('POST', '/v1/policy-templates'): _op(
        'createPolicyTemplate', 'Create a policy template',
        'policy-templates', 201, 'PolicyTemplate',
        request=('PolicyTemplateCreate', True),
        errors=(400, 401, 403, 409, 413), headers=('Location',),
        since=_TEMPLATES),
    ('GET', _TEMPLATE): _op(
        'showPolicyTemplate', 'Show a policy template', 'policy-templates',
        200, 'PolicyTemplate', errors=(401, 403, 404), since=_TEMPLATES),
    ('DELETE', _TEMPLATE): _op(
        'deletePolicyTemplate', 'Delete a policy template',
        'policy-templates', 204, errors=(401, 403, 404), since=_TEMPLATES),
    ('POST', _TEMPLATE + '/apply'): _op(
        'applyPolicyTemplate',
        'Enrol existing instances with a policy template (or a dry run)',
        'policy-templates', 200, 'TemplateApplied',
        request=('PolicyTemplateApply', True),
        errors=(400, 401, 403, 404, 413, 503), since=_TEMPLATES),
    ('GET', '/v1/services'): _op(
        'listServices', 'List the services of the cluster', 'services',
        200, 'Services', errors=(400, 401, 403)),
}

REQUEST_BODIES = {
    'BackupPolicyCreate': policy_schema.CREATE,
    'BackupPolicyUpdate': policy_schema.UPDATE,
    'BackupPolicyPause': policy_schema.PAUSE,
    'Empty': policy_schema.EMPTY,
    'RestoreCreate': restore_schema.CREATE,
    'PolicyTemplateCreate': template_schema.CREATE,
    'PolicyTemplateApply': template_schema.APPLY,
}

STATUS_TEXT = {
    200: 'The request succeeded.',
    201: 'Created; the Location header holds its URL.',
    202: 'Accepted; carried out asynchronously.',
    204: 'The request succeeded; there is no body.',
    400: 'The request is invalid; the detail says why and what to change.',
    401: 'No valid Keystone token (keystonemiddleware\'s own answer).',
    403: 'A policy rule does not allow the request, or a quota is '
         'reached; the detail names the rule, or the limit and the usage.',
    404: 'No such resource, one of another project, or a route newer '
         'than the microversion asked for.',
    409: 'Another policy of the project has that name (code '
         'dbaas_scheduler.policy_name_exists, with its ID), or another '
         'request changed or deleted the resource meanwhile; read it again '
         'and retry.',
    413: 'The body is larger than the API takes (1 MiB).',
    429: 'Over a rate limit; Retry-After holds the seconds to wait.',
    503: 'A service this one depends on is unavailable; try again later.',
}

_PATH_PARAMETERS = {
    'policy_id': 'The ID of the backup policy.',
    'execution_id': 'The ID of the execution.',
    'restore_id': 'The ID of the restore.',
    'template_id': 'The ID of the policy template.',
}

_INFO = {
    'title': 'Backup Scheduler API',
    # The newest microversion: what this document describes.
    'version': str(microversion.MAX_VERSION),
    'summary': 'Scheduled backups of DBaaS (Trove) database instances.',
    'description': (
        'Version 1 of the dbaas-scheduler REST API (catalog service type '
        '`backup-scheduler`). The API reference holds the full text of '
        'each call; this document is its machine-readable contract.\n\n'
        'Every path also answers `OPTIONS` with 204 and the methods it '
        'takes in `Allow`, without looking up the resource it names. '
        'Every answer carries `X-OpenStack-Request-Id`. With '
        '`auth_strategy = noauth` the caller is named by the '
        '`X-Project-Id`, `X-User-Id` and `X-Roles` headers instead of a '
        'token; an identity header longer than its column (255 '
        'characters) answers 400. Any call may answer 503 while the '
        'database is unreachable.\n\n'
        'Microversions: a request asks for a version of the API with '
        '`OpenStack-API-Version: backup-scheduler X.Y` (or `latest`); '
        'without it, it gets 1.0. The version document at `/` gives the '
        'oldest (`min_version`) and newest (`version`) served, and every '
        'answer of the API says the version that served it in the same '
        'header, with `Vary: OpenStack-API-Version`. A version not served '
        'answers 406, a header that is not of that form 400. This '
        'document describes the newest version; a request field, query '
        'parameter or operation marked `x-openstack-since` appeared in '
        'that version.'),
    'license': {'name': 'Apache 2.0', 'identifier': 'Apache-2.0'},
}


def _schema_ref(name):
    return {'$ref': '#/components/schemas/%s' % name}


def _json(schema):
    return {'application/json': {'schema': schema}}


def _error(status):
    if status == 401:
        return {'description': STATUS_TEXT[401],
                'headers': {'WWW-Authenticate': {'schema': {
                    'type': 'string'}}},
                'content': _json(_schema_ref('Unauthorized'))}
    return {'$ref': '#/components/responses/Error%d' % status}


def _success(path, operation, head=False):
    answer = {'description': STATUS_TEXT[operation['success']],
              'headers': {'X-OpenStack-Request-Id': {
                  '$ref': '#/components/headers/RequestId'}}}
    for name in operation['headers']:
        answer['headers'][name] = {'required': True,
                                   'schema': {'type': 'string'}}
    if path == '/healthcheck':
        # oslo.middleware answers HEAD with 204, GET in the type asked for.
        if head:
            return '204', dict(answer, description=STATUS_TEXT[204])
        answer['content'] = {
            'text/plain': {'schema': {'type': 'string'}},
            'text/html': {'schema': {'type': 'string'}},
            'application/json': {'schema': {'type': 'object'}}}
    elif path == OPENAPI_PATH and not head:
        answer['content'] = _json({'type': 'object'})
    elif operation['body'] and not head:
        answer['content'] = _json(_schema_ref(operation['body']))
    if operation['links'] and not head:
        answer['links'] = copy.deepcopy(operation['links'])
    return str(operation['success']), answer


def _path_parameters(path):
    return [{'name': name, 'in': 'path', 'required': True,
             'description': text, 'schema': {'type': 'string'}}
            for name, text in _PATH_PARAMETERS.items()
            if '{%s}' % name in path]


def _parameters(operation):
    parameters = []
    for name, schema in operation['query'].items():
        schema = copy.deepcopy(schema)
        parameter = {'name': name, 'in': 'query',
                     'required': schema.pop('x-required', False),
                     'schema': schema}
        if 'description' in schema:
            parameter['description'] = schema.pop('description')
        parameters.append(parameter)
    return parameters


def _operation(method, path, operation, head=False):
    status, success = _success(path, operation, head)
    errors = operation['errors']
    if path == '/healthcheck':
        errors = {503: {'description': 'This node is disabled or '
                                       'unhealthy.'}}
    else:
        if operation['since']:
            # Asked for in an older microversion, the route is not there.
            errors = tuple(errors) + (404,)
        errors = {status_code: _error(status_code)
                  for status_code in errors}
    result = {
        'operationId': operation['operation_id'] + ('Head' if head else ''),
        'summary': operation['summary'] + (' (headers only)' if head
                                           else ''),
        'tags': [operation['tag']],
        'parameters': _parameters(operation),
        'responses': dict([(status, success)] + [
            (str(code), answer) for code, answer in sorted(errors.items())]),
    }
    if operation['since']:
        result[microversion.SINCE] = operation['since']
    if operation['public']:
        result['security'] = []
    if operation['request']:
        name, required = operation['request']
        result['requestBody'] = {'required': required,
                                 'content': _json(_schema_ref(name))}
    return result


def _components():
    schemas = {name: copy.deepcopy(schema)
               for name, schema in REQUEST_BODIES.items()}
    schemas.update((name, copy.deepcopy(schema))
                   for name, schema in responses.BODIES.items())
    schemas['Error'] = copy.deepcopy(responses.ERRORS)
    schemas['Unauthorized'] = copy.deepcopy(responses.UNAUTHORIZED)
    errors = {'Error%d' % status: {
        'description': STATUS_TEXT[status],
        'headers': {'X-OpenStack-Request-Id': {
            '$ref': '#/components/headers/RequestId'}},
        'content': _json(_schema_ref('Error'))}
        for status in (400, 403, 404, 409, 413, 429, 503)}
    errors['Error429']['headers']['Retry-After'] = {
        'description': 'Whole seconds until the request is allowed again.',
        'required': True, 'schema': {'type': 'integer', 'minimum': 1}}
    return {
        'schemas': schemas,
        'responses': errors,
        'headers': {'RequestId': {
            'description': 'The ID of this request (req- and a UUID).',
            'required': True,
            'schema': {'type': 'string', 'pattern': '^req-'}}},
        'securitySchemes': {'keystone': {
            'type': 'apiKey', 'in': 'header', 'name': 'X-Auth-Token',
            'description': 'A Keystone token scoped to the project the '
                           'request acts in.'}},
    }


def document(server_url=None):
    """The OpenAPI document, as a dict; ``server_url`` is the API's root."""
    result = dict(_document())
    if server_url is not None:
        result['servers'] = [{'url': server_url.rstrip('/') or '/'}]
    return result


@functools.lru_cache(maxsize=1)
def _document():
    paths = {}
    for (method, path), operation in OPERATIONS.items():
        entry = paths.setdefault(path, {})
        entry[method.lower()] = _operation(method, path, operation)
        if method == 'GET':
            entry['head'] = _operation(method, path, operation, head=True)
    for path, entry in paths.items():
        if _path_parameters(path):
            entry['parameters'] = _path_parameters(path)
    result = {
        'openapi': '3.1.0',
        'info': copy.deepcopy(_INFO),
        'tags': [{'name': name} for name in (
            'versions', 'backup-policies', 'schedules', 'executions',
            'restores', 'coverage', 'policy-templates', 'services')],
        'security': [{'keystone': []}],
        'paths': paths,
        'components': _components(),
    }
    # Plain JSON all through: no object shared with the schemas in code.
    return json.loads(json.dumps(result))


HEADER = ('# The OpenAPI document of the dbaas-scheduler REST API v1, '
          'written by\n# "tox -e genopenapi" from '
          'dbaas_scheduler/api/openapi.py: do not edit.\n')


def dump(stream):
    """Write the document as YAML, as api-ref/source/openapi.yaml holds it."""
    stream.write(HEADER)
    yaml.safe_dump(document(), stream, sort_keys=False,
                   default_flow_style=False, allow_unicode=True, width=79)


def main(argv=None):
    """Write the document to the file named, or to standard output."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        with open(argv[0], 'w', encoding='utf-8') as stream:
            dump(stream)
    else:
        dump(sys.stdout)


if __name__ == '__main__':
    main()
