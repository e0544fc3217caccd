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
"""The usage quotas count: a project's policies, a policy's manual runs.

Readers that join the caller's transaction when there is one: the check
of manual runs runs inside the transaction that inserted the run, under
the policy row's lock (see :func:`dbaas_scheduler.objects.quota`).
"""

import sqlalchemy as sa

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import enums

_EXECUTION = models.BackupExecution.__table__
_POLICY = models.BackupPolicy.__table__


@context_manager.reader
def count_policies(context, project_id):
    """How many policies the project has (paused ones too)."""
    return context.session.scalar(
        sa.select(sa.func.count()).select_from(_POLICY)
        .where(_POLICY.c.project_id == project_id))


@context_manager.reader
def manual_run_times(context, policy_id, since, exclude=None):
    """When the policy's manual runs since ``since`` were, oldest first.

    The ``scheduled_at`` of each; ``exclude`` is an execution id left out.
    A manual run is scheduled at the moment it was asked for, so the
    unique key (policy, ``scheduled_at``) serves this read.
    """
    query = (sa.select(_EXECUTION.c.scheduled_at)
             .where(_EXECUTION.c.policy_id == policy_id,
                    _EXECUTION.c.scheduled_at >= since,
                    _EXECUTION.c.trigger == enums.ExecutionTrigger.MANUAL)
             .order_by(_EXECUTION.c.scheduled_at))
    if exclude is not None:
        query = query.where(_EXECUTION.c.id != exclude)
    return list(context.session.scalars(query))
