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
"""JSON schemas of the API's answers, for its OpenAPI document.

The handlers do not validate their answers against these; the OpenAPI
document shows them, schemathesis checks every answer of a live API
against them, and the unit tests check the handlers' fields against them.
Every object is closed (``additionalProperties: false``): a field added
to an answer must be added here, and to the API reference.
"""

from dbaas_scheduler import enums
from dbaas_scheduler import schedule


def _nullable(schema):
    schema = dict(schema)
    schema['type'] = [schema['type'], 'null']
    return schema


def _object(properties, required=None):
    return {'type': 'object', 'properties': properties,
            'required': list(properties if required is None else required),
            'additionalProperties': False}


STRING = {'type': 'string'}
INTEGER = {'type': 'integer'}
TIME = {'type': 'string', 'format': 'date-time'}

LINK = {
    'type': 'object',
    'properties': {'rel': STRING, 'href': {'type': 'string',
                                           'format': 'uri'},
                   'type': STRING},
    'required': ['rel', 'href'],
    'additionalProperties': False,
}
LINKS = {'type': 'array', 'items': LINK}

POLICY = _object({
    'id': STRING,
    'name': STRING,
    'description': _nullable(STRING),
    'project_id': STRING,
    'user_id': _nullable(STRING),
    'instance_id': STRING,
    'backend': STRING,
    'backup_params': {'type': ['object', 'null']},
    'schedule_type': {'type': 'string',
                      'enum': list(schedule.SCHEDULE_TYPES)},
    'schedule': STRING,
    'timezone': STRING,
    'start_at': _nullable(TIME),
    'end_at': _nullable(TIME),
    'remaining_runs': _nullable(INTEGER),
    'enabled': {'type': 'boolean'},
    'paused_reason': _nullable(STRING),
    'overlap_policy': {'type': 'string',
                       'enum': list(enums.OverlapPolicy.ALL)},
    'catchup_window': _nullable(INTEGER),
    'keep_last': _nullable(INTEGER),
    'keep_daily': _nullable(INTEGER),
    'keep_weekly': _nullable(INTEGER),
    'keep_monthly': _nullable(INTEGER),
    'max_age_days': _nullable(INTEGER),
    'next_execution_time': _nullable(TIME),
    'last_execution_id': _nullable(STRING),
    'created_at': TIME,
    'updated_at': _nullable(TIME),
    'links': LINKS,
})

DELETED_BACKUP = {
    'type': 'object',
    'properties': {'id': STRING, 'created_at': STRING},
    'required': ['id'],
}

EXECUTION = _object({
    'id': STRING,
    'policy_id': STRING,
    'project_id': STRING,
    'instance_id': STRING,
    'scheduled_at': TIME,
    'trigger': {'type': 'string', 'enum': list(enums.ExecutionTrigger.ALL)},
    'status': {'type': 'string', 'enum': list(enums.ExecutionStatus.ALL)},
    'status_reason': _nullable(STRING),
    'attempts': INTEGER,
    'backup_id': _nullable(STRING),
    'deleted_backups': {'type': 'array', 'items': DELETED_BACKUP},
    'created_at': TIME,
    'dispatched_at': _nullable(TIME),
    'started_at': _nullable(TIME),
    'finished_at': _nullable(TIME),
    'fault': _nullable(STRING),
    'links': LINKS,
})

SERVICE = _object({
    'id': STRING,
    'host': STRING,
    'binary': STRING,
    'topic': _nullable(STRING),
    'pid': _nullable(INTEGER),
    'started_at': TIME,
    'heartbeat_at': TIME,
    'state': {'type': 'string', 'enum': ['up', 'down']},
})

VERSION = _object({
    'id': STRING,
    'status': {'type': 'string', 'enum': ['CURRENT', 'SUPPORTED',
                                          'DEPRECATED']},
    'min_version': STRING,
    'version': STRING,
    'updated': TIME,
    'links': LINKS,
})

# The answer of each operation, by the name the OpenAPI document gives it.
BODIES = {
    'Versions': _object({'versions': {'type': 'array', 'items': VERSION}}),
    'Version': _object({'version': VERSION}),
    'BackupPolicies': _object({
        'backup_policies': {'type': 'array', 'items': POLICY},
        'links': LINKS}),
    'BackupPolicy': _object({'backup_policy': POLICY}),
    'NextRuns': _object({
        'next_runs': {'type': 'array', 'items': TIME},
        'timezone': STRING}),
    'SchedulePreview': _object({
        'next_runs': {'type': 'array', 'items': TIME},
        'timezone': STRING,
        'example': {'type': 'boolean'}}),
    'Executions': _object({
        'executions': {'type': 'array', 'items': EXECUTION},
        'links': LINKS}),
    'Execution': _object({'execution': EXECUTION}),
    'Services': _object({'services': {'type': 'array', 'items': SERVICE}}),
}

# The API-SIG error of every 4xx and 5xx the API itself answers.
ERRORS = _object({'errors': {
    'type': 'array', 'minItems': 1,
    'items': _object({
        'status': {'type': 'integer', 'minimum': 400, 'maximum': 599},
        'code': {'type': 'string', 'pattern': '^dbaas_scheduler\\.[a-z_]+$'},
        'title': STRING,
        'detail': STRING,
        'request_id': STRING,
    }),
}})

# keystonemiddleware's own 401.
UNAUTHORIZED = {
    'type': 'object',
    'properties': {'error': {
        'type': 'object',
        'properties': {'code': INTEGER, 'title': STRING, 'message': STRING},
    }},
}
