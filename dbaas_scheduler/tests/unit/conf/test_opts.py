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
"""The generated sample configuration and the option help texts."""

import io
import json
import os
import subprocess
import sys

import fixtures
from oslo_config import cfg
from oslo_config import generator

from dbaas_scheduler.conf import default
from dbaas_scheduler.conf import opts
from dbaas_scheduler.tests import base

_GENERATOR_CONF = os.path.join(
    os.path.dirname(__file__), '..', '..', '..', '..', 'etc',
    'dbaas-scheduler', 'dbaas-scheduler-config-generator.conf')


class TestSampleConfig(base.TestCase):

    def _generate(self):
        conf = cfg.ConfigOpts()
        generator.register_cli_opts(conf)
        conf(['--config-file', _GENERATOR_CONF], project='dbaas-scheduler')
        output = io.StringIO()
        generator.generate(conf, output_file=output)
        return output.getvalue()

    def test_sample_has_the_groups(self):
        sample = self._generate()
        for section in ('[DEFAULT]', '[database]', '[api]', '[engine]',
                        '[worker]', '[upgrade_levels]'):
            self.assertIn(section, sample)
        self.assertIn('#engine = <None>', sample)

    def test_sample_shows_the_embedded_default(self):
        sample = self._generate()
        self.assertIn(
            '#connection = sqlite:///$state_path/dbaas_scheduler.sqlite',
            sample)
        self.assertIn('#state_path = $XDG_STATE_HOME/dbaas-scheduler',
                      sample)
        # Host-specific values never leak into the sample.
        self.assertIn('#host = <current hostname>', sample)


class TestOptionHelp(base.TestCase):

    def test_every_option_documents_its_default(self):
        for group, options in opts.list_opts():
            if str(group) in ('database', 'service_credentials'):
                continue  # oslo.db's and keystoneauth1's own options
            for opt in options:
                self.assertGreater(len(opt.help), 80, opt.name)
                self.assertIn('Default', opt.help, opt.name)


class TestEmbeddedDefault(base.TestCase):

    def test_sqlite_under_state_path(self):
        self.flags(state_path='/srv/state')
        self.assertEqual('sqlite:////srv/state/dbaas_scheduler.sqlite',
                         self.conf.database.connection)

    def test_state_path_follows_xdg(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'XDG_STATE_HOME', '/tmp/xdg'))
        self.assertEqual('/tmp/xdg/dbaas-scheduler',
                         default.default_state_path())


# Imports every module of the package but the tests and the programs' entry
# points that configure the process on import (the WSGI application, the
# alembic environment), then prints what cfg.CONF holds.
_IMPORT_EVERYTHING = """
import importlib
import json
import pkgutil

import dbaas_scheduler.tests  # the threading backend, as the programs do
import dbaas_scheduler
from oslo_config import cfg

skip = ('dbaas_scheduler.tests', 'dbaas_scheduler.wsgi.api',
        'dbaas_scheduler.db.migration.env',
        'dbaas_scheduler.db.migration.versions')
for info in pkgutil.walk_packages(dbaas_scheduler.__path__,
                                  'dbaas_scheduler.'):
    if not info.name.startswith(skip):
        importlib.import_module(info.name)
print(json.dumps(sorted(cfg.CONF.keys())))
"""


class TestNoRegistrationOnImport(base.TestCase):

    def test_importing_the_package_registers_nothing_on_cfg_conf(self):
        result = subprocess.run([sys.executable, '-c', _IMPORT_EVERYTHING],
                                capture_output=True, text=True, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr)
        registered = set(json.loads(result.stdout.splitlines()[-1]))
        ours = set()
        for group, options in opts.list_opts():
            if str(group) == 'DEFAULT':
                ours.update(option.dest for option in options)
            else:
                ours.add(str(group))
        self.assertEqual(set(), ours & registered)
