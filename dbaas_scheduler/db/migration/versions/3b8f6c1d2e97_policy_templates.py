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
"""Project default policies: policy_template and template_enrolment.

Revision ID: 3b8f6c1d2e97
Revises: 5e8c1f3a9b27
Create Date: 2026-11-27 23:40:00
"""

from alembic import op
from oslo_db.sqlalchemy import types as oslo_db_types
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '3b8f6c1d2e97'
down_revision = '5e8c1f3a9b27'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'policy_template',
        sa.Column('id', sa.String(36), primary_key=True),
        sa.Column('name', sa.String(255), nullable=False),
        sa.Column('description', sa.Text(), nullable=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('user_id', sa.String(255), nullable=True),
        sa.Column('backend', sa.String(64), nullable=False),
        sa.Column('policy', oslo_db_types.JsonEncodedDict(), nullable=False),
        sa.Column('created_at', types.microsecond_datetime(),
                  nullable=False),
        sa.Column('updated_at', types.microsecond_datetime(), nullable=True),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('uniq_policy_template0project_id0name',
                    'policy_template', ['project_id', 'name'], unique=True)
    op.create_table(
        'template_enrolment',
        sa.Column('template_id', sa.String(36), primary_key=True),
        sa.Column('instance_id', sa.String(255), primary_key=True),
        sa.Column('project_id', sa.String(255), nullable=False),
        sa.Column('policy_id', sa.String(36), nullable=False),
        sa.Column('created_at', types.microsecond_datetime(),
                  nullable=False),
        sa.Column('policy_created_at', types.microsecond_datetime(),
                  nullable=True),
        mysql_engine='InnoDB',
        mysql_charset='utf8mb4',
    )
    op.create_index('ix_template_enrolment_project_id_instance_id',
                    'template_enrolment', ['project_id', 'instance_id'])
