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
"""Record on each execution the backups its retention pass deleted.

Revision ID: 95b347557893
Revises: 21503f33fc5b
Create Date: 2026-11-22 08:00:00
"""

from alembic import op
from oslo_db.sqlalchemy import types as oslo_db_types
import sqlalchemy as sa

revision = '95b347557893'
down_revision = '21503f33fc5b'
branch_labels = None
depends_on = None


def upgrade():
    op.add_column('backup_execution',
                  sa.Column('deleted_backups', oslo_db_types.JsonEncodedList,
                            nullable=True))
