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
"""The ``[coverage]`` options: their bounds."""

import os

import fixtures
from oslo_config import cfg

from dbaas_scheduler.conf import coverage
from dbaas_scheduler.tests import base


class TestBounds(base.TestCase):

    def _load(self, text):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'dbaas-scheduler.conf')
        with open(path, 'w') as stream:
            stream.write('[coverage]\n' + text)
        self.conf(['--config-file', path], project='dbaas-scheduler',
                  default_config_files=[])
        return self.conf.coverage

    def test_every_number_has_an_upper_bound(self):
        for opt in coverage.coverage_opts:
            self.assertIsNotNone(opt.type.max, opt.name)
            self.assertGreaterEqual(opt.type.max, opt.default, opt.name)

    def test_the_largest_values_are_read(self):
        group = self._load('max_age = 316224000\nmin_daily = 1440\n'
                           'min_keep = 100000\ncounts_max_age = 604800\n')
        self.assertEqual((316224000, 1440, 100000, 604800),
                         (group.max_age, group.min_daily, group.min_keep,
                          group.counts_max_age))

    def test_a_larger_value_is_refused(self):
        for name, value in (('max_age', 316224001), ('min_daily', 1441),
                            ('min_keep', 100001),
                            ('counts_max_age', 604801)):
            self.conf.reset()
            self.conf.clear()
            group = self._load('%s = %s\n' % (name, value))
            self.assertRaises(cfg.ConfigFileValueError, getattr, group, name)
