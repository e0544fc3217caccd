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
"""The metrics' pass over the policies, from an index alone.

An index on ``backup_policy`` (enabled, protection, consecutive_failures,
next_execution_time, last_success_at) holds every column the scrape's
one pass over the policies reads: MariaDB scans it rather than the
policies' clustered rows (0.43-0.48 s -> 0.31 s at 100,000 policies on
a loaded machine).

An index on ``backup_policy.verify_every`` finds the policies with
verification on (few) for the age of the newest verified backup, which
read every policy row (0.12-0.29 s -> 0.003 s on MariaDB).

Revision ID: c7f2a9d4e6b1
Revises: a7c4e9d2f618
Create Date: 2026-11-28 04:00:00
"""

from alembic import op

revision = 'c7f2a9d4e6b1'
down_revision = 'a7c4e9d2f618'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_backup_policy_metrics', 'backup_policy',
                    ['enabled', 'protection', 'consecutive_failures',
                     'next_execution_time', 'last_success_at'])
    op.create_index('ix_backup_policy_verify_every', 'backup_policy',
                    ['verify_every'])
