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
"""Partial indexes on PostgreSQL for columns that are mostly NULL.

An UPDATE that changes an indexed column (the tick's compare-and-set of
``next_execution_time``, the worker's claim of ``status`` and ``owner``)
is not a HOT update on PostgreSQL: the new row version gets an entry in
every index of the table, and an INSERT does too.  Six indexes serve
queries that only ever look for rows where their first column is set:

* ``backup_policy``: ``verify_every`` and ``verify_next_at`` (the few
  policies that verify), ``protection_check_at`` (policies whose state
  time alone changes);
* ``backup_execution``: ``owner`` (claimed executions), ``finished_at``
  (finished ones) and ``backup_state`` (backups retention tracks).

On PostgreSQL they become ``WHERE <column> IS NOT NULL``: a new or
updated row with the column NULL -- every run the tick inserts, every
policy the tick advances that does not verify -- costs no entry in them.
Each query on them compares the column with a value (or tests it for
NOT NULL), which implies the predicate, so the planner still uses them.
MariaDB/MySQL have no partial indexes (and InnoDB updates only the
indexes of the columns an UPDATE changes); SQLite is left as it is.

Revision ID: d1e5a7c3b920
Revises: c4d7e9a1f602
Create Date: 2026-11-28 11:00:00
"""

from alembic import op
import sqlalchemy as sa

revision = 'd1e5a7c3b920'
down_revision = 'c4d7e9a1f602'
branch_labels = None
depends_on = None

_PARTIAL = (
    ('backup_policy', 'ix_backup_policy_verify_every', ('verify_every',)),
    ('backup_policy', 'ix_backup_policy_verify_next_at',
     ('verify_next_at',)),
    ('backup_policy', 'ix_backup_policy_protection_check_at',
     ('protection_check_at',)),
    ('backup_execution', 'ix_backup_execution_owner_status',
     ('owner', 'status')),
    ('backup_execution', 'ix_backup_execution_finished_at_stray_deleted_at',
     ('finished_at', 'stray_deleted_at')),
    ('backup_execution',
     'ix_backup_execution_backup_state_backup_delete_after',
     ('backup_state', 'backup_delete_after')),
)


def upgrade():
    if op.get_bind().dialect.name != 'postgresql':
        return
    for table, name, columns in _PARTIAL:
        op.drop_index(name, table_name=table)
        op.create_index(name, table, list(columns), postgresql_where=sa.text(
            '%s IS NOT NULL' % columns[0]))
