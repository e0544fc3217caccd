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
"""The short chaos run on clusters that CI runs.

``python -m tools.chaos --cluster single-writer``: three Galera nodes
behind one writer address, three RabbitMQ nodes with quorum queues, three
engines and two workers; a few hundred policies every minute for two
minutes while engines and workers are SIGKILLed and SIGSTOPped, the
writer moves, the writer's node is SIGKILLed and rejoins, and a RabbitMQ
node is SIGKILLed and started again.  Every slot must have exactly one
execution and exactly one retained backup.  The long runs, and the
multi-writer one, are in doc/source/contributor/clusters.rst.
"""

import os
import re
import subprocess
import sys

import fixtures
import testtools
from testtools import content

from dbaas_scheduler.tests import clusters


def _figure(report, label):
    found = re.search(r'^\s*%s:\s+(\S+)' % re.escape(label), report,
                      re.MULTILINE)
    return found.group(1) if found else None


class TestChaosOnClusters(testtools.TestCase):

    def setUp(self):
        super().setUp()
        clusters.require_galera()

    def test_single_writer_short_run_holds(self):
        workdir = self.useFixture(fixtures.TempDir()).path
        # The database and broker nodes run as their system users when
        # started by root: let them in.
        os.chmod(workdir, 0o755)
        command = [sys.executable, '-m', 'tools.chaos', '--cluster',
                   'single-writer', '--policies', '200', '--minutes', '2',
                   '--seed', '7', '--kill-every', '20', '--stop-every',
                   '40', '--writer-move-at', '0.3',
                   '--broker-restart-at', '0.5',
                   '--database-restart-at', '0.7', '--workdir', workdir]
        done = subprocess.run(command, capture_output=True, text=True,
                              timeout=1200)
        report_path = os.path.join(workdir, 'report.txt')
        report = ''
        if os.path.exists(report_path):
            with open(report_path) as stream:
                report = stream.read()
        self.addDetail('report', content.text_content(report))
        self.addDetail('output', content.text_content(
            done.stdout[-20000:] + done.stderr[-20000:]))
        faults_path = os.path.join(workdir, 'faults.log')
        if os.path.exists(faults_path):
            with open(faults_path) as stream:
                self.addDetail('faults', content.text_content(stream.read()))
        self.assertEqual(0, done.returncode)
        self.assertEqual('0', _figure(report, 'slots lost'))
        self.assertEqual('0', _figure(
            report, 'slots with more than one retained backup'))
        self.assertEqual('0', _figure(report, 'executions left non-terminal'))
        self.assertEqual('HOLDS', _figure(report, 'verdict'))
        # Every fault happened: the run is not a quiet one.
        events = _figure(report, 'fault events') or ''
        self.assertIn('writer moved', report)
        self.assertIn('database restart', report)
        self.assertIn('RabbitMQ restart', report)
        self.assertTrue(events)
