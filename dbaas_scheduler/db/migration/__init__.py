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
"""Schema migrations: upgrade the database and report its revision."""

import os

from alembic import command as alembic_command
from alembic import config as alembic_config
from alembic import migration as alembic_migration
from alembic import script as alembic_script

from dbaas_scheduler.db import api as db_api

_ALEMBIC_INI = os.path.join(os.path.dirname(__file__), 'alembic.ini')


def _alembic_config(connection=None):
    config = alembic_config.Config(_ALEMBIC_INI)
    config.set_main_option('script_location', os.path.dirname(__file__))
    if connection is not None:
        config.attributes['connection'] = connection
    return config


def upgrade(revision='head', engine=None):
    """Upgrade the schema to ``revision`` (default: the newest one)."""
    engine = engine or db_api.get_engine()
    with engine.begin() as connection:
        alembic_command.upgrade(_alembic_config(connection), revision)


def stamp(revision, engine=None):
    """Record ``revision`` as the schema's revision, changing nothing else.

    For a database whose schema was made or repaired by other means.
    """
    engine = engine or db_api.get_engine()
    with engine.begin() as connection:
        alembic_command.stamp(_alembic_config(connection), revision)


def version(engine=None):
    """The revision the database is at, or None if it has no schema."""
    engine = engine or db_api.get_engine()
    with engine.connect() as connection:
        context = alembic_migration.MigrationContext.configure(connection)
        return context.get_current_revision()


def head():
    """The newest revision this code knows."""
    scripts = alembic_script.ScriptDirectory.from_config(_alembic_config())
    return scripts.get_current_head()


def is_behind(revision):
    """True if ``revision`` is a known revision older than the head.

    False for the head itself and for a revision this code does not know
    (a newer release's, or no revision of this project at all).
    """
    scripts = alembic_script.ScriptDirectory.from_config(_alembic_config())
    current_head = scripts.get_current_head()
    if revision is None or revision == current_head:
        return False
    try:
        return any(script.revision == revision for script in
                   scripts.iterate_revisions(current_head, 'base'))
    except Exception:
        return False
