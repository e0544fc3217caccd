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
"""Database access of the API: filtered lists, a page at a time.

Pages are keyset-paginated on a stable order -- policies by (created_at,
id), executions newest first by (scheduled_at, id) -- so a marker keeps
working while rows are added.
"""

import sqlalchemy as sa

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import exception

Policy = models.BackupPolicy
Execution = models.BackupExecution


def _after_marker(session, model, marker, columns, descending,
                  project_id=None):
    row = session.get(model, marker)
    # Another project's item is no more a marker than an unknown id: its
    # existence and its place in the order are not this caller's to learn.
    if row is None or (project_id is not None
                       and row.project_id != project_id):
        raise exception.Invalid(
            reason='marker %s is not an item of this list.' % marker)
    values = tuple(getattr(row, column.key) for column in columns)
    key = sa.tuple_(*columns)
    literal = sa.tuple_(*[sa.literal(value, column.type)
                          for value, column in zip(values, columns)])
    return key < literal if descending else key > literal


@context_manager.reader
def list_policies(context, project_id=None, instance_id=None, enabled=None,
                  limit=None, marker=None):
    """Policies (of one project), oldest first."""
    query = sa.select(Policy)
    if project_id is not None:
        query = query.where(Policy.project_id == project_id)
    if instance_id is not None:
        query = query.where(Policy.instance_id == instance_id)
    if enabled is not None:
        query = query.where(Policy.enabled == sa.true() if enabled
                            else Policy.enabled == sa.false())
    columns = (Policy.created_at, Policy.id)
    if marker is not None:
        query = query.where(_after_marker(context.session, Policy, marker,
                                          columns, False, project_id))
    query = query.order_by(*columns)
    if limit:
        query = query.limit(limit)
    return list(context.session.scalars(query))


@context_manager.reader
def list_executions(context, project_id=None, policy_id=None,
                    instance_id=None, status=None, since=None, limit=None,
                    marker=None):
    """Executions (of one project), newest slot first."""
    query = sa.select(Execution)
    for column, value in ((Execution.project_id, project_id),
                          (Execution.policy_id, policy_id),
                          (Execution.instance_id, instance_id),
                          (Execution.status, status)):
        if value is not None:
            query = query.where(column == value)
    if since is not None:
        query = query.where(Execution.scheduled_at >= since)
    columns = (Execution.scheduled_at, Execution.id)
    if marker is not None:
        query = query.where(_after_marker(context.session, Execution,
                                          marker, columns, True, project_id))
    query = query.order_by(*[column.desc() for column in columns])
    if limit:
        query = query.limit(limit)
    return list(context.session.scalars(query))
