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
"""Initial schema: backup_policy, backup_execution, service.

Revision ID: 21503f33fc5b
Revises:
Create Date: 2026-11-22 06:30:00
"""

from alembic import op
from oslo_db.sqlalchemy import types as oslo_db_types
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '21503f33fc5b'
down_revision = None
branch_labels = None
depends_on = None


def _datetime(name, nullable=True):
    return sa.Column(name, types.microsecond_datetime(), nullable=nullable)


def upgrade():
    op.create_table(
        'backup_policy',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('description', sa.Text, nullable=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('trust_id', sa.String(255), nullable=True),
        sa.Column('instance_id', sa.String(255), nullable=False),
        sa.Column('backend', sa.String(64), nullable=False),
        sa.Column('backup_params', oslo_db_types.JsonEncodedDict,
                  nullable=True),
        sa.Column('schedule_type', sa.String(16), nullable=False),
        sa.Column('schedule', sa.String(255), nullable=False),
        sa.Column('timezone', sa.String(64), nullable=False),
        _datetime('start_at'),
        _datetime('end_at'),
        sa.Column('remaining_runs', sa.Integer, nullable=True),
        sa.Column('enabled', sa.Boolean, nullable=False),
        sa.Column('paused_reason', sa.Text, nullable=True),
        sa.Column('overlap_policy', sa.String(16), nullable=False),
        sa.Column('catchup_window', sa.Integer, nullable=True),
        sa.Column('keep_last', sa.Integer, nullable=True),
        sa.Column('keep_daily', sa.Integer, nullable=True),
        sa.Column('keep_weekly', sa.Integer, nullable=True),
        sa.Column('keep_monthly', sa.Integer, nullable=True),
        sa.Column('max_age_days', sa.Integer, nullable=True),
        _datetime('next_execution_time'),
        sa.Column('last_execution_id', sa.String(36), nullable=True),
        _datetime('created_at', nullable=False),
        _datetime('updated_at'),
        sa.CheckConstraint('NOT enabled OR next_execution_time IS NOT NULL',
                           name='ck_backup_policy_enabled_has_next_time'),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_backup_policy_enabled_next_execution_time',
                    'backup_policy', ['enabled', 'next_execution_time'])
    op.create_index('ix_backup_policy_project_id', 'backup_policy',
                    ['project_id'])
    op.create_index('ix_backup_policy_instance_id', 'backup_policy',
                    ['instance_id'])

    op.create_table(
        'backup_execution',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('policy_id', sa.String(36), nullable=False),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('instance_id', sa.String(255), nullable=False),
        _datetime('scheduled_at', nullable=False),
        sa.Column('trigger', sa.String(16), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('status_reason', sa.Text, nullable=True),
        sa.Column('attempts', sa.Integer, nullable=False),
        _datetime('next_attempt_at'),
        sa.Column('owner', sa.String(36), nullable=True),
        _datetime('lease_expires_at'),
        sa.Column('backup_id', sa.String(255), nullable=True),
        _datetime('created_at', nullable=False),
        _datetime('dispatched_at'),
        _datetime('started_at'),
        _datetime('finished_at'),
        sa.Column('fault', sa.Text, nullable=True),
        sa.UniqueConstraint(
            'policy_id', 'scheduled_at',
            name='uniq_backup_execution0policy_id0scheduled_at'),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_backup_execution_status_lease_expires_at',
                    'backup_execution', ['status', 'lease_expires_at'])
    op.create_index('ix_backup_execution_instance_id_status',
                    'backup_execution', ['instance_id', 'status'])
    op.create_index('ix_backup_execution_project_id_created_at',
                    'backup_execution', ['project_id', 'created_at'])

    op.create_table(
        'service',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('host', sa.String(255), nullable=False),
        sa.Column('binary', sa.String(64), nullable=False),
        sa.Column('topic', sa.String(255), nullable=True),
        sa.Column('pid', sa.Integer, nullable=True),
        _datetime('started_at', nullable=False),
        _datetime('heartbeat_at', nullable=False),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_service_binary_heartbeat_at', 'service',
                    ['binary', 'heartbeat_at'])
