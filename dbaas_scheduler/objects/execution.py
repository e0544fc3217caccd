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

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import retention as db_retention

LOG = logging.getLogger(__name__)

# What every interface shows of an execution, in this order.
VISIBLE_FIELDS = (
    'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
    'trigger', 'status', 'status_reason', 'attempts', 'backup_id',
    'deleted_backups', 'created_at', 'dispatched_at', 'started_at',
    'finished_at', 'fault', 'held_at', 'held_by', 'backup_state',
    'backup_delete_after', 'start_deadline', 'completion_deadline',
    'completion_window_exceeded', 'verified_at', 'verify_result',
    'verify_reason', 'verify_duration')


def completion_window_exceeded(execution, now=None):
    """Whether its backup ran, or runs, past its completion window.

    Trove cannot cancel a backup: one that outlives its window keeps
    running and being watched, and this says so; an execution that never
    started a backup exceeded nothing.
    """
    deadline = getattr(execution, 'completion_deadline', None)
    if deadline is None or execution.backup_id is None:
        return False
    if execution.finished_at is not None:
        return execution.finished_at > deadline
    return (now or timeutils.utcnow(True)) > deadline


def as_dict(execution, now=None):
    """An execution's visible fields, datetimes as aware datetimes."""
    shown = {field: getattr(execution, field, None)
             for field in VISIBLE_FIELDS}
    shown['completion_window_exceeded'] = completion_window_exceeded(
        execution, now)
    shown['held'] = execution.held_at is not None
    return shown


def get_execution(context, execution_id):
    """One execution, of any project; raises ExecutionNotFound."""
    return db_api.get_execution(context, execution_id)


def list_executions(context, project_id=None, policy_id=None,
                    instance_id=None, status=None, since=None, limit=None,
                    marker=None, held=None):
    """Executions, newest slot first, filtered by what is not None.

    ``project_id`` None lists every project's; ``since`` is the earliest
    ``scheduled_at``; ``marker`` is the ID of the last execution of the
    previous page.
    """
    return db_api.list_executions(
        context, project_id=project_id, policy_id=policy_id,
        instance_id=instance_id, status=status, since=since, limit=limit,
        marker=marker, held=held)


def hold_backup(context, conf, execution):
    """Hold the execution's backup: retention never deletes it.

    Returns the execution as held.  Raises a Conflict (409) when it has no
    backup or the backup is being deleted or is gone.
    """
    held = db_retention.hold_backup(context, execution.id, context.user_id,
                                    timeutils.utcnow(True))
    LOG.info('Backup %s of execution %s held by user %s', held.backup_id,
             held.id, context.user_id)
    return held


def release_backup(context, conf, execution):
    """Release the hold: retention decides about the backup again."""
    released = db_retention.release_backup(context, execution.id)
    LOG.info('Backup %s of execution %s released by user %s',
             released.backup_id, released.id, context.user_id)
    return released
