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
"""The container's entry point running a long-lived service, as a runtime.

``entrypoint.sh all`` with a mounted-style configuration file: the program
replaces the shell (so the container's SIGTERM reaches it), serves, and
stops gracefully on SIGTERM with status 0, as ``docker stop`` needs.
"""

import os
import signal
import subprocess
import sys
import urllib.request

import fixtures
from testtools import content

from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.unit import test_container


class TestEntrypointService(base.TestCase):

    def setUp(self):
        super().setUp()
        self.dir = self.useFixture(fixtures.TempDir()).path
        self.port = ports.free_port()
        config = os.path.join(self.dir, 'dbaas-scheduler.conf')
        process_fixtures.write_config(config, {
            'DEFAULT': {'state_path': os.path.join(self.dir, 'state'),
                        'use_stderr': 'true'},
            'api': {'bind_host': '127.0.0.1', 'bind_port': self.port},
        })
        env = dict(os.environ, DBAAS_SCHEDULER_CONFIG=config,
                   DBAAS_SCHEDULER_SERVICE='all',
                   XDG_STATE_HOME=self.dir)
        env['PATH'] = os.pathsep.join([os.path.dirname(sys.executable),
                                       env.get('PATH', '')])
        self.log = os.path.join(self.dir, 'all.log')
        with open(self.log, 'wb') as log:
            self.process = subprocess.Popen(
                ['sh', str(test_container.ENTRYPOINT)], env=env,
                stdout=log, stderr=subprocess.STDOUT,
                start_new_session=True)
        self.addCleanup(self._kill)
        self.addOnException(self._attach_log)

    def _kill(self):
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def _attach_log(self, exc_info):
        with open(self.log, errors='replace') as f:
            self.addDetail('all.log', content.text_content(f.read()[-20000:]))

    def _healthy(self):
        try:
            with urllib.request.urlopen(
                    'http://127.0.0.1:%d/healthcheck' % self.port,
                    timeout=5) as response:
                return response.status == 200
        except OSError:
            return False

    def test_serves_then_stops_on_sigterm(self):
        self.assertTrue(process_fixtures.wait_until(self._healthy, 90),
                        'no answer on /healthcheck within 90 s')
        # exec: the container's first process is the program, not sh.
        with open('/proc/%d/cmdline' % self.process.pid, 'rb') as f:
            command = f.read().replace(b'\0', b' ')
        self.assertIn(b'dbaas-scheduler-all', command)
        self.assertIn(b'--config-file', command)
        self.assertNotIn(b'entrypoint.sh', command)
        self.process.send_signal(signal.SIGTERM)
        self.assertEqual(0, self.process.wait(90))
        self.assertFalse(self._healthy())
