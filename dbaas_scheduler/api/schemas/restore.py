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
"""JSON schemas of restores: the request body and the list's query."""

from dbaas_scheduler.api.schemas import common
from dbaas_scheduler.db import models
from dbaas_scheduler import enums

_COLUMNS = models.BackupRestore.__table__.c
_NAME = {'type': 'string', 'minLength': 1, 'maxLength': 255,
         'pattern': common.ONE_LINE}

# POST /v1/executions/{id}/restore; every field optional, the body too.
CREATE = {
    'type': ['object', 'null'],
    'properties': {
        # trove: the new instance's name; local: unused.
        'name': _NAME,
        # local: a restore target's name, or the source instance with
        # allow_source.
        'target': _NAME,
        'allow_source': {'type': 'boolean'},
        'replace': {'type': 'boolean'},
        # trove: the new instance's flavor and volume size (GB).
        'flavor_id': _NAME,
        'volume_size': {'type': 'integer', 'minimum': 1,
                        'maximum': 65536},
    },
    'additionalProperties': False,
}

LIST_QUERY = {
    'execution_id': common.identifier(_COLUMNS.execution_id),
    'policy_id': common.identifier(_COLUMNS.policy_id),
    'status': {'type': 'string', 'enum': list(enums.RestoreStatus.ALL)},
    'all_projects': common.BOOLEAN,
    'limit': common.LIMIT,
    'marker': common.identifier(_COLUMNS.id),
}
