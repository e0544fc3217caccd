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
"""Restores: asking for one, and reading them, as every interface does.

A restore is recorded PENDING and cast to the workers
(``WorkerAPI.restore_backup``); a cast that fails leaves it PENDING, and
the engine's sweep casts it again after ``[engine] dispatch_timeout``.
"""

import math

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import restores as db_restores
from dbaas_scheduler import enums
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

# What every interface shows of a restore, in this order.
VISIBLE_FIELDS = (
    'id', 'execution_id', 'policy_id', 'project_id', 'instance_id',
    'backend', 'backup_id', 'params', 'status', 'status_reason', 'attempts',
    'target_id', 'created_at', 'started_at', 'finished_at', 'duration',
    'fault', 'kind')


def as_dict(restore):
    return {field: getattr(restore, field) for field in VISIBLE_FIELDS}


def get_restore(context, restore_id):
    """One restore, of any project; raises RestoreNotFound."""
    return db_restores.get_restore(context, restore_id)


def list_restores(context, project_id=None, execution_id=None,
                  policy_id=None, status=None, limit=None, marker=None):
    """Restores, newest first, filtered by what is not None."""
    return db_restores.list_restores(
        context, project_id=project_id, execution_id=execution_id,
        policy_id=policy_id, status=status, limit=limit, marker=marker)


def create_restore(context, conf, execution, worker_api, params, now=None):
    """Restore the backup of ``execution``; returns the new restore.

    Refused (Conflict) for an execution without a backup or whose policy
    is gone, and (Invalid) for a request the backend cannot do -- a
    target the project may not use, the source without ``allow_source``.
    """
    if (execution.status != enums.ExecutionStatus.SUCCEEDED
            or not execution.backup_id):
        raise exception.Conflict(
            reason='execution %s has no backup to restore (it is %s)'
            % (execution.id, execution.status))
    try:
        policy = db_api.get_policy(context, execution.policy_id)
    except exception.PolicyNotFound:
        raise exception.Conflict(
            reason='the policy of execution %s was deleted: the service no '
                   'longer has the credentials to restore its backup'
            % execution.id)
    params = {key: value for key, value in (params or {}).items()
              if value is not None}
    backend = loader.get_backend(conf, policy.backend)
    backend.check_restore(policy, execution.backup_id, params)
    now = now or timeutils.utcnow(True)
    restore = db_restores.create_restore(context, {
        'execution_id': execution.id, 'policy_id': policy.id,
        'project_id': policy.project_id, 'instance_id': policy.instance_id,
        'backend': policy.backend, 'backup_id': execution.backup_id,
        'params': params, 'status': enums.RestoreStatus.PENDING,
        'attempts': 0, 'created_at': now, 'dispatched_at': now})
    try:
        worker_api.restore_backup(context, restore.id)
    except Exception as exc:
        LOG.warning('Restore %s of execution %s was recorded but could not '
                    'be cast (%s: %s); the engine\'s sweep casts it again.',
                    restore.id, execution.id, type(exc).__name__, exc)
    return db_restores.get_restore(context, restore.id)


def percentile(values, fraction):
    """The nearest-rank percentile of ``values`` (not empty)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[rank - 1]


def restore_times(context, policy_id):
    """The policy's measured restore times, in seconds.

    ``{'last': ..., 'p95': ..., 'count': ...}`` over its last 100
    successful restores; None values when it has none.
    """
    durations = db_restores.restore_durations(context, policy_id)
    if not durations:
        return {'last': None, 'p95': None, 'count': 0}
    return {'last': round(durations[0], 3),
            'p95': round(percentile(durations, 0.95), 3),
            'count': len(durations)}
