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
"""Protection of a policy: its RPO, freshness state and failure streak.

Existing policies start without a state (``protection`` NULL, no
``effective_rpo``): the API computes their RPO the next time they are
changed, and ``dbaas-scheduler-manage`` or a change sets it; their first
recorded outcome fills in ``last_success_at`` and the state.

Revision ID: 7a3d9e5c1b64
Revises: d2b7e4a1c9f3
Create Date: 2026-11-27 19:50:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '7a3d9e5c1b64'
down_revision = 'd2b7e4a1c9f3'
branch_labels = None
depends_on = None


def upgrade():
    def add(column):
        op.add_column('backup_policy', column)

    add(sa.Column('rpo', sa.Integer(), nullable=True))
    add(sa.Column('effective_rpo', sa.Integer(), nullable=True))
    add(sa.Column('last_success_at', types.microsecond_datetime(),
                  nullable=True))
    add(sa.Column('protected_until', types.microsecond_datetime(),
                  nullable=True))
    add(sa.Column('protection', sa.String(16), nullable=True))
    add(sa.Column('protection_changed_at', types.microsecond_datetime(),
                  nullable=True))
    add(sa.Column('protection_check_at', types.microsecond_datetime(),
                  nullable=True))
    add(sa.Column('lateness_p95', sa.Float(), nullable=True))
    add(sa.Column('duration_p95', sa.Float(), nullable=True))
    add(sa.Column('pause_after_failures', sa.Integer(), nullable=True))
    add(sa.Column('consecutive_failures', sa.Integer(), nullable=False,
                  server_default='0'))
    op.create_index('ix_backup_policy_protection_check_at', 'backup_policy',
                    ['protection_check_at'])
    op.create_index('ix_backup_policy_project_id_protection',
                    'backup_policy', ['project_id', 'protection'])
