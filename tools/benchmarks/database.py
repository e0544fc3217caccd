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
"""A benchmark's own database on PostgreSQL or MariaDB/MySQL."""

import io

import sqlalchemy as sa
from sqlalchemy.engine import url as sa_url

# The servers on 127.0.0.1 of the developer and CI machines
# (tools/test-setup.sh): databases are created and dropped through these.
ADMIN_URLS = {
    'postgresql': 'postgresql+psycopg2://postgres@127.0.0.1:5432/postgres',
    'mysql': 'mysql+pymysql://root:@127.0.0.1:3306/',
}
# Rows per INSERT statement when seeding (PyMySQL turns an executemany
# into multi-row statements); COPY on PostgreSQL takes 20 times as many.
SEED_CHUNK = 5000
# Server versions of the databases used, for the report's header.
SERVER_VERSIONS = set()


class Database:
    """The benchmark's own database on PostgreSQL or MariaDB/MySQL.

    By name, a database created on the server of ``admin_url`` (default:
    ``ADMIN_URLS[backend]``) and dropped by :meth:`drop`; with ``url``, an
    existing database, whose dbaas-scheduler tables :meth:`create` drops
    and which :meth:`drop` leaves alone.
    """

    def __init__(self, backend, name=None, url=None, admin_url=None):
        if url:
            self.url = sa_url.make_url(url)
            self.owned = False
        else:
            self.admin_url = sa_url.make_url(admin_url or ADMIN_URLS[backend])
            self.url = self.admin_url.set(database=name)
            self.owned = True
        self.name = self.url.database
        self.backend = ('mysql' if self.url.get_backend_name()
                        in ('mysql', 'mariadb') else 'postgresql')
        self.engine = None

    @property
    def url_string(self):
        return self.url.render_as_string(hide_password=False)

    def _admin(self, statement):
        engine = sa.create_engine(self.admin_url,
                                  isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as connection:
                result = connection.execute(sa.text(statement))
                return result.all() if result.returns_rows else None
        finally:
            engine.dispose()

    def exists(self):
        if not self.owned:
            return True
        if self.backend == 'postgresql':
            return bool(self._admin(
                "SELECT 1 FROM pg_database WHERE datname = '%s'" % self.name))
        return bool(self._admin(
            "SELECT 1 FROM information_schema.schemata "
            "WHERE schema_name = '%s'" % self.name))

    def create(self):
        """A new, empty database (an old one of the same name is dropped)."""
        if not self.owned:
            # Every table, whatever the schema's revision: a fixed list
            # falls behind the migrations.
            self.connect()
            tables = sa.MetaData()
            tables.reflect(bind=self.engine)
            tables.drop_all(bind=self.engine)
            return
        self.drop()
        if self.backend == 'postgresql':
            self._admin('CREATE DATABASE "%s"' % self.name)
        else:
            self._admin('CREATE DATABASE `%s` CHARACTER SET utf8mb4'
                        % self.name)
        self.connect()

    def drop(self):
        self.dispose()
        if not self.owned:
            return
        if self.backend == 'postgresql':
            self._admin('DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                        % self.name)
        else:
            self._admin('DROP DATABASE IF EXISTS `%s`' % self.name)

    def connect(self):
        if self.engine is None:
            # Pre-ping: a chaos run restarts the server under the pool.
            self.engine = sa.create_engine(self.url, pool_size=2,
                                           pool_pre_ping=True)
            SERVER_VERSIONS.add(self.server_version())

    def dispose(self):
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None

    # A statement is SQL text (with :name parameters) or a SQLAlchemy
    # construct.

    def execute(self, statement, **params):
        """Run a statement in a transaction of its own; its rowcount."""
        with self.engine.begin() as connection:
            return connection.execute(_statement(statement), params).rowcount

    def scalar(self, statement, **params):
        with self.engine.connect() as connection:
            return connection.execute(_statement(statement), params).scalar()

    def rows(self, statement, **params):
        with self.engine.connect() as connection:
            return connection.execute(_statement(statement), params).all()

    def insert(self, table, rows):
        """Insert dicts into a table, SEED_CHUNK to a transaction."""
        for start in range(0, len(rows), SEED_CHUNK):
            with self.engine.begin() as connection:
                connection.execute(sa.insert(table),
                                   rows[start:start + SEED_CHUNK])

    def copy(self, table, columns, rows):
        """Insert tuples (in ``columns`` order) into a table, fast.

        PostgreSQL: COPY.  MariaDB: one multi-row INSERT per SEED_CHUNK
        rows.
        """
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            names = ', '.join(columns)
            for start in range(0, len(rows), SEED_CHUNK * 20):
                chunk = rows[start:start + SEED_CHUNK * 20]
                if self.backend == 'postgresql':
                    # COPY's text format spells NULL \N.
                    data = io.StringIO(''.join(
                        '\t'.join('\\N' if value is None else str(value)
                                  for value in row) + '\n'
                        for row in chunk))
                    cursor.copy_expert('COPY %s (%s) FROM STDIN'
                                       % (table, names), data)
                else:
                    sql = 'INSERT INTO %s (%s) VALUES (%s)' % (
                        table, names, ', '.join(['%s'] * len(columns)))
                    for offset in range(0, len(chunk), SEED_CHUNK):
                        cursor.executemany(
                            sql, chunk[offset:offset + SEED_CHUNK])
            raw.commit()
        finally:
            raw.close()

    def vacuum(self, *tables):
        """Clean and analyse tables, so every run starts from the same.

        Fresh planner statistics after seeding, as on a settled table.
        """
        statement = ('VACUUM ANALYZE %s' if self.backend == 'postgresql'
                     else 'ANALYZE TABLE %s')
        with self.engine.connect().execution_options(
                isolation_level='AUTOCOMMIT') as connection:
            for table in tables:
                connection.execute(sa.text(statement % table))

    def deadlocks(self):
        """Deadlocks the server detected so far, and over what.

        PostgreSQL counts them per database; MariaDB/MySQL only for the
        whole server (``Innodb_deadlocks``), other users' included.
        """
        if self.backend == 'postgresql':
            return self.scalar(
                'SELECT deadlocks FROM pg_stat_database '
                'WHERE datname = current_database()'), 'this database'
        row = self.rows("SHOW GLOBAL STATUS LIKE 'Innodb_deadlocks'")
        return (int(row[0][1]) if row else None), 'the whole server'

    def server_version(self):
        """The server's version and the settings that bound commit cost."""
        if self.backend == 'postgresql':
            return ('PostgreSQL %s (synchronous_commit=%s, '
                    'shared_buffers=%s)' % (
                        self.scalar('SHOW server_version'),
                        self.scalar('SHOW synchronous_commit'),
                        self.scalar('SHOW shared_buffers')))
        row = self.rows('SELECT VERSION(), @@innodb_flush_log_at_trx_commit, '
                        '@@innodb_buffer_pool_size')[0]
        return ('MariaDB/MySQL %s (innodb_flush_log_at_trx_commit=%s, '
                'innodb_buffer_pool_size=%d MiB)' % (
                    row[0], row[1], int(row[2]) // 2 ** 20))


def _statement(statement):
    return sa.text(statement) if isinstance(statement, str) else statement
