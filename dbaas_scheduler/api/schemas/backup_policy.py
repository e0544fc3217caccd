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
"""JSON schemas of /v1/backup-policies request bodies.

Deep checks (is this cron expression valid, is that time zone known) are
the domain's, with messages that say what to change; the schemas catch
shape errors: unknown fields, wrong types, missing required fields.
"""

import copy

_COUNT = {'type': ['integer', 'null'], 'minimum': 1}
_TIME = {'type': ['string', 'null'], 'minLength': 1, 'maxLength': 64}

POLICY_PROPERTIES = {
    'name': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'description': {'type': ['string', 'null'], 'maxLength': 65535},
    'instance_id': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'backend': {'type': 'string', 'minLength': 1, 'maxLength': 64},
    'backup_params': {'type': ['object', 'null']},
    'schedule_type': {'enum': ['cron', 'interval', 'once']},
    'schedule': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    'timezone': {'type': 'string', 'minLength': 1, 'maxLength': 64},
    'start_at': _TIME,
    'end_at': _TIME,
    'remaining_runs': _COUNT,
    'overlap_policy': {'enum': ['skip', 'queue']},
    'catchup_window': {'type': ['integer', 'null'], 'minimum': 0},
    'keep_last': _COUNT,
    'keep_daily': _COUNT,
    'keep_weekly': _COUNT,
    'keep_monthly': _COUNT,
    'max_age_days': {'type': ['integer', 'null'], 'minimum': 0},
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
}

UPDATE = copy.deepcopy(CREATE)
UPDATE['properties']['backup_policy'] = {
    'type': 'object',
    'properties': POLICY_PROPERTIES,
    'minProperties': 1,
    'additionalProperties': False,
}

PAUSE = {
    'type': ['object', 'null'],
    'properties': {
        'reason': {'type': 'string', 'minLength': 1, 'maxLength': 255},
    },
    'additionalProperties': False,
}

EMPTY = {'type': ['object', 'null'], 'additionalProperties': False}
