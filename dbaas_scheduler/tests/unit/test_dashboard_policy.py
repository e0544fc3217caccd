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
"""The dashboard's copy of the policy rules is the service's own."""

import pathlib

from tools import dashboard_policy

from dbaas_scheduler.tests import base

ROOT = pathlib.Path(__file__).resolve().parents[3]


class TestDashboardPolicyFile(base.TestCase):

    def test_the_checked_in_file_is_up_to_date(self):
        checked_in = (ROOT / dashboard_policy.PATH).read_text()
        self.assertEqual(
            dashboard_policy.render(), checked_in,
            'run "python -m tools.dashboard_policy" after changing '
            'dbaas_scheduler/policies')

    def test_deprecated_alternatives_are_kept(self):
        rules = dict(dashboard_policy.rules())
        # What a project-scoped admin token is allowed while
        # enforce_new_defaults is False, as the service enforces it.
        self.assertIn('rule:context_is_admin',
                      rules['dbaas_scheduler:service:list'])
