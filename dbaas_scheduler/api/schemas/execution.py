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
"""JSON schemas of /v1/executions: its query parameters."""

from dbaas_scheduler.api.schemas import common
from dbaas_scheduler.db import models
from dbaas_scheduler import enums

_COLUMNS = models.BackupExecution.__table__.c

LIST_QUERY = {
    'policy_id': common.identifier(_COLUMNS.policy_id),
    'instance_id': common.identifier(_COLUMNS.instance_id),
    'status': {'type': 'string', 'enum': list(enums.ExecutionStatus.ALL)},
    'since': common.TIME,
    'held': common.since(common.BOOLEAN, common.RETENTION_VERSION),
    'all_projects': common.BOOLEAN,
    'limit': common.LIMIT,
    'marker': common.identifier(_COLUMNS.id),
}

EMPTY = {'type': ['object', 'null'], 'additionalProperties': False}
