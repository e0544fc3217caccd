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
import os

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
                        '[worker]'):
            self.assertIn(section, sample)

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
