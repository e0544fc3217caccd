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
"""Database access of the queue of Keystone trusts still to delete.

A ``trust_deletion`` row is written when Keystone could not be asked to
delete a policy's trust; engines claim due rows with ``FOR UPDATE SKIP
LOCKED`` (moving ``due_at`` on by a lease, so that a dead engine's claim
comes due again), try again, and forget the row once Keystone confirmed.
"""

import datetime

from oslo_utils import timeutils
import sqlalchemy as sa

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models

_TRUSTS = models.TrustDeletion.__table__

# What is kept of Keystone's answer.
_ERROR_LENGTH = 1000


@context_manager.writer
def record(context, trust_id, project_id, reason, due_at=None):
    """Queue ``trust_id`` for deletion; joins an open transaction.

    A trust already queued stays as it is.
    """
    now = timeutils.utcnow(True)
    exists = context.session.execute(
        sa.select(_TRUSTS.c.trust_id).where(_TRUSTS.c.trust_id == trust_id)
    ).first()
    if exists:
        return
    context.session.execute(sa.insert(_TRUSTS).values(
        trust_id=trust_id, project_id=project_id, created_at=now,
        due_at=due_at or now, attempts=0,
        last_error=(reason or '')[:_ERROR_LENGTH] or None))


@context_manager.writer
def claim_due(context, now, limit, lease_seconds):
    """Take up to ``limit`` trusts due at ``now``.

    Returns ``[(trust_id, attempts, project_id)]``.
    """
    rows = context.session.execute(
        sa.select(_TRUSTS.c.trust_id, _TRUSTS.c.attempts,
                  _TRUSTS.c.project_id)
        .where(_TRUSTS.c.due_at <= now)
        .order_by(_TRUSTS.c.due_at)
        .limit(limit)
        .with_for_update(skip_locked=True)).all()
    if rows:
        context.session.execute(
            sa.update(_TRUSTS)
            .where(_TRUSTS.c.trust_id.in_([row.trust_id for row in rows]))
            .values(due_at=now + datetime.timedelta(seconds=lease_seconds)))
    return [(row.trust_id, row.attempts, row.project_id) for row in rows]


@context_manager.writer
def failed(context, trust_id, due_at, reason):
    """Another attempt failed: try again at ``due_at``."""
    context.session.execute(
        sa.update(_TRUSTS).where(_TRUSTS.c.trust_id == trust_id)
        .values(due_at=due_at, attempts=_TRUSTS.c.attempts + 1,
                last_error=(reason or '')[:_ERROR_LENGTH] or None))


@context_manager.writer
def forget(context, trust_id):
    """Keystone confirmed: the trust is gone."""
    context.session.execute(
        sa.delete(_TRUSTS).where(_TRUSTS.c.trust_id == trust_id))


@context_manager.reader
def list_pending(context):
    """Every trust still to delete, oldest first (tests, tools)."""
    return context.session.execute(
        sa.select(_TRUSTS).order_by(_TRUSTS.c.created_at)).all()
