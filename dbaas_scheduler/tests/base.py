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
"""Base test case: a private, fully registered configuration per test."""

from oslo_config import cfg
from oslo_config import fixture as config_fixture
from oslotest import base

from dbaas_scheduler import conf as dbaas_conf


class TestCase(base.BaseTestCase):
    """Every test gets ``self.conf``, a ConfigOpts with our options."""

    def setUp(self):
        super().setUp()
        conf = cfg.ConfigOpts()
        dbaas_conf.register_opts(conf)
        self.config_fixture = self.useFixture(config_fixture.Config(conf))
        self.conf = self.config_fixture.conf
        self.conf([], project='dbaas-scheduler', default_config_files=[])

    def flags(self, group=None, **kwargs):
        """Override options for the duration of the test."""
        self.config_fixture.config(group=group, **kwargs)
