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
"""Whether a job process still runs, by pid and start time."""

import os
import subprocess
import time

from oslotest import base as oslotest_base

from dbaas_scheduler.backends.local import job_control
from dbaas_scheduler.tests.unit.backends.local import fakes


class TestJobAlive(oslotest_base.BaseTestCase):

    def test_this_process_is_alive(self):
        pid = os.getpid()
        self.assertTrue(job_control.job_alive(pid))
        self.assertTrue(job_control.job_alive(
            pid, job_control.process_start_time(pid)))

    def test_no_pid_or_no_process(self):
        self.assertFalse(job_control.job_alive(None))
        self.assertFalse(job_control.job_alive(fakes.DEAD_PID))

    def test_a_reused_pid_is_not_the_job(self):
        pid = os.getpid()
        started = job_control.process_start_time(pid)
        if started is None:
            self.skipTest('no /proc on this system')
        self.assertFalse(job_control.job_alive(pid, started - 1))

    def test_a_zombie_has_finished(self):
        if job_control.process_start_time(os.getpid()) is None:
            self.skipTest('no /proc on this system')
        process = subprocess.Popen(['true'])
        self.addCleanup(process.wait)
        deadline = time.monotonic() + 10
        while job_control._proc_stat(process.pid)[0] != 'Z':
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.01)
        self.assertFalse(job_control.job_alive(process.pid))
