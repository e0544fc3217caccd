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
"""Metrics without reading the history; a project's policies in list order.

* The failure streaks are each policy's ``consecutive_failures``, read
  in the metrics' one pass over the policies: the index on executions by
  (status, finished_at, policy_id), which served the ranking of their
  history, goes.
* ``backup_execution.stray_deleted_at``: when a duplicate or orphan
  backup of the execution was last deleted.  The index on
  ``finished_at`` becomes one on (finished_at, stray_deleted_at), so that
  the executions with recent stray deletions are found from the index
  alone (the purge still ranges over its first column).  Executions
  whose ``deleted_backups`` already name a stray are marked now.
* The index on ``backup_policy.project_id`` becomes one on
  (project_id, created_at, id), the order in which the API lists a
  project's policies: a page of a large project is a range of it rather
  than a sort of every policy of the project.

Revision ID: b8e3f6a2d951
Revises: 8a4f2c6e1b90
Create Date: 2026-11-27 23:45:00
"""

from alembic import op
from oslo_utils import timeutils
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = 'b8e3f6a2d951'
down_revision = '8a4f2c6e1b90'
branch_labels = None
depends_on = None


def upgrade():
    op.drop_index('ix_backup_execution_status_finished_at_policy_id',
                  'backup_execution')
    op.add_column('backup_execution',
                  sa.Column('stray_deleted_at', types.UTCDateTime()))
    # Marked as of now: a later time than any deletion recorded, which
    # only widens what the metrics read until the window has passed.
    execution = sa.table('backup_execution',
                         sa.column('deleted_backups', sa.Text),
                         sa.column('stray_deleted_at', types.UTCDateTime()))
    strays = sa.or_(execution.c.deleted_backups.like('%"duplicate"%'),
                    execution.c.deleted_backups.like('%"orphan"%'))
    op.execute(execution.update().where(strays).values(
        stray_deleted_at=timeutils.utcnow(True)))
    op.create_index('ix_backup_execution_finished_at_stray_deleted_at',
                    'backup_execution', ['finished_at', 'stray_deleted_at'])
    op.drop_index('ix_backup_execution_finished_at', 'backup_execution')
    op.create_index('ix_backup_policy_project_id_created_at_id',
                    'backup_policy', ['project_id', 'created_at', 'id'])
    op.drop_index('ix_backup_policy_project_id', 'backup_policy')
