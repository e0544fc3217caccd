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
"""Guru Meditation Reports: SIGUSR2 reports, and nothing dies of it.

Each program runs as a real process: the oslo.service launcher and the
child it forks.  SIGUSR2 to either writes a report (to stderr, or into
``[oslo_reports] log_dir``), and both live on; a change to the file of
``[oslo_reports] file_event_handler`` makes the child report too.
"""

import os
import signal
import sys
import time

import fixtures
from testtools import content

from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures

HEADER = 'Guru Meditation'


def _children(pid):
    """The child processes of ``pid``, whichever of its threads forked."""
    children = []
    try:
        tasks = os.listdir('/proc/%d/task' % pid)
    except OSError:
        return children
    for task in tasks:
        try:
            with open('/proc/%d/task/%s/children' % (pid, task)) as stream:
                children.extend(int(child) for child in stream.read().split())
        except OSError:
            pass
    return sorted(children)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is no longer alive.
    with open('/proc/%d/stat' % pid) as stream:
        return stream.read().split(') ', 1)[1][0] != 'Z'


class TestReports(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.trigger = os.path.join(self.tempdir, 'gmr-trigger')
        open(self.trigger, 'w').close()

    def start(self, module, messaging=True, **reports):
        sections = {
            'DEFAULT': {'state_path': os.path.join(self.tempdir, 'state'),
                        'auth_strategy': 'noauth'},
            'database': {'connection': 'sqlite:///%s' % os.path.join(
                self.tempdir, 'db.sqlite')},
            'api': {'bind_host': '127.0.0.1',
                    'bind_port': ports.free_port()},
            'oslo_reports': reports,
        }
        if messaging:
            fixture = self.useFixture(
                messaging_fixtures.Messaging(self, self.conf))
            sections['DEFAULT'].update(rpc_transport='oslo',
                                       transport_url=fixture.url)
            sections['worker'] = {'topic': self.conf.worker.topic}
            sections['engine'] = {'topic': self.conf.engine.topic}
        config = os.path.join(self.tempdir, '%s.conf' % module)
        process_fixtures.write_config(config, sections)
        if module != 'all':
            # The schema, as the deployment makes it before the services.
            self.assertEqual(0, os.spawnv(os.P_WAIT, self._bin('manage'), [
                'manage', '--config-file', config, 'db', 'sync']))
        log = os.path.join(self.tempdir, '%s.log' % module)
        process = self.useFixture(process_fixtures.ServiceProcess(
            module, config, log))
        self.addOnException(lambda exc_info: self.addDetail(
            '%s.log' % module, content.text_content(process.log()[-20000:])))
        self.assertTrue(process_fixtures.wait_until(
            lambda: 'started on' in process.log(), 90),
            '%s did not start' % module)
        children = _children(process.process.pid)
        self.assertEqual(1, len(children), children)
        return process, children[0]

    @staticmethod
    def _bin(name):
        return os.path.join(os.path.dirname(sys.executable),
                            'dbaas-scheduler-%s' % name)

    def assert_reports_and_lives(self, process, child, count):
        """SIGUSR2 to the child, then to the launcher: two more reports."""
        for pid in (child, process.process.pid):
            os.kill(pid, signal.SIGUSR2)
            count += 1
            self.assertTrue(process_fixtures.wait_until(
                lambda: process.log().count(HEADER) >= count, 30),
                'no report from %d' % pid)
        time.sleep(1)
        self.assertTrue(process.alive())
        self.assertTrue(_alive(child))
        # Not a new child: the same one, still running.
        self.assertEqual([child], _children(process.process.pid))
        return count

    def _check(self, module, messaging=True):
        process, child = self.start(module, messaging=messaging)
        count = self.assert_reports_and_lives(process, child, 0)
        log = process.log()
        self.assertIn('Threads', log)
        self.assertIn('Configuration', log)
        # Again: a handler that fires once only would not do.
        self.assert_reports_and_lives(process, child, count)
        # And it still stops cleanly.
        self.assertEqual(0, process.terminate())

    def test_worker(self):
        self._check('worker')

    def test_engine(self):
        self._check('engine')

    def test_api(self):
        self._check('api', messaging=False)

    def test_all_in_one(self):
        self._check('all', messaging=False)

    def test_log_dir_and_file_trigger(self):
        reports = os.path.join(self.tempdir, 'reports')
        os.mkdir(reports)
        process, child = self.start(
            'all', messaging=False, log_dir=reports,
            file_event_handler=self.trigger, file_event_handler_interval=1)
        os.kill(child, signal.SIGUSR2)
        self.assertTrue(process_fixtures.wait_until(
            lambda: len(os.listdir(reports)) >= 1, 30))
        # A second later, for the report's file name (to the second).
        time.sleep(1.1)
        os.utime(self.trigger)
        self.assertTrue(process_fixtures.wait_until(
            lambda: len(os.listdir(reports)) >= 2, 30),
            os.listdir(reports))
        for name in os.listdir(reports):
            self.assertTrue(name.startswith('dbaas-scheduler-'), name)
            with open(os.path.join(reports, name)) as stream:
                self.assertIn(HEADER, stream.read())
        self.assertNotIn(HEADER, process.log())
        self.assertTrue(_alive(child))
        self.assertEqual(0, process.terminate())
