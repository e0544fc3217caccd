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
"""Alembic environment: runs revisions on the connection we are given."""

from alembic import context
import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models

config = context.config
target_metadata = models.Base.metadata


def run_migrations_offline():
    """Emit SQL for ``alembic --sql`` instead of running it."""
    context.configure(url=config.get_main_option('sqlalchemy.url'),
                      target_metadata=target_metadata,
                      literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online():
    """Run on ``config.attributes['connection']``, or on sqlalchemy.url."""
    connection = config.attributes.get('connection')
    if connection is not None:
        _run_on(connection)
        return
    engine = sa.create_engine(config.get_main_option('sqlalchemy.url'))
    # Tuned as the service's engines are (BEGIN IMMEDIATE, WAL, busy
    # timeout on SQLite), since a service may be running beside it.
    db_api._tune_sqlite(engine)
    with engine.connect() as connection:
        _run_on(connection)


def _run_on(connection):
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
