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
"""dbaas-scheduler-worker refuses a configuration it cannot fence."""

import os
import subprocess
import sys

import fixtures

from dbaas_scheduler.tests import base


class TestWorkerCommand(base.TestCase):

    def test_a_backend_timeout_beyond_the_lease_is_refused(self):
        tempdir = self.useFixture(fixtures.TempDir()).path
        config = os.path.join(tempdir, 'worker.conf')
        with open(config, 'w') as stream:
            stream.write('[DEFAULT]\n'
                         'transport_url = rabbit://nobody@127.0.0.1:1/\n'
                         '[database]\n'
                         'connection = sqlite:///%s/db.sqlite\n'
                         '[worker]\n'
                         'lease_duration = 45\n'
                         '[service_credentials]\n'
                         'timeout = 50\n' % tempdir)
        done = subprocess.run(
            [sys.executable, '-c',
             'import sys; from dbaas_scheduler.cmd import worker as m; '
             'sys.exit(m.main())', '--config-file', config],
            capture_output=True, text=True, timeout=120)
        self.assertEqual(1, done.returncode)
        self.assertEqual(
            ['dbaas-scheduler-worker: Invalid configuration: [worker] '
             'lease_duration (45 s) must be longer than one request of the '
             'trove backend may take (50 s, [service_credentials] '
             'timeout): raise lease_duration or lower the timeout.'],
            done.stderr.splitlines())
