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
"""Fair capacity: the project_capacity table.

Revision ID: 3f6c1d8e2a95
Revises: 5c8e2a7d1f39
Create Date: 2026-11-27 23:40:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '3f6c1d8e2a95'
down_revision = '5c8e2a7d1f39'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'project_capacity',
        sa.Column('project_id', sa.String(255), primary_key=True),
        sa.Column('claims', sa.Integer(), nullable=False),
        sa.Column('backoff_until', types.microsecond_datetime(),
                  nullable=True),
        sa.Column('backoff_reason', sa.Text(), nullable=True),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
