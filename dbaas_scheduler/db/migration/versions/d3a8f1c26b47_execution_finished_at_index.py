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
"""Index executions by when they finished, for the metrics' window.

Revision ID: d3a8f1c26b47
Revises: e2d5b8a41c97
Create Date: 2026-11-23 21:20:00
"""

from alembic import op

revision = 'd3a8f1c26b47'
down_revision = 'e2d5b8a41c97'
branch_labels = None
depends_on = None


def upgrade():
    # The metrics endpoint reads the executions finished in its window on
    # every scrape: without it, a scan of the whole history.
    op.create_index('ix_backup_execution_finished_at', 'backup_execution',
                    ['finished_at'])
