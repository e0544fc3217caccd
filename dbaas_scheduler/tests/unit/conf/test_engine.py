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
"""The ``[engine]`` options, and the old names they still read."""

import os

import fixtures

from dbaas_scheduler.tests import base


class TestDeprecatedNames(base.TestCase):

    def _load(self, text):
        path = os.path.join(self.useFixture(fixtures.TempDir()).path,
                            'dbaas-scheduler.conf')
        with open(path, 'w') as stream:
            stream.write(text)
        self.conf(['--config-file', path], project='dbaas-scheduler',
                  default_config_files=[])
        return self.conf.engine

    def test_execution_retention_days_sets_purge_after_days(self):
        # The name of releases before the rename: a configuration file
        # that still uses it keeps purging after the same number of days.
        logger = self.useFixture(fixtures.FakeLogger('oslo_config.cfg'))
        engine = self._load('[engine]\nexecution_retention_days = 30\n')
        self.assertEqual(30, engine.execution_purge_after_days)
        self.assertIn('execution_retention_days', logger.output)
        self.assertIn('deprecated', logger.output)

    def test_the_new_name_wins(self):
        engine = self._load('[engine]\nexecution_retention_days = 30\n'
                            'execution_purge_after_days = 90\n')
        self.assertEqual(90, engine.execution_purge_after_days)

    def test_ninety_days_by_default(self):
        self.assertEqual(90, self._load('').execution_purge_after_days)
