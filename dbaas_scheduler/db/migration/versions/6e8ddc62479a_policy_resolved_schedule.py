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
"""Keep a hashed cron schedule with its H fields resolved, per policy.

Revision ID: 6e8ddc62479a
Revises: 95b347557893
Create Date: 2026-11-22 09:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = '6e8ddc62479a'
down_revision = '95b347557893'
branch_labels = None
depends_on = None


def upgrade():
    # Existing rows keep NULL: the engine then evaluates ``schedule`` with
    # the policy id as before, only slower.
    op.add_column('backup_policy',
                  sa.Column('resolved_schedule', sa.Text, nullable=True))
