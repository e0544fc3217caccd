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
"""JSON schemas of /v1/policy-templates: a policy's fields but its own."""

from dbaas_scheduler.api.schemas import backup_policy
from dbaas_scheduler.api.schemas import common
from dbaas_scheduler.db import models

_COLUMNS = models.PolicyTemplate.__table__.c

# Most instances a request names; more: all_instances.
MAX_INSTANCES = 1000

# What only a policy has: its instance, its name, and the times and
# count of runs that would be anchored when the template is made.
_POLICY_ONLY = ('name', 'description', 'instance_id', 'start_at', 'end_at',
                'remaining_runs')

# Verification: on policies since 1.7 (verify_schedule 1.8), on
# templates since 1.8.
_VERIFY = ('verify_every', 'verify_check', 'verify_schedule')

_PROPERTIES = dict(
    {field: (common.since(schema, common.VERIFY_SCHEDULE_VERSION)
             if field in _VERIFY else schema)
     for field, schema in backup_policy.POLICY_PROPERTIES.items()
     if field not in _POLICY_ONLY},
    name=common.string(_COLUMNS.name, pattern=backup_policy.NAME_PATTERN),
    description=common.string(_COLUMNS.description, min_length=0,
                              nullable=True, pattern=common.TEXT))

CREATE = {
    'type': 'object',
    'properties': {
        'policy_template': {
            'type': 'object',
            'properties': _PROPERTIES,
            'required': ['name', 'schedule'],
            'additionalProperties': False,
        },
    },
    'required': ['policy_template'],
    'additionalProperties': False,
    'examples': [{'policy_template': {
        'name': 'nightly',
        'description': 'Every new database: nightly, a week and a month',
        'schedule': 'H 2 * * *',
        'timezone': 'Europe/Berlin',
        'keep_daily': 7,
        'keep_weekly': 4,
    }}],
}

APPLY = {
    'type': 'object',
    'properties': {
        'all_instances': {'type': 'boolean'},
        'instance_ids': {
            'type': 'array', 'minItems': 1, 'maxItems': MAX_INSTANCES,
            'uniqueItems': True,
            'items': backup_policy.POLICY_PROPERTIES['instance_id']},
        'dry_run': {'type': 'boolean'},
    },
    'additionalProperties': False,
    'examples': [{'all_instances': True, 'dry_run': True}],
}

LIST_QUERY = {
    'all_projects': common.BOOLEAN,
    'limit': common.LIMIT,
    'marker': common.identifier(_COLUMNS.id),
}
