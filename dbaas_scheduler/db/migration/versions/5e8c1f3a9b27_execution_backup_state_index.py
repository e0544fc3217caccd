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
"""Index the executions by (backup_state, backup_delete_after).

The workers' expiry sweep looks every pass for the ``expiring`` backups
whose grace is over: an index range, not a scan of every execution.

Revision ID: 5e8c1f3a9b27
Revises: 3f6c1d8e2a95
Create Date: 2026-11-27 23:40:00
"""

from alembic import op

revision = '5e8c1f3a9b27'
down_revision = '3f6c1d8e2a95'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_backup_execution_backup_state_backup_delete_after',
                    'backup_execution',
                    ['backup_state', 'backup_delete_after'])
