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
"""The projects backing off now, from an index: the capacity metrics.

``project_capacity.backoff_until`` is indexed, so that the metrics'
scrape reads only the rows of the projects whose backoff has not ended
(``db/capacity.py``, ``backoffs_now``), not one row per project that a
limit ever applied to.

Revision ID: a7c4e9d2f618
Revises: b8e3f6a2d951
Create Date: 2026-11-28 03:30:00
"""

from alembic import op

revision = 'a7c4e9d2f618'
down_revision = 'b8e3f6a2d951'
branch_labels = None
depends_on = None


def upgrade():
    op.create_index('ix_project_capacity_backoff_until',
                    'project_capacity', ['backoff_until'])
