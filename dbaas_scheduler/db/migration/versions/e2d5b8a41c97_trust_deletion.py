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
"""Queue the Keystone trusts still to delete.

Revision ID: e2d5b8a41c97
Revises: 4c1f0e9a7d21
Create Date: 2026-11-23 21:30:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = 'e2d5b8a41c97'
down_revision = '4c1f0e9a7d21'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'trust_deletion',
        sa.Column('trust_id', sa.String(255), primary_key=True),
        sa.Column('project_id', sa.String(255), nullable=True),
        sa.Column('created_at', types.microsecond_datetime(),
                  nullable=False),
        sa.Column('due_at', types.microsecond_datetime(), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('last_error', sa.Text(), nullable=True),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_trust_deletion_due_at', 'trust_deletion',
                    ['due_at'])
