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
"""A policy's name is unique in its project; duplicates are renamed.

Revision ID: c5e1a7b9d2f4
Revises: f4b9c2e7a813
Create Date: 2026-11-27 16:30:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import names

revision = 'c5e1a7b9d2f4'
down_revision = 'f4b9c2e7a813'
branch_labels = None
depends_on = None


def upgrade():
    connection = op.get_bind()
    policy = sa.table('backup_policy', sa.column('id', sa.String),
                      sa.column('project_id', sa.String),
                      sa.column('name', sa.String),
                      sa.column('created_at', sa.DateTime))
    rows = connection.execute(sa.select(
        policy.c.id, policy.c.project_id, policy.c.name,
        policy.c.created_at)).all()
    # The oldest of each name keeps it; the others get -2, -3, ... (what
    # "dbaas-scheduler-status upgrade check" listed before this ran).
    for policy_id, name in sorted(names.duplicate_renames(rows).items()):
        connection.execute(policy.update().where(policy.c.id == policy_id)
                           .values(name=name))
    # A unique index, which every database adds in place (SQLite cannot
    # add a constraint to a table without copying it).
    op.create_index('uniq_backup_policy0project_id0name', 'backup_policy',
                    ['project_id', 'name'], unique=True)
