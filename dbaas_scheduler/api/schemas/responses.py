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

from dbaas_scheduler import coverage
from dbaas_scheduler import enums
from dbaas_scheduler import schedule


def _nullable(schema):
    schema = dict(schema)
    schema['type'] = [schema['type'], 'null']
    return schema


# A field first answered at a microversion: documented, not required.
SINCE = 'x-openstack-since'


def _object(properties, required=None):
    if required is None:
        required = [name for name, schema in properties.items()
                    if SINCE not in schema]
    return {'type': 'object', 'properties': properties,
            'required': list(required),
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
    'start_window': dict(_nullable(INTEGER), **{SINCE: '1.1'}),
    'completion_window': dict(_nullable(INTEGER), **{SINCE: '1.1'}),
    'exclusions': dict(_nullable({'type': 'array', 'items': STRING}),
                       **{SINCE: '1.1'}),
    'min_keep': dict(_nullable(INTEGER), **{SINCE: '1.3'}),
    'verify_every': dict(_nullable(INTEGER), **{SINCE: '1.7'}),
    'verify_check': {'type': ['object', 'null'], SINCE: '1.7'},
    'verify_schedule': dict(_nullable(STRING), **{SINCE: '1.8'}),
    'verify_next_at': dict(_nullable(TIME), **{SINCE: '1.8'}),
    'next_execution_time': _nullable(TIME),
    'last_execution_id': _nullable(STRING),
    'created_at': TIME,
    'updated_at': _nullable(TIME),
    'rpo': _nullable(INTEGER),
    'effective_rpo': _nullable(INTEGER),
    'pause_after_failures': _nullable(INTEGER),
    'consecutive_failures': INTEGER,
    'last_success_at': _nullable(TIME),
    'protected_until': _nullable(TIME),
    'protection': {'type': ['string', 'null'],
                   'enum': list(enums.Protection.ALL) + [None]},
    'protection_changed_at': _nullable(TIME),
    'links': LINKS,
    # Shown by GET /v1/backup-policies/{id} only (1.4): its measured
    # restore times (seconds) over its last 100 successful restores.
    'restore_time': {
        'type': 'object', SINCE: '1.4',
        'properties': {'last': {'type': ['number', 'null']},
                       'p95': {'type': ['number', 'null']},
                       'count': INTEGER},
        'required': ['last', 'p95', 'count'],
        'additionalProperties': False},
}, required=[
    # Since 1.2, absent from older answers.
    field for field in (
        'id', 'name', 'description', 'project_id', 'user_id', 'instance_id',
        'backend', 'backup_params', 'schedule_type', 'schedule', 'timezone',
        'start_at', 'end_at', 'remaining_runs', 'enabled', 'paused_reason',
        'overlap_policy', 'catchup_window', 'keep_last', 'keep_daily',
        'keep_weekly', 'keep_monthly', 'max_age_days', 'next_execution_time',
        'last_execution_id', 'created_at', 'updated_at', 'links')])

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
    'start_deadline': dict(_nullable(TIME), **{SINCE: '1.1'}),
    'completion_deadline': dict(_nullable(TIME), **{SINCE: '1.1'}),
    'completion_window_exceeded': {'type': 'boolean', SINCE: '1.1'},
    'held': {'type': 'boolean', SINCE: '1.3'},
    'held_at': dict(_nullable(TIME), **{SINCE: '1.3'}),
    'held_by': dict(_nullable(STRING), **{SINCE: '1.3'}),
    'backup_state': {'type': ['string', 'null'], SINCE: '1.3',
                     'enum': list(enums.BackupState.ALL) + [None]},
    'backup_delete_after': dict(_nullable(TIME), **{SINCE: '1.3'}),
    'verified_at': dict(_nullable(TIME), **{SINCE: '1.7'}),
    'verify_result': {'type': ['string', 'null'], SINCE: '1.7',
                      'enum': list(enums.VerifyResult.ALL) + [None]},
    'verify_reason': dict(_nullable(STRING), **{SINCE: '1.7'}),
    'verify_duration': {'type': ['number', 'null'], SINCE: '1.7'},
    'links': LINKS,
})

# One slot of a lifecycle preview.
SLOT = _object({
    'scheduled_at': TIME,
    'start_window_ends_at': _nullable(TIME),
    'completion_window_ends_at': _nullable(TIME),
    'excluded': _nullable(STRING),
})
SLOTS = {'type': 'array', 'items': SLOT}

RESTORE = _object({
    'id': STRING,
    'execution_id': STRING,
    'policy_id': STRING,
    'project_id': STRING,
    'instance_id': STRING,
    'backend': STRING,
    'backup_id': STRING,
    'params': {'type': 'object'},
    'status': {'type': 'string', 'enum': list(enums.RestoreStatus.ALL)},
    'status_reason': _nullable(STRING),
    'attempts': INTEGER,
    'target_id': _nullable(STRING),
    'created_at': TIME,
    'started_at': _nullable(TIME),
    'finished_at': _nullable(TIME),
    'duration': {'type': ['number', 'null']},
    'fault': _nullable(STRING),
    'kind': {'type': 'string', 'enum': list(enums.RestoreKind.ALL),
             SINCE: '1.7'},
    'links': LINKS,
})

# One instance of the coverage report (objects/coverage.py).
_COVERAGE_STATE = {'type': 'string', 'enum': list(coverage.PRECEDENCE)}
COVERAGE = _object({
    'instances': {'type': 'array', 'items': _object({
        'backend': STRING,
        'project_id': STRING,
        'instance_id': STRING,
        'name': _nullable(STRING),
        'state': _COVERAGE_STATE,
        'reasons': {'type': 'array', 'items': _COVERAGE_STATE},
        'source': {'type': 'string', 'enum': ['backend', 'policies']},
        'policies': INTEGER,
        'enabled_policies': INTEGER,
        'last_success_at': _nullable(TIME),
        'stale_after': _nullable(INTEGER),
        'daily_runs': {'type': ['number', 'null']},
    })},
    'counts': _object({state: INTEGER for state in coverage.PRECEDENCE}),
    'incomplete': {'type': 'array', 'items': _object({
        'backend': STRING, 'project_id': STRING, 'reason': STRING})},
})

TEMPLATE = _object({
    'id': STRING,
    'name': STRING,
    'description': _nullable(STRING),
    'project_id': STRING,
    'user_id': _nullable(STRING),
    'backend': STRING,
    'backup_params': {'type': ['object', 'null']},
    'schedule_type': STRING,
    'schedule': STRING,
    'timezone': STRING,
    'overlap_policy': STRING,
    'catchup_window': _nullable(INTEGER),
    'keep_last': _nullable(INTEGER),
    'keep_daily': _nullable(INTEGER),
    'keep_weekly': _nullable(INTEGER),
    'keep_monthly': _nullable(INTEGER),
    'max_age_days': _nullable(INTEGER),
    'min_keep': _nullable(INTEGER),
    'rpo': _nullable(INTEGER),
    'pause_after_failures': _nullable(INTEGER),
    'verify_every': dict(_nullable(INTEGER), **{SINCE: '1.8'}),
    'verify_check': {'type': ['object', 'null'], SINCE: '1.8'},
    'verify_schedule': dict(_nullable(STRING), **{SINCE: '1.8'}),
    'start_window': _nullable(INTEGER),
    'completion_window': _nullable(INTEGER),
    'exclusions': {'type': ['array', 'null'], 'items': STRING},
    'created_at': TIME,
    'updated_at': _nullable(TIME),
    'links': LINKS,
}, required=['id', 'name', 'description', 'project_id', 'user_id',
             'backend', 'backup_params', 'schedule_type', 'schedule',
             'timezone', 'overlap_policy', 'catchup_window', 'keep_last',
             'keep_daily', 'keep_weekly', 'keep_monthly', 'max_age_days',
             'created_at', 'updated_at', 'links'])

ENROLMENT = _object({
    'instance_id': STRING,
    'policy_id': _nullable(STRING),
    'action': {'type': 'string', 'enum': ['create', 'enrolled']},
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

# The RPO coverage of a lifecycle preview (objects/protection.py).
RPO_COVERAGE = _object({
    'rpo': _nullable(INTEGER),
    'protection': {'type': ['string', 'null'],
                   'enum': list(enums.Protection.ALL) + [None]},
    'last_success_at': _nullable(TIME),
    'protected_until': _nullable(TIME),
    'slots': {'type': 'array', 'items': _object({
        'scheduled_at': TIME,
        'expected_end': TIME,
        'protected_until_if_succeeds': TIME,
        'breach_if_fails': {'type': ['object', 'null'],
                            'properties': {'from': TIME,
                                           'to': _nullable(TIME)},
                            'required': ['from', 'to'],
                            'additionalProperties': False},
    })},
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
        'example': {'type': 'boolean'},
        'slots': dict(SLOTS, **{SINCE: '1.1'})}),
    'Executions': _object({
        'executions': {'type': 'array', 'items': EXECUTION},
        'links': LINKS}),
    'Execution': _object({'execution': EXECUTION}),
    'Lifecycle': _object({
        'slots': dict(SLOTS, **{SINCE: '1.1'}),
        'rpo_coverage': dict(RPO_COVERAGE, **{SINCE: '1.2'}),
        'retention': {'type': 'array', SINCE: '1.3', 'items': _object({
            'at': TIME,
            'backup_id': STRING,
            'expires': {'type': 'array', 'items': _object({
                'backup_id': STRING, 'delete_after': TIME})},
            'deletes': {'type': 'array', 'items': _object({
                'backup_id': STRING, 'with': _nullable(STRING)})},
            'remaining': INTEGER})}}),
    'Restores': _object({
        'restores': {'type': 'array', 'items': RESTORE},
        'links': LINKS}),
    'Restore': _object({'restore': RESTORE}),
    'Services': _object({'services': {'type': 'array', 'items': SERVICE}}),
    'Coverage': _object({'coverage': COVERAGE}),
    'PolicyTemplates': _object({
        'policy_templates': {'type': 'array', 'items': TEMPLATE},
        'links': LINKS}),
    'PolicyTemplate': _object({'policy_template': TEMPLATE}),
    'TemplateApplied': _object({
        'dry_run': {'type': 'boolean'},
        'enrolments': {'type': 'array', 'items': ENROLMENT}}),
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
