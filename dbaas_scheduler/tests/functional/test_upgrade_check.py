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
"""The upgrade path a deployment tool drives, with the console scripts.

kolla-ansible runs the new release's ``dbaas-scheduler-status upgrade
check`` before it migrates, and goes on only at 0 or 1: a schema one
revision behind is a warning that names the command to run; a schema this
code does not know is a failure (2).
"""

import json
import os
import subprocess
import sys

from alembic import script as alembic_script
import fixtures
import sqlalchemy as sa

from dbaas_scheduler.db import migration
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

BIN = os.path.dirname(sys.executable)


def _previous(revision):
    scripts = alembic_script.ScriptDirectory.from_config(
        migration._alembic_config())
    return scripts.get_revision(revision).down_revision


class _UpgradePath:

    def database_url(self):
        raise NotImplementedError

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.config = os.path.join(self.state, 'dbaas-scheduler.conf')
        with open(self.config, 'w') as stream:
            stream.write('[database]\nconnection = %s\n'
                         % self.database_url())
        self.env = dict(os.environ, XDG_STATE_HOME=self.state)

    def run_script(self, name, *args):
        return subprocess.run(
            [os.path.join(BIN, name), '--config-file', self.config]
            + list(args), capture_output=True, text=True, env=self.env,
            timeout=120)

    def check(self):
        result = self.run_script('dbaas-scheduler-status', 'upgrade',
                                 'check')
        # The table wraps long lines: read it as one line of words.
        text = ' '.join(result.stdout.replace('|', ' ').split())
        return result.returncode, text

    def test_upgrade_path(self):
        head = migration.head()
        previous = _previous(head)
        result = self.run_script('dbaas-scheduler-manage', 'db', 'upgrade',
                                 '--revision', previous)
        self.assertEqual(0, result.returncode, result.stderr)

        # The new code's check before the migration: a warning, and what
        # to run.
        code, text = self.check()
        self.assertEqual(1, code, text)
        self.assertIn('The database schema is at revision %s, behind the '
                      '%s this code needs' % (previous, head), text)
        self.assertIn('dbaas-scheduler-manage db sync', text)
        self.assertNotIn('Failure', text)

        result = self.run_script('dbaas-scheduler-manage', 'db', 'sync')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('from %s to %s' % (previous, head), result.stdout)
        code, text = self.check()
        # Current schema; no engine nor worker runs yet: still a warning.
        self.assertEqual(1, code, text)
        self.assertIn('Check: Database schema Result: Success', text)

        # Stamp: the revision changes, the schema does not.
        result = self.run_script('dbaas-scheduler-manage', 'db', 'stamp',
                                 previous)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(previous, self.run_script(
            'dbaas-scheduler-manage', 'db', 'version').stdout.strip())
        result = self.run_script('dbaas-scheduler-manage', 'db', 'stamp',
                                 'head')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(head, self.run_script(
            'dbaas-scheduler-manage', 'db', 'version').stdout.strip())
        result = self.run_script('dbaas-scheduler-manage', 'db', 'stamp',
                                 'nosuchrev')
        self.assertEqual(1, result.returncode)
        self.assertIn('nosuchrev', result.stderr)

        # A revision this code does not know (a newer release's): a real
        # failure.
        engine = sa.create_engine(self.database_url())
        try:
            with engine.begin() as connection:
                connection.execute(sa.text(
                    "UPDATE alembic_version SET version_num = "
                    "'0123456789ab'"))
        finally:
            engine.dispose()
        code, text = self.check()
        self.assertEqual(2, code, text)
        self.assertIn('0123456789ab, which this code does not know', text)

    def test_empty_database_is_a_failure(self):
        code, text = self.check()
        self.assertEqual(2, code, text)
        self.assertIn('has no schema', text)

    def test_duplicate_names_are_listed_then_renamed(self):
        result = self.run_script('dbaas-scheduler-manage', 'db', 'upgrade',
                                 '--revision', 'f4b9c2e7a813')
        self.assertEqual(0, result.returncode, result.stderr)
        engine = sa.create_engine(self.database_url())
        self.addCleanup(engine.dispose)
        with engine.begin() as connection:
            for policy_id, created in (('older', '2026-01-01 00:00:00'),
                                       ('newer', '2026-01-02 00:00:00')):
                connection.execute(sa.text(
                    "INSERT INTO backup_policy (id, name, project_id, "
                    "instance_id, backend, schedule_type, schedule, "
                    "timezone, enabled, overlap_policy, created_at) "
                    "VALUES (:id, 'notes', 'p', 'i', 'local', 'cron', "
                    "'0 2 * * *', 'UTC', :enabled, 'skip', :created)"),
                    {'id': policy_id, 'enabled': False, 'created': created})
        code, text = self.check()
        self.assertEqual(1, code, text)
        self.assertIn('1 backup policies share their name with an older '
                      'policy of their project', text)
        self.assertIn('policy newer to "notes-2"', text)
        result = self.run_script('dbaas-scheduler-manage', 'db', 'sync')
        self.assertEqual(0, result.returncode, result.stderr)
        with engine.connect() as connection:
            found = dict(connection.execute(sa.text(
                'SELECT id, name FROM backup_policy')).all())
        self.assertEqual({'older': 'notes', 'newer': 'notes-2'}, found)
        code, text = self.check()
        self.assertIn('Check: Policy names Result: Success', text)

    def test_json(self):
        result = self.run_script('dbaas-scheduler-status', 'upgrade',
                                 'check', '--json')
        self.assertEqual(2, result.returncode, result.stderr)
        # Only the JSON document on standard output; logs go to stderr.
        report = json.loads(result.stdout)
        self.assertEqual('Upgrade Check Results', report['name'])
        checks = {check['check']: check for check in report['checks']}
        self.assertEqual(2, checks['Database schema']['result'])
        self.assertIn('has no schema', checks['Database schema']['details'])
        self.assertIn('Engines and workers', checks)

    def test_unreachable_database_is_one_line(self):
        with open(self.config, 'w') as stream:
            stream.write('[database]\nmax_retries = 0\nconnection = '
                         'mysql+pymysql://nobody:secret@127.0.0.1:9/x\n')
        result = self.run_script('dbaas-scheduler-status', 'upgrade',
                                 'check', '--json')
        self.assertEqual(255, result.returncode)
        self.assertEqual('', result.stdout)
        lines = result.stderr.strip().splitlines()
        self.assertEqual(1, len(lines), result.stderr)
        self.assertTrue(lines[0].startswith('dbaas-scheduler-status: '),
                        lines[0])
        self.assertNotIn('secret', result.stderr)


class TestUpgradePathSQLite(_UpgradePath, base.TestCase):

    def database_url(self):
        return 'sqlite:///%s' % os.path.join(self.state, 'db.sqlite')


class _ServerDatabase(_UpgradePath, db_fixtures.DatabaseMixin):
    FIXTURE = db_fixtures.EmptyDatabase

    def database_url(self):
        return self.engine.url.render_as_string(hide_password=False)


class TestUpgradePathMySQL(_ServerDatabase, base.TestCase):
    DRIVER = 'mysql'


class TestUpgradePathPostgreSQL(_ServerDatabase, base.TestCase):
    DRIVER = 'postgresql'
