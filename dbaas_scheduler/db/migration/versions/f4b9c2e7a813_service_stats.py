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
"""Each process's own metrics, as JSON, on its service row.

Revision ID: f4b9c2e7a813
Revises: a9e4c7d2f318
Create Date: 2026-11-26 21:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'f4b9c2e7a813'
down_revision = 'a9e4c7d2f318'
branch_labels = None
depends_on = None


def upgrade():
    # Written by each heartbeat (dbaas_scheduler.stats), read by the API's
    # metrics endpoint; NULL until a process of this release beats.
    op.add_column('service', sa.Column('stats', sa.Text(), nullable=True))
