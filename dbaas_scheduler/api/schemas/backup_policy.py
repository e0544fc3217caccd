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
"""JSON schemas of /v1/backup-policies: request bodies, query parameters.

Deep checks (is this cron expression valid, is that time zone known) are
the domain's, with messages that say what to change; the schemas catch
shape errors: unknown fields, wrong types, missing required fields, and
values larger than their columns hold (bounds taken from the models).
"""

import copy

from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import common
from dbaas_scheduler.db import models
from dbaas_scheduler import enums
from dbaas_scheduler import schedule
from dbaas_scheduler import windows

_COLUMNS = models.BackupPolicy.__table__.c

# The retention rule keeps backups younger than this; more is surely a
# mistake (and the worker could not subtract it from today).
MAX_AGE_DAYS = 36525

# A policy's name names its backups too ("<name>-<time>"): one line, no
# control characters, not only blanks.  Every text field that reaches a
# log is one line (common.ONE_LINE).
NAME_PATTERN = '^[^{0}]*[^\\s{0}][^{0}]*$'.format(common.CONTROL)
common.PATTERN_MESSAGES[NAME_PATTERN] = ('must be one line, without control '
                                         'characters, and not only blanks')
_TIME = {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 64}


def _count(name):
    return common.integer(_COLUMNS[name], minimum=1)


POLICY_PROPERTIES = {
    'name': common.string(_COLUMNS.name, pattern=NAME_PATTERN),
    'description': common.string(_COLUMNS.description, min_length=0,
                                 nullable=True, pattern=common.TEXT),
    'instance_id': common.one_line(_COLUMNS.instance_id),
    'backend': common.one_line(_COLUMNS.backend),
    'backup_params': common.json_object(_COLUMNS.backup_params),
    'schedule_type': {'enum': list(schedule.SCHEDULE_TYPES)},
    'schedule': common.one_line(_COLUMNS.schedule),
    'timezone': common.one_line(_COLUMNS.timezone),
    'start_at': _TIME,
    'end_at': _TIME,
    'remaining_runs': _count('remaining_runs'),
    'overlap_policy': {'enum': list(enums.OverlapPolicy.ALL)},
    'catchup_window': common.integer(_COLUMNS.catchup_window, minimum=0),
    'keep_last': _count('keep_last'),
    'keep_daily': _count('keep_daily'),
    'keep_weekly': _count('keep_weekly'),
    'keep_monthly': _count('keep_monthly'),
    'max_age_days': common.integer(_COLUMNS.max_age_days, minimum=0,
                                   maximum=MAX_AGE_DAYS),
    'start_window': common.integer(
        _COLUMNS.start_window, minimum=windows.MIN_WINDOW,
        maximum=windows.MAX_START_WINDOW,
        description='Seconds after its slot a backup may still start; '
                    'a slot not started by then ends EXPIRED. Null: '
                    'derived from the schedule.',
        **{microversion.SINCE: '1.1'}),
    'completion_window': common.integer(
        _COLUMNS.completion_window, minimum=windows.MIN_WINDOW,
        maximum=windows.MAX_COMPLETION_WINDOW,
        description='Seconds after its slot a backup should have '
                    'finished. Null: derived from the schedule.',
        **{microversion.SINCE: '1.1'}),
    'exclusions': {
        'type': ['array', 'null'],
        'maxItems': windows.MAX_EXCLUSIONS,
        'items': {'type': 'string', 'minLength': 1,
                  'maxLength': windows.MAX_EXCLUSION_LENGTH,
                  'pattern': common.ONE_LINE},
        'description': 'Periods in the policy\'s time zone when no '
                       'backup starts: "Fri 18:00-Mon 06:00", "Sat-Sun", '
                       '"Mon-Fri 09:00-17:00", "01:00-03:00", '
                       '"2026-12-24", "2026-12-24..2026-12-26".',
        microversion.SINCE: '1.1'},
    # Seconds; null: derived from the schedule (objects/protection.py).
    'rpo': common.integer(_COLUMNS.rpo, minimum=60,
                          maximum=10 * 366 * 86400,
                          **{microversion.SINCE: '1.2'}),
    'pause_after_failures': common.integer(
        _COLUMNS.pause_after_failures, minimum=1, maximum=1000,
        **{microversion.SINCE: '1.2'}),
    'min_keep': common.since(common.integer(_COLUMNS.min_keep, minimum=0),
                             common.RETENTION_VERSION),
    'verify_every': common.since(common.integer(
        _COLUMNS.verify_every, minimum=1, maximum=1000,
        description='Verify every Nth successful backup: restore it into '
                    'a scratch target, check it, delete the target. '
                    'Null: never (the default).'),
        common.VERIFY_VERSION),
    'verify_check': common.since(common.json_object(
        _COLUMNS.verify_check,
        additionalProperties=False,
        required=['sql'],
        properties={
            'sql': {'type': 'string', 'minLength': 1, 'maxLength': 4000},
            'expected': {'type': ['string', 'number', 'boolean', 'null'],
                         'maxLength': 255}},
        description='A read-only SQL query run on the restored scratch '
                    'database ("local" backend): the first column of its '
                    'first row, as text, must equal "expected".'),
        common.VERIFY_VERSION),
    'verify_schedule': common.since(common.string(
        _COLUMNS.verify_schedule, nullable=True, pattern=common.ONE_LINE,
        description='Verify on a schedule of its own: a cron expression '
                    'in the policy\'s time zone; at each slot the newest '
                    'retained successful backup newer than the last one '
                    'verified is verified (none: the slot passes). '
                    'Excludes verify_every. Null: none (the default).'),
        common.VERIFY_SCHEDULE_VERSION),
}

_CREATE_PROPERTIES = dict(POLICY_PROPERTIES, enabled={'type': 'boolean'})

CREATE = {
    'type': 'object',
    'properties': {
        'backup_policy': {
            'type': 'object',
            'properties': _CREATE_PROPERTIES,
            'required': ['instance_id', 'schedule'],
            'additionalProperties': False,
        },
    },
    'required': ['backup_policy'],
    'additionalProperties': False,
    # The API reference's sample (a unit test keeps them equal).
    'examples': [{'backup_policy': {
        'name': 'orders-nightly',
        'description': 'Nightly backup of the orders database',
        'instance_id': '6e1c4b5a-2f3d-4e8a-9b7c-1d2e3f4a5b6c',
        'schedule': '30 2 * * *',
        'timezone': 'Europe/Berlin',
        'backup_params': {'incremental': False,
                          'swift_container': 'orders-backups'},
        'keep_daily': 7,
        'keep_weekly': 4,
        'keep_monthly': 12,
    }}],
}

UPDATE = copy.deepcopy(CREATE)
UPDATE['properties']['backup_policy'] = {
    'type': 'object',
    'properties': POLICY_PROPERTIES,
    'minProperties': 1,
    'additionalProperties': False,
}
UPDATE['examples'] = [{'backup_policy': {
    'schedule': '30 2 * * 1-5',
    'keep_weekly': None,
    'end_at': '2027-12-31T23:00:00Z',
}}]

PAUSE = {
    'type': ['object', 'null'],
    'properties': {
        'reason': common.one_line(_COLUMNS.paused_reason, maxLength=255),
    },
    'additionalProperties': False,
    'examples': [{'reason': 'database migration this week'}],
}

EMPTY = {'type': ['object', 'null'], 'additionalProperties': False}

LIST_QUERY = {
    'name': common.identifier(_COLUMNS.name),
    'instance_id': common.identifier(_COLUMNS.instance_id),
    'enabled': common.BOOLEAN,
    'protection': {'type': 'string', 'enum': list(enums.Protection.ALL),
                   microversion.SINCE: '1.2'},
    'all_projects': common.BOOLEAN,
    'limit': common.LIMIT,
    'marker': common.identifier(_COLUMNS.id),
}

# GET /v1/schedule-preview: a schedule tried before a policy has it.
PREVIEW_QUERY = {
    'schedule': common.string(
        _COLUMNS.schedule, **{
            'x-required': True,
            'description': 'The schedule to preview (required): a cron '
                           'expression, an interval or a time, as '
                           'schedule_type says.'}),
    'schedule_type': {'type': 'string',
                      'enum': list(schedule.SCHEDULE_TYPES)},
    'timezone': common.string(_COLUMNS.timezone),
    'start_at': common.TIME,
    'end_at': common.TIME,
    'count': {'type': 'integer', 'minimum': 0},
    'start_window': common.since(
        {'type': 'integer', 'minimum': windows.MIN_WINDOW,
         'maximum': windows.MAX_START_WINDOW}, '1.1'),
    'completion_window': common.since(
        {'type': 'integer', 'minimum': windows.MIN_WINDOW,
         'maximum': windows.MAX_COMPLETION_WINDOW}, '1.1'),
    'exclusions': {
        microversion.SINCE: '1.1',
        'type': 'string', 'minLength': 1,
        'maxLength': windows.MAX_EXCLUSIONS * (
            windows.MAX_EXCLUSION_LENGTH + 1),
        'description': 'Exclusion windows, separated by ";" (e.g. '
                       '"Fri 18:00-Mon 06:00;2026-12-24").'},
}

LIFECYCLE_QUERY = {
    'count': {'type': 'integer', 'minimum': 0},
}

DELETE_QUERY = {
    'delete_backups': common.since(common.BOOLEAN,
                                   common.RETENTION_VERSION),
}

NEXT_RUNS_QUERY = {
    'count': {'type': 'integer', 'minimum': 0},
}
