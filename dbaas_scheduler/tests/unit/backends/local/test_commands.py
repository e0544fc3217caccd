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
"""A database URL as its dump command."""

from oslotest import base as oslotest_base

from dbaas_scheduler.backends.local import commands
from dbaas_scheduler.tests.unit.backends.local import fakes


class TestDumpCommand(oslotest_base.BaseTestCase):

    def test_postgresql_password_goes_to_the_environment(self):
        command = commands.dump_command(
            'postgresql+psycopg2://backup:%s@db1:5433/orders' % fakes.SECRET)
        self.assertEqual(commands.POSTGRESQL, command.kind)
        self.assertEqual('.sql.gz', command.suffix)
        self.assertEqual(
            ('pg_dump', '--format=plain', '--no-password', '--host=db1',
             '--port=5433', '--username=backup', '--dbname=orders'),
            command.argv)
        self.assertEqual(fakes.SECRET, command.env['PGPASSWORD'])
        self.assertNotIn(fakes.SECRET, ' '.join(command.argv))
        self.assertIsNone(command.option_file)

    def test_postgresql_socket_and_ssl_from_the_query(self):
        command = commands.dump_command(
            'postgresql://backup@/orders?host=/run/postgresql'
            '&sslmode=require')
        self.assertIn('--host=/run/postgresql', command.argv)
        self.assertEqual('require', command.env['PGSSLMODE'])
        self.assertNotIn('PGPASSWORD', command.env)

    def test_mysql_password_goes_to_an_option_file(self):
        command = commands.dump_command(
            'mysql+pymysql://backup:%s@db2:3307/wiki?charset=utf8'
            % fakes.SECRET)
        self.assertEqual(commands.MYSQL, command.kind)
        self.assertEqual('.sql.gz', command.suffix)
        argv = command.argv
        self.assertIn(argv[0], ('mariadb-dump', 'mysqldump'))
        for option in ('--single-transaction', '--routines', '--events',
                       '--triggers', '--protocol=tcp', '--host=db2',
                       '--port=3307', '--user=backup',
                       '--default-character-set=utf8'):
            self.assertIn(option, argv)
        self.assertEqual(('--', 'wiki'), argv[-2:])
        self.assertNotIn('s3cr3t', ' '.join(argv))
        self.assertEqual({}, command.env)
        self.assertEqual(
            '[client]\npassword="s3cr3t \\"pass\\" \\\\ word"\n',
            command.option_file)

    def test_mariadb_scheme_and_unix_socket(self):
        command = commands.dump_command(
            'mariadb://backup@localhost/wiki?unix_socket=/run/mysqld.sock')
        self.assertEqual(commands.MYSQL, command.kind)
        self.assertIn('--socket=/run/mysqld.sock', command.argv)
        self.assertNotIn('--protocol=tcp', command.argv)
        self.assertIn('--default-character-set=utf8mb4', command.argv)
        self.assertIsNone(command.option_file)

    def test_mysqldump_when_mariadb_dump_is_missing(self):
        url = 'mysql://backup@db2/wiki'
        command = commands.dump_command(
            url, find_tool=lambda name: name == 'mysqldump')
        self.assertEqual('mysqldump', command.argv[0])
        command = commands.dump_command(url, find_tool=lambda name: True)
        self.assertEqual('mariadb-dump', command.argv[0])

    def test_sqlite_file(self):
        command = commands.dump_command('sqlite:////var/lib/notes/notes.db')
        self.assertEqual(commands.SQLITE, command.kind)
        self.assertEqual('.sqlite.gz', command.suffix)
        self.assertEqual('/var/lib/notes/notes.db', command.sqlite_path)
        self.assertEqual((), command.argv)

    def test_unusable_urls(self):
        for url in ('sqlite://', 'sqlite:///relative.db',
                    'sqlite:///:memory:', 'oracle://u:p@h/db',
                    'postgresql://u:p@h', 'mysql://u:p@h/'):
            self.assertRaises(commands.UnsupportedDatabase,
                              commands.dump_command, url)

    def test_an_unparsable_url_is_not_quoted(self):
        error = self.assertRaises(commands.UnsupportedDatabase,
                                  commands.dump_command,
                                  'not a url with %s' % fakes.SECRET)
        self.assertNotIn('s3cr3t', str(error))
