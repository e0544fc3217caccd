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
"""Database access of retention: what it reasons over about an instance.

Every backup this service made of the instance, for which policy, and the
rules of every policy of the instance (``worker/retention.py``).
"""

import types

import sqlalchemy as sa

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models

_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__


@context_manager.reader
def list_instance_backup_owners(context, project_id, instance_id):
    """``{backup id: policy id}`` of every backup made for the instance.

    Any policy's of the project, a deleted one's too: retention must know
    which backups of the instance this service created, and for whom.
    Another project's policy naming the same instance id is another
    tenant's business: its backups count as not this service's (kept).
    """
    query = sa.select(_EXECUTION.c.backup_id, _EXECUTION.c.policy_id).where(
        _EXECUTION.c.project_id == project_id,
        _EXECUTION.c.instance_id == instance_id,
        _EXECUTION.c.backup_id.is_not(None))
    return {row.backup_id: row.policy_id
            for row in context.session.execute(query)}


@context_manager.reader
def list_instance_policies(context, backend, project_id, instance_id):
    """The policies of an instance, with their retention.

    An instance is ``(backend, project_id, instance_id)``.
    """
    columns = [_POLICY.c.id, _POLICY.c.timezone, _POLICY.c.keep_last,
               _POLICY.c.keep_daily, _POLICY.c.keep_weekly,
               _POLICY.c.keep_monthly, _POLICY.c.max_age_days]
    query = sa.select(*columns).where(_POLICY.c.backend == backend,
                                      _POLICY.c.project_id == project_id,
                                      _POLICY.c.instance_id == instance_id)
    return [types.SimpleNamespace(**row._asdict())
            for row in context.session.execute(query)]
