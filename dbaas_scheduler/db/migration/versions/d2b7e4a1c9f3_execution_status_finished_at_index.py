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
"""Index the executions by (status, finished_at, policy_id).

The metrics' failure streaks start from the FAILED executions finished in
the look-back and need only their policy ids: read from this index alone,
without a read of each row (2.2 s of a MariaDB scrape at a million
executions).

Revision ID: d2b7e4a1c9f3
Revises: c5e1a7f93b20
Create Date: 2026-11-27 20:05:00
"""

from alembic import op

revision = 'd2b7e4a1c9f3'
down_revision = 'c5e1a7f93b20'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_backup_execution_status_finished_at_policy_id',
                    'backup_execution',
                    ['status', 'finished_at', 'policy_id'])
