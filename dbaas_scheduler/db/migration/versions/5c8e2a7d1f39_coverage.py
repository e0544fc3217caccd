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
"""Coverage: backups a day of a policy, and each project's stored counts.

``backup_policy.daily_runs`` is the average number of slots a day of the
policy's schedule (the coverage report's minimum-frequency check); it is
computed when a policy is created or changed, NULL before (such a policy
is not judged on its frequency until it is next changed).
``coverage_count`` keeps the counts of instances per coverage state of
each project's latest coverage report, which the metrics read.

Revision ID: 5c8e2a7d1f39
Revises: 7d3e9b1a4c52
Create Date: 2026-11-27 23:50:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '5c8e2a7d1f39'
down_revision = '7d3e9b1a4c52'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('backup_policy',
                  sa.Column('daily_runs', sa.Float(), nullable=True))
    op.create_index('ix_backup_policy_project_id_backend_instance_id',
                    'backup_policy', ['project_id', 'backend', 'instance_id'])
    op.create_table(
        'coverage_count',
        sa.Column('project_id', sa.String(255), primary_key=True),
        sa.Column('state', sa.String(32), primary_key=True),
        sa.Column('instances', sa.Integer(), nullable=False),
        sa.Column('computed_at', types.microsecond_datetime(),
                  nullable=False),
        mysql_engine='InnoDB', mysql_charset='utf8mb4')
    op.create_index('ix_coverage_count_computed_at', 'coverage_count',
                    ['computed_at'])
