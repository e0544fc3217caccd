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
"""Executions: the history of every run, as the interfaces read it.

Executions are made by the engine (scheduled runs) and by
:func:`dbaas_scheduler.objects.backup_policy.run_policy` (manual runs),
and changed only by the workers; every interface only reads them, through
these functions.
"""

from dbaas_scheduler.db import api as db_api

# What every interface shows of an execution, in this order.
VISIBLE_FIELDS = (
    'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
    'trigger', 'status', 'status_reason', 'attempts', 'backup_id',
    'deleted_backups', 'created_at', 'dispatched_at', 'started_at',
    'finished_at', 'fault')


def as_dict(execution):
    """An execution's visible fields, datetimes as aware datetimes."""
    return {field: getattr(execution, field) for field in VISIBLE_FIELDS}


def get_execution(context, execution_id):
    """One execution, of any project; raises ExecutionNotFound."""
    return db_api.get_execution(context, execution_id)


def list_executions(context, project_id=None, policy_id=None,
                    instance_id=None, status=None, since=None, limit=None,
                    marker=None):
    """Executions, newest slot first, filtered by what is not None.

    ``project_id`` None lists every project's; ``since`` is the earliest
    ``scheduled_at``; ``marker`` is the ID of the last execution of the
    previous page.
    """
    return db_api.list_executions(
        context, project_id=project_id, policy_id=policy_id,
        instance_id=instance_id, status=status, since=since, limit=limit,
        marker=marker)
