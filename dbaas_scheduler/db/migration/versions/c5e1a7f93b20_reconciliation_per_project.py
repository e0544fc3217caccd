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
"""Key the reconciliation queue by (backend, project_id, instance_id).

Two projects may name the same instance id (or one project the same id at
two backends): each is an instance of its own, reconciled through its own
policy.  The queue is short-lived, so the table is made anew; queued rows
whose policy still exists are carried over with that policy's backend and
project, the others (nothing left to list them through) are dropped.

Revision ID: c5e1a7f93b20
Revises: c5e1a7b9d2f4
Create Date: 2026-11-27 16:10:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = 'c5e1a7f93b20'
down_revision = 'c5e1a7b9d2f4'
branch_labels = None
depends_on = None


def upgrade():
    # Typed columns: SQLite hands back its stored text as datetimes.
    old = sa.table('backup_reconciliation', sa.column('instance_id'),
                   sa.column('policy_id'),
                   sa.column('due_at', types.microsecond_datetime()),
                   sa.column('until', types.microsecond_datetime()))
    policy = sa.table('backup_policy', sa.column('id'), sa.column('backend'),
                      sa.column('project_id'))
    queued = op.get_bind().execute(
        sa.select(policy.c.backend, policy.c.project_id, old.c.instance_id,
                  old.c.policy_id, old.c.due_at, old.c.until)
        .select_from(old.join(policy, policy.c.id == old.c.policy_id))).all()
    op.drop_index('ix_backup_reconciliation_due_at',
                  table_name='backup_reconciliation')
    op.drop_table('backup_reconciliation')
    table = op.create_table(
        'backup_reconciliation',
        sa.Column('backend', sa.String(64), primary_key=True),
        sa.Column('project_id', sa.String(255), primary_key=True),
        sa.Column('instance_id', sa.String(255), primary_key=True),
        sa.Column('policy_id', sa.String(36), nullable=False),
        sa.Column('due_at', types.microsecond_datetime(), nullable=False),
        sa.Column('until', types.microsecond_datetime(), nullable=False),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_backup_reconciliation_due_at',
                    'backup_reconciliation', ['due_at'])
    if queued:
        op.bulk_insert(table, [row._asdict() for row in queued])
