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
"""devstack/smoke.sh, the gate job's commands, against a local service.

The script's ``openstack`` commands run for real (the client's
virtualenv, see client_venv.py) against a dbaas-scheduler-all of the test
(no Keystone: ``--os-auth-type none``), so that they are exercised here
even without devstack.
"""

import os
import pathlib
import subprocess

from testtools import content

from dbaas_scheduler.tests.functional.osc import test_cli

SMOKE = (pathlib.Path(__file__).resolve().parents[4] / 'devstack'
         / 'smoke.sh')


class TestSmokeScript(test_cli.CLITestCase):

    def test_smoke_script_passes(self):
        openstack = '%s --os-auth-type none --os-endpoint %s' % (
            os.path.join(self.openstack.venv, 'bin', 'openstack'), self.url)
        env = dict(self.openstack.env, OPENSTACK=openstack,
                   SMOKE_TIMEOUT='240')
        result = subprocess.run(['bash', str(SMOKE)], capture_output=True,
                                text=True, env=env,
                                timeout=test_cli.COMMAND_TIMEOUT * 3)
        self.addDetail('smoke.sh', content.text_content(
            result.stdout + result.stderr))
        self.assertEqual(0, result.returncode, result.stderr[-3000:])
        self.assertIn('SMOKE OK: policy ', result.stdout)
        for step in ('create the policy', 'pause and resume', 'run it now',
                     'delete it'):
            self.assertIn('== ' + step, result.stdout)
        # Nothing left behind but the execution, kept as history.
        self.assertEqual([], self.json('database', 'backup', 'policy',
                                       'list'))

    def test_a_failing_step_fails_the_script(self):
        # The service refuses the backend: the first step fails, loudly.
        openstack = '%s --os-auth-type none --os-endpoint %s' % (
            os.path.join(self.openstack.venv, 'bin', 'openstack'), self.url)
        env = dict(self.openstack.env, OPENSTACK=openstack,
                   SMOKE_BACKEND='no-such-backend')
        result = subprocess.run(['bash', str(SMOKE)], capture_output=True,
                                text=True, env=env,
                                timeout=test_cli.COMMAND_TIMEOUT)
        self.assertNotEqual(0, result.returncode, result.stdout)
        self.assertNotIn('SMOKE OK', result.stdout)
