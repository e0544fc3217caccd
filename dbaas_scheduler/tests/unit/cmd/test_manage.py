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
"""dbaas-scheduler-manage and -status, run as the programs they are."""

import os
import subprocess
import sys

import fixtures

from dbaas_scheduler.db import migration
from dbaas_scheduler.tests import base


def run_program(module, *args, env=None):
    """Run a console script's main() in a fresh interpreter."""
    code = ('import sys; from dbaas_scheduler.cmd import %s as m; '
            'sys.exit(m.main())' % module)
    return subprocess.run([sys.executable, '-c', code] + list(args),
                          capture_output=True, text=True, env=env,
                          timeout=120)


class TestManageDb(base.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        # No configuration file at all: the embedded default, with the
        # state directory (not yet existing) taken from XDG_STATE_HOME.
        self.env = dict(os.environ, XDG_STATE_HOME=self.state)
        self.database = os.path.join(self.state, 'dbaas-scheduler',
                                     'dbaas_scheduler.sqlite')

    def manage(self, *args):
        return run_program('manage', '--config-dir', self.state, *args,
                           env=self.env)

    def test_upgrade_creates_the_embedded_database(self):
        result = self.manage('db', 'version')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('<empty', result.stdout)

        result = self.manage('db', 'upgrade')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('from <empty> to %s' % migration.head(), result.stdout)
        self.assertTrue(os.path.exists(self.database))

        result = self.manage('db', 'version')
        self.assertEqual(migration.head(), result.stdout.strip())

    def test_upgrade_to_a_revision(self):
        result = self.manage('db', 'upgrade', '--revision', migration.head())
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertEqual(migration.head(),
                         self.manage('db', 'version').stdout.strip())

    def test_unknown_revision_is_an_error(self):
        result = self.manage('db', 'upgrade', '--revision', 'nosuchrev')
        self.assertNotEqual(0, result.returncode)
        self.assertIn('nosuchrev', result.stderr)

    def test_status_check_follows_the_schema(self):
        result = run_program('status', 'upgrade', 'check', env=self.env)
        self.assertEqual(2, result.returncode)
        self.assertIn('has no schema', result.stdout)
        self.assertEqual(0, self.manage('db', 'upgrade').returncode)
        result = run_program('status', 'upgrade', 'check', env=self.env)
        # The schema is current; no engine or worker runs: a warning (1).
        self.assertEqual(1, result.returncode, result.stdout)
        self.assertRegex(result.stdout,
                         r'Check: Database schema\s+\|\s+\| Result: Success')
        self.assertIn('No dbaas-scheduler-engine nor dbaas-scheduler-worker',
                      result.stdout.replace('\n', ' ').replace('|', '')
                      .replace('  ', ' '))


class TestManagePolicies(base.TestCase):

    def setUp(self):
        super().setUp()
        self.state = self.useFixture(fixtures.TempDir()).path
        self.env = dict(os.environ, XDG_STATE_HOME=self.state)
        config = os.path.join(self.state, 'manage.conf')
        with open(config, 'w') as stream:
            stream.write('[local_backend]\ninstances = notes:sqlite:///%s\n'
                         % os.path.join(self.state, 'notes.db'))
        self.args = ['--config-file', config]
        self.assertEqual(0, self.manage('db', 'upgrade').returncode)

    def manage(self, *args):
        return run_program('manage', *(self.args + list(args)),
                           env=self.env)

    def test_create_list_and_history(self):
        result = self.manage('policy', 'create', '--name', 'notes-nightly',
                             '--instance', 'notes', '--backend', 'local',
                             '--schedule', '30 2 * * *', '--timezone',
                             'Europe/Berlin', '--keep-last', '3')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('notes-nightly', result.stdout)
        # 02:30 in Berlin is 01:30 or 00:30 UTC; on the day clocks go
        # forward (no 02:30 that night) it runs at 03:00 CEST, 01:00 UTC.
        self.assertRegex(result.stdout, r'T0[01]:[03]0:00\+00:00')
        listing = self.manage('policy', 'list')
        self.assertIn('notes-nightly', listing.stdout)
        self.assertIn('Europe/Berlin', listing.stdout)
        history = self.manage('execution', 'list')
        self.assertEqual(0, history.returncode, history.stderr)
        self.assertIn('Scheduled (UTC)', history.stdout)

    def test_invalid_input_is_explained(self):
        result = self.manage('policy', 'create', '--instance', 'notes',
                             '--backend', 'local', '--schedule', '0 0 30 2 *')
        self.assertEqual(1, result.returncode)
        self.assertIn('never runs', result.stderr)
        result = self.manage('policy', 'create', '--instance', 'notes',
                             '--backend', 'nosuch', '--schedule', '@daily')
        self.assertEqual(1, result.returncode)
        self.assertIn("unknown backend 'nosuch'", result.stderr)
        self.assertNotIn('nosuch', self.manage('policy', 'list').stdout)
