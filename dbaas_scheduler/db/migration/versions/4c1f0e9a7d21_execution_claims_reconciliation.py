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
"""Fence claims with a token, index owners, queue reconciliations.

Revision ID: 4c1f0e9a7d21
Revises: b7c14e2d9a31
Create Date: 2026-11-23 18:40:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '4c1f0e9a7d21'
down_revision = 'b7c14e2d9a31'
branch_labels = None
depends_on = None


def _datetime(name, nullable=True):
    return sa.Column(name, types.microsecond_datetime(), nullable=nullable)


def upgrade():
    # Executions claimed before this revision have no token: their worker
    # (of the older release) fences itself by owner; once their lease
    # expires, the next claim gives them one.
    op.add_column('backup_execution',
                  sa.Column('claim_id', sa.String(36), nullable=True))
    op.create_index('ix_backup_execution_owner_status', 'backup_execution',
                    ['owner', 'status'])
    op.create_table(
        'backup_reconciliation',
        sa.Column('instance_id', sa.String(255), primary_key=True),
        sa.Column('policy_id', sa.String(36), nullable=False),
        _datetime('due_at', nullable=False),
        _datetime('until', nullable=False),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_backup_reconciliation_due_at',
                    'backup_reconciliation', ['due_at'])
