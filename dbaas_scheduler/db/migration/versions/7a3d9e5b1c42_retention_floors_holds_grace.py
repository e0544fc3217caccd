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
"""Retention floors, holds and the grace before a deletion.

``backup_policy.min_keep``: retention never deletes below that many
successful backups.  On ``backup_execution``, about the backup it made:
``held_at`` / ``held_by`` (a user's hold: retention never deletes it),
``backup_state`` (NULL while nothing is decided about it, then
``expiring``, ``deleting``, ``deleted``) and ``backup_delete_after`` (when
an ``expiring`` backup may be deleted).  Every column is nullable and
NULL means what the service did before: nothing to migrate.

Revision ID: 7a3d9e5b1c42
Revises: 7a3d9e5c1b64
Create Date: 2026-11-27 19:40:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '7a3d9e5b1c42'
down_revision = '7a3d9e5c1b64'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('backup_policy',
                  sa.Column('min_keep', sa.Integer, nullable=True))
    op.add_column('backup_execution',
                  sa.Column('held_at', types.microsecond_datetime(),
                            nullable=True))
    op.add_column('backup_execution',
                  sa.Column('held_by', sa.String(255), nullable=True))
    op.add_column('backup_execution',
                  sa.Column('backup_state', sa.String(16), nullable=True))
    op.add_column('backup_execution',
                  sa.Column('backup_delete_after',
                            types.microsecond_datetime(), nullable=True))
