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
"""Record restores of backups: the backup_restore table.

Revision ID: 7d3e9b1a4c52
Revises: 7d2e4b9f1a63
Create Date: 2026-11-27 19:40:00
"""

from alembic import op
from oslo_db.sqlalchemy import types as oslo_db_types
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '7d3e9b1a4c52'
down_revision = '7d2e4b9f1a63'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'backup_restore',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('execution_id', sa.String(36), nullable=False),
        sa.Column('policy_id', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('instance_id', sa.String(255), nullable=False),
        sa.Column('backend', sa.String(64), nullable=False),
        sa.Column('backup_id', sa.String(255), nullable=False),
        sa.Column('params', oslo_db_types.JsonEncodedDict(), nullable=True),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('status_reason', sa.Text(), nullable=True),
        sa.Column('fault', sa.Text(), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('owner', sa.String(36), nullable=True),
        sa.Column('lease_expires_at', types.microsecond_datetime(),
                  nullable=True),
        sa.Column('claim_id', sa.String(36), nullable=True),
        sa.Column('target_id', sa.String(255), nullable=True),
        sa.Column('created_at', types.microsecond_datetime(),
                  nullable=False),
        sa.Column('dispatched_at', types.microsecond_datetime(),
                  nullable=True),
        sa.Column('started_at', types.microsecond_datetime(), nullable=True),
        sa.Column('finished_at', types.microsecond_datetime(),
                  nullable=True),
        sa.Column('duration', sa.Float(), nullable=True),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_backup_restore_project_id_created_at',
                    'backup_restore', ['project_id', 'created_at'])
    op.create_index('ix_backup_restore_status_lease_expires_at',
                    'backup_restore', ['status', 'lease_expires_at'])
    op.create_index('ix_backup_restore_policy_id_finished_at',
                    'backup_restore', ['policy_id', 'finished_at'])
