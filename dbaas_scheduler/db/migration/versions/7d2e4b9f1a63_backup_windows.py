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
"""Start, completion and exclusion windows.

A policy's ``start_window`` and ``completion_window`` (seconds; NULL:
derived from its schedule) and ``exclusions`` (JSON list of texts); an
execution's ``start_deadline`` and ``completion_deadline``, fixed when it
is recorded.  Existing rows keep NULL: their executions have no window.

Revision ID: 7d2e4b9f1a63
Revises: 7a3d9e5b1c42
Create Date: 2026-11-27 19:40:00
"""

from alembic import op
from oslo_db.sqlalchemy import types as oslo_db_types
import sqlalchemy as sa

from dbaas_scheduler.db import types

revision = '7d2e4b9f1a63'
down_revision = '7a3d9e5b1c42'
branch_labels = None
depends_on = None


def upgrade():
    # Plain ADD COLUMN on every backend (SQLite adds a nullable column
    # without copying the table).
    for name in ('start_window', 'completion_window'):
        op.add_column('backup_policy', sa.Column(name, sa.Integer(),
                                                 nullable=True))
    op.add_column('backup_policy', sa.Column(
        'exclusions', oslo_db_types.JsonEncodedList(), nullable=True))
    for name in ('start_deadline', 'completion_deadline'):
        op.add_column('backup_execution', sa.Column(
            name, types.microsecond_datetime(), nullable=True))
