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
"""Scheduled verification of backups: a restore of kind 'verify'.

Revision ID: 8a4f2c6e1b90
Revises: 3b8f6c1d2e97
Create Date: 2026-11-27 23:40:00
"""

from alembic import op
from oslo_db.sqlalchemy import types as oslo_db_types
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '8a4f2c6e1b90'
down_revision = '3b8f6c1d2e97'
branch_labels = None
depends_on = None


def upgrade():
    def add(table, *columns):
        for column in columns:
            op.add_column(table, column)

    add('backup_policy',
        sa.Column('verify_every', sa.Integer(), nullable=True),
        sa.Column('verify_check', oslo_db_types.JsonEncodedDict(),
                  nullable=True),
        sa.Column('verify_failing', sa.Boolean(), nullable=False,
                  server_default=sa.false()))
    add('backup_execution',
        sa.Column('verified_at', types.microsecond_datetime(),
                  nullable=True),
        sa.Column('verify_result', sa.String(16), nullable=True),
        sa.Column('verify_reason', sa.Text(), nullable=True),
        sa.Column('verify_duration', sa.Float(), nullable=True))
    add('backup_restore',
        sa.Column('kind', sa.String(16), nullable=False,
                  server_default='restore'),
        sa.Column('verify_slot', sa.String(36), nullable=True),
        sa.Column('region_slot', sa.Integer(), nullable=True),
        sa.Column('project_slot', sa.Integer(), nullable=True),
        sa.Column('scratch_deleted_at', types.microsecond_datetime(),
                  nullable=True))
    # One verification per execution; the concurrency slots a running
    # verification holds, region-wide and in its project.
    op.create_index('uniq_backup_restore0verify_slot', 'backup_restore',
                    ['verify_slot'], unique=True)
    op.create_index('uniq_backup_restore0region_slot', 'backup_restore',
                    ['region_slot'], unique=True)
    op.create_index('uniq_backup_restore0project_id0project_slot',
                    'backup_restore', ['project_id', 'project_slot'],
                    unique=True)
