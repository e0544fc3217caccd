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
"""Verification on a schedule of its own.

* ``backup_policy.verify_schedule``: a cron expression in the policy's
  time zone (NULL: none), and ``verify_next_at``, its next slot in UTC,
  advanced by compare-and-set by the engine that records the slot;
* ``backup_restore.verify_scheduled_at``: the slot a scheduled
  verification was recorded for, unique per policy -- the same fence as
  ``uniq_backup_execution0policy_id0scheduled_at`` for backups;
* an index on ``verify_next_at`` for the sweep of due slots.

Revision ID: c4d7e9a1f602
Revises: c7f2a9d4e6b1
Create Date: 2026-11-28 03:30:00
"""

from alembic import op
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = 'c4d7e9a1f602'
down_revision = 'c7f2a9d4e6b1'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('backup_policy',
                  sa.Column('verify_schedule', sa.String(255)))
    op.add_column('backup_policy',
                  sa.Column('verify_next_at', types.UTCDateTime()))
    op.create_index('ix_backup_policy_verify_next_at', 'backup_policy',
                    ['verify_next_at'])
    op.add_column('backup_restore',
                  sa.Column('verify_scheduled_at', types.UTCDateTime()))
    op.create_index('uniq_backup_restore0policy_id0verify_scheduled_at',
                    'backup_restore', ['policy_id', 'verify_scheduled_at'],
                    unique=True)
