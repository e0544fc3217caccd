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
"""The container image: its entry point, run for real, and its Dockerfile.

The image cannot be built here (no base image registry); what it is made
of can be checked: the entry point script runs the programs of this
checkout with a configuration file of the test's, and every file the
Dockerfile copies or runs exists.
"""

import configparser
import fnmatch
import os
import pathlib
import re
import shlex
import subprocess
import sys

import fixtures

from dbaas_scheduler.db import migration
from dbaas_scheduler.tests import base

ROOT = pathlib.Path(__file__).resolve().parents[3]
CONTAINER = ROOT / 'tools' / 'container'
ENTRYPOINT = CONTAINER / 'entrypoint.sh'
DOCKERFILE = CONTAINER / 'Dockerfile'
SERVICES = ('api', 'engine', 'worker', 'all', 'manage', 'status')


def run_entrypoint(*args, env=None, timeout=120):
    """``sh entrypoint.sh ARGS``, with this checkout's programs on PATH."""
    environment = dict(os.environ)
    environment.pop('DBAAS_SCHEDULER_SERVICE', None)
    environment['PATH'] = os.pathsep.join(
        [os.path.dirname(sys.executable), environment.get('PATH', '')])
    environment.update(env or {})
    return subprocess.run(['sh', str(ENTRYPOINT)] + list(args),
                          capture_output=True, text=True, env=environment,
                          timeout=timeout)


class TestEntrypoint(base.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.config = os.path.join(self.dir, 'dbaas-scheduler.conf')
        self.database = os.path.join(self.dir, 'dbaas_scheduler.sqlite')
        with open(self.config, 'w') as f:
            f.write('[DEFAULT]\nstate_path = %s\n'
                    '[database]\nconnection = sqlite:///%s\n'
                    % (self.dir, self.database))
        self.env = {'DBAAS_SCHEDULER_CONFIG': self.config,
                    'DBAAS_SCHEDULER_CONFIG_DIR':
                        os.path.join(self.dir, 'conf.d'),
                    'XDG_STATE_HOME': self.dir}

    def run_it(self, *args, **env):
        return run_entrypoint(*args, env=dict(self.env, **env))

    def test_unknown_service_is_refused(self):
        for name in ('bogus', 'dbaas-scheduler-api', 'API', 'sh', '-c'):
            result = self.run_it(name, 'true')
            self.assertEqual(64, result.returncode, name)
            self.assertIn("Unknown service '%s'" % name, result.stderr)
            self.assertIn('api|engine|worker|all|manage|status',
                          result.stderr)
            self.assertEqual('', result.stdout)

    def test_no_service_is_refused(self):
        result = self.run_it()
        self.assertEqual(64, result.returncode)
        self.assertIn('No service given', result.stderr)

    def test_missing_configuration_is_refused(self):
        result = self.run_it('manage', 'db', 'version',
                             DBAAS_SCHEDULER_CONFIG=self.config + '.nope')
        self.assertEqual(78, result.returncode)
        self.assertIn('%s.nope is missing' % self.config, result.stderr)
        self.assertFalse(os.path.exists(self.database))

    def test_manage_db_upgrade_then_version(self):
        result = self.run_it('manage', 'db', 'version')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('<empty', result.stdout)
        result = self.run_it('manage', 'db', 'upgrade')
        self.assertEqual(0, result.returncode, result.stderr)
        # The database of the mounted configuration file, nowhere else.
        self.assertTrue(os.path.exists(self.database))
        result = self.run_it('manage', 'db', 'version')
        self.assertEqual((0, migration.head()),
                         (result.returncode, result.stdout.strip()))

    def test_status_runs_the_upgrade_check_by_default(self):
        before = self.run_it('status')
        self.assertNotEqual(0, before.returncode, before.stdout)
        self.assertIn('Upgrade Check Results', before.stdout)
        self.assertEqual(0, self.run_it('manage', 'db', 'upgrade').returncode)
        # The service from the environment, as a container's would be.
        after = self.run_it(DBAAS_SCHEDULER_SERVICE='status')
        # Current schema, nothing running yet: success or a warning, what
        # kolla-ansible accepts.
        self.assertIn(after.returncode, (0, 1), after.stdout)
        self.assertIn('Database schema', after.stdout)
        explicit = self.run_it('status', 'upgrade', 'check')
        self.assertEqual(after.returncode, explicit.returncode)

    def test_configuration_directory_is_read_after_the_file(self):
        other = os.path.join(self.dir, 'other.sqlite')
        os.mkdir(os.path.join(self.dir, 'conf.d'))
        with open(os.path.join(self.dir, 'conf.d', 'database.conf'),
                  'w') as f:
            f.write('[database]\nconnection = sqlite:///%s\n' % other)
        result = self.run_it('manage', 'db', 'upgrade')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertTrue(os.path.exists(other))
        self.assertFalse(os.path.exists(self.database))

    def test_every_service_is_a_program(self):
        config = configparser.ConfigParser()
        config.read(ROOT / 'setup.cfg')
        scripts = {line.split('=')[0].strip() for line in
                   config['entry_points']['console_scripts'].splitlines()
                   if line.strip()}
        self.assertEqual({'dbaas-scheduler-%s' % s for s in SERVICES},
                         scripts)
        script = ENTRYPOINT.read_text()
        self.assertIn('api|engine|worker|all|manage|status)', script)
        self.assertTrue(os.access(ENTRYPOINT, os.X_OK))


def _instructions():
    """The Dockerfile's instructions, continuation lines joined."""
    lines, current = [], ''
    for line in DOCKERFILE.read_text().splitlines():
        if line.lstrip().startswith('#') and not current:
            continue
        current += line.rstrip('\\').strip() + ' '
        if not line.endswith('\\'):
            if current.strip():
                lines.append(current.strip())
            current = ''
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1])
            for line in lines]


class TestDockerfile(base.TestCase):

    def test_base_image_is_debian_python(self):
        self.assertIn(('ARG', 'BASE_IMAGE=python:3.11-slim-bookworm'),
                      _instructions())

    def test_copied_files_exist_and_are_not_ignored(self):
        ignored = [line.strip() for line in
                   (CONTAINER / 'Dockerfile.dockerignore').read_text()
                   .splitlines()
                   if line.strip() and not line.startswith('#')]
        copies = [shlex.split(args) for kind, args in _instructions()
                  if kind == 'COPY']
        self.assertTrue(copies)
        for words in copies:
            if any(word.startswith('--from') for word in words):
                continue
            for source in words[:-1]:
                path = ROOT / source
                self.assertTrue(path.exists(), source)
                for pattern in ignored:
                    self.assertFalse(
                        fnmatch.fnmatch(source.rstrip('/'), pattern),
                        '%s is excluded by %s' % (source, pattern))

    def test_entrypoint_is_the_script(self):
        instructions = _instructions()
        self.assertIn(('COPY', 'tools/container/entrypoint.sh '
                               '/usr/local/bin/dbaas-scheduler-entrypoint'),
                      instructions)
        self.assertIn(('ENTRYPOINT',
                       '["/usr/local/bin/dbaas-scheduler-entrypoint"]'),
                      instructions)
        self.assertIn(('ENV', 'PATH=/opt/dbaas-scheduler/bin:$PATH '
                              'PYTHONDONTWRITEBYTECODE=1 '
                              'PYTHONUNBUFFERED=1 '
                              'DBAAS_SCHEDULER_CONFIG=/etc/dbaas-scheduler/'
                              'dbaas-scheduler.conf '
                              'XDG_STATE_HOME=/var/lib/dbaas-scheduler'),
                      instructions)

    def test_installed_extras_exist(self):
        config = configparser.ConfigParser()
        config.read(ROOT / 'setup.cfg')
        runs = ' '.join(args for kind, args in _instructions()
                        if kind == 'RUN')
        [extras] = re.findall(r'"/src\[([a-z,]+)\]"', runs)
        for extra in extras.split(','):
            self.assertIn(extra, config['extras'])

    def test_the_no_eventlet_check_passes_here(self):
        # The build runs this check; it holds for this checkout.
        runs = [args for kind, args in _instructions() if kind == 'RUN']
        [check] = [args for args in runs if 'eventlet' in args]
        code = shlex.split(check.split('&&')[0])[2]
        result = subprocess.run([sys.executable, '-c', code],
                                capture_output=True, text=True,
                                timeout=120)
        self.assertEqual(0, result.returncode, result.stderr)
