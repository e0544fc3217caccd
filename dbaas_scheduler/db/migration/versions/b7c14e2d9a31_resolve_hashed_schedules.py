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
"""Resolve the H fields of hashed cron policies that have none resolved.

Revision ID: b7c14e2d9a31
Revises: 6e8ddc62479a
Create Date: 2026-11-23 18:30:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler import exception
from dbaas_scheduler import schedule

revision = 'b7c14e2d9a31'
down_revision = '6e8ddc62479a'
branch_labels = None
depends_on = None

_BATCH = 1000


def upgrade():
    # Policies stored before resolved_schedule existed were hashed by the
    # engine on every run, per policy.  Resolve them once, with the H rule
    # of this release (documented and stable from now on), so that the
    # engine never parses a schedule per policy.  Policies that already
    # have a resolved schedule keep it, and so keep their run times.
    # A schedule the new rules refuse is left alone: the engine disables
    # it with the reason when it next comes due.
    policy = sa.table('backup_policy', sa.column('id', sa.String),
                      sa.column('schedule_type', sa.String),
                      sa.column('schedule', sa.Text),
                      sa.column('resolved_schedule', sa.Text))
    connection = op.get_bind()
    rows = connection.execute(
        sa.select(policy.c.id, policy.c.schedule).where(
            policy.c.schedule_type == schedule.CRON,
            policy.c.resolved_schedule.is_(None))).all()
    updates = []
    for policy_id, expression in rows:
        try:
            resolved = schedule.resolve_hashed_fields(
                schedule.CRON, expression, policy_id)
        except exception.InvalidSchedule:
            continue
        if resolved is not None:
            updates.append({'b_id': policy_id, 'b_resolved': resolved})
    statement = policy.update().where(
        policy.c.id == sa.bindparam('b_id')).values(
        resolved_schedule=sa.bindparam('b_resolved'))
    for start in range(0, len(updates), _BATCH):
        connection.execute(statement, updates[start:start + _BATCH])
