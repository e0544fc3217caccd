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
"""Record which process a service row stands for.

Revision ID: a9e4c7d2f318
Revises: d3a8f1c26b47
Create Date: 2026-11-26 20:55:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'a9e4c7d2f318'
down_revision = 'd3a8f1c26b47'
branch_labels = None
depends_on = None


def upgrade():
    # Boot id, pid namespace, pid and start time of the process: a worker
    # started on the same host tells from it that the process is gone and
    # takes its executions over without waiting for their leases.  Rows
    # of processes started before the upgrade have none and are left to
    # expire as before.
    op.add_column('service', sa.Column('process_identity', sa.String(255),
                                       nullable=True))
