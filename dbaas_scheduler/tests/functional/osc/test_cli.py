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
"""The real ``openstack`` command against a real dbaas-scheduler-all.

The service runs as its own process on SQLite, without Keystone
(``auth_strategy = noauth``) and with the in-memory hand-over from engine
to worker; policies use the fake backend, so backups take a second.  The
client is reached as users reach the all-in-one process:
``openstack --os-auth-type none --os-endpoint http://127.0.0.1:<port>``.
"""

import datetime
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import fixtures
from testtools import content

from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional import process_fixtures

# One openstack command loads every installed client plugin; on a busy
# machine that alone takes seconds.
COMMAND_TIMEOUT = 300


def free_port():
    with socket.socket() as sock:
        sock.bind(('127.0.0.1', 0))
        return sock.getsockname()[1]


def answers(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


class OpenStackCommand(fixtures.Fixture):
    """``openstack``, without the tester's OS_* variables and clouds.yaml."""

    def __init__(self, endpoint):
        super().__init__()
        self.endpoint = endpoint

    def _setUp(self):
        home = self.useFixture(fixtures.TempDir()).path
        self.env = {name: value for name, value in os.environ.items()
                    if not name.startswith('OS_')}
        self.env.update(HOME=home, XDG_CONFIG_HOME=home)
        self.calls = []

    def __call__(self, *args, env=None):
        argv = [sys.executable, '-m', 'openstackclient.shell']
        if self.endpoint:
            argv += ['--os-auth-type', 'none', '--os-endpoint', self.endpoint]
        argv += list(args)
        result = subprocess.run(argv, capture_output=True, text=True,
                                env=dict(self.env, **(env or {})),
                                timeout=COMMAND_TIMEOUT)
        self.calls.append('$ %s\n[%d]\n%s%s' % (
            ' '.join(args), result.returncode, result.stdout, result.stderr))
        return result


class CLITestCase(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.port = free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        config = os.path.join(self.tempdir, 'dbaas-scheduler.conf')
        process_fixtures.write_config(config, {
            'DEFAULT': {'state_path': self.tempdir,
                        'auth_strategy': 'noauth',
                        'heartbeat_interval': 1},
            'api': {'bind_port': self.port, 'min_schedule_interval': 60},
            'engine': {'scan_interval': 0.2, 'sweep_interval': 1},
            'worker': {'poll_interval': 0.2},
        })
        self.service = self.useFixture(process_fixtures.ServiceProcess(
            'all', config, os.path.join(self.tempdir, 'all.log')))
        self.openstack = self.useFixture(OpenStackCommand(self.url))
        self.addOnException(self._attach_logs)
        up = process_fixtures.wait_until(
            lambda: not self.service.alive() or answers(self.url + '/'), 120,
            0.2)
        self.assertTrue(up and self.service.alive(),
                        'dbaas-scheduler-all did not start')

    def _attach_logs(self, exc_info):
        self.addDetail('dbaas-scheduler-all.log',
                       content.text_content(self.service.log()[-20000:]))
        self.addDetail('openstack commands', content.text_content(
            '\n'.join(self.openstack.calls)))

    def ok(self, *args):
        """stdout of a command that must succeed."""
        result = self.openstack(*args)
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        return result.stdout

    def json(self, *args):
        return json.loads(self.ok(*(args + ('-f', 'json'))))

    def fails(self, *args, **kwargs):
        """stderr of a command that must fail, without a traceback."""
        result = self.openstack(*args, **kwargs)
        self.assertNotEqual(0, result.returncode, result.stdout)
        self.assertNotIn('Traceback', result.stderr)
        return result.stderr


class TestPolicyLifecycle(CLITestCase):

    def test_policy_from_creation_to_deletion(self):
        policy = self.json(
            'database', 'backup', 'policy', 'create', '--instance', 'inst-1',
            '--schedule-type', 'interval', '--schedule', '60',
            '--backend', 'fake', '--name', 'cli-test',
            '--backup-param', 'fake_build_seconds=1',
            '--backup-param', 'incremental=true',
            '--end-at', '2030-01-01T00:00:00Z', '--remaining-runs', '50',
            '--keep-last', '2')
        policy_id = policy['ID']
        self.assertEqual(
            ('cli-test', 'inst-1', 'fake', 'interval', '60', 'UTC', True,
             '2030-01-01T00:00:00Z', 50, 2),
            (policy['Name'], policy['Instance ID'], policy['Backend'],
             policy['Schedule Type'], policy['Schedule'],
             policy['Time Zone'], policy['Enabled'], policy['End At'],
             policy['Remaining Runs'], policy['Keep Last']))
        self.assertEqual({'fake_build_seconds': '1', 'incremental': True},
                         policy['Backup Params'])
        self.assertTrue(policy['Next Execution Time'].endswith('Z'))

        # The list in every format.
        listed = self.json('database', 'backup', 'policy', 'list')
        self.assertEqual([(policy_id, 'cli-test', 'interval', True)],
                         [(p['ID'], p['Name'], p['Schedule Type'],
                           p['Enabled']) for p in listed])
        self.assertEqual(policy_id, self.ok(
            'database', 'backup', 'policy', 'list', '-f', 'value',
            '-c', 'ID').strip())
        table = self.ok('database', 'backup', 'policy', 'list', '--long')
        self.assertIn('| Instance ID ', table)
        self.assertIn('| Keep Last ', table)
        self.assertIn("fake_build_seconds='1'", table)

        # set changes what it is given, and removes values.
        self.assertEqual('', self.ok(
            'database', 'backup', 'policy', 'set', policy_id,
            '--description', 'made by the CLI test', '--timezone',
            'Asia/Tokyo', '--no-end-at', '--no-remaining-runs',
            '--keep-daily', '7', '--backup-param', 'incremental=false'))
        policy = self.json('database', 'backup', 'policy', 'show', policy_id)
        self.assertEqual(
            ('made by the CLI test', 'Asia/Tokyo', None, None, 2, 7),
            (policy['Description'], policy['Time Zone'], policy['End At'],
             policy['Remaining Runs'], policy['Keep Last'],
             policy['Keep Daily']))
        self.assertEqual({'fake_build_seconds': '1', 'incremental': False},
                         policy['Backup Params'])

        # The next runs, 60 s apart, with the local time in Tokyo.
        runs = self.json('database', 'backup', 'policy', 'next-runs',
                         policy_id, '--count', '3')
        self.assertEqual(3, len(runs))
        times = [datetime.datetime.fromisoformat(
            run['Run Time'].replace('Z', '+00:00')) for run in runs]
        self.assertEqual([60, 60], [(b - a).total_seconds()
                                    for a, b in zip(times, times[1:])])
        for moment, run in zip(times, runs):
            self.assertTrue(run['Local Time'].endswith('+09:00'), run)
            self.assertEqual(moment, datetime.datetime.fromisoformat(
                run['Local Time']))

        # Pause and resume.
        self.ok('database', 'backup', 'policy', 'pause', policy_id,
                '--reason', 'maintenance window')
        self.assertEqual(policy_id, self.ok(
            'database', 'backup', 'policy', 'list', '--disabled',
            '-f', 'value', '-c', 'ID').strip())
        self.assertEqual('False\nmaintenance window\nNone', self.ok(
            'database', 'backup', 'policy', 'show', policy_id, '-f', 'value',
            '-c', 'Enabled', '-c', 'Paused Reason', '-c',
            'Next Execution Time').strip())
        self.ok('database', 'backup', 'policy', 'resume', policy_id)
        policy = self.json('database', 'backup', 'policy', 'show', policy_id)
        self.assertEqual((True, None),
                         (policy['Enabled'], policy['Paused Reason']))
        self.assertIsNotNone(policy['Next Execution Time'])

        # Run now: a manual execution, which the worker takes.
        started = self.json('database', 'backup', 'policy', 'run', policy_id)
        self.assertEqual((policy_id, 'inst-1', 'manual'),
                         (started['Policy ID'], started['Instance ID'],
                          started['Trigger']))

        def succeeded():
            listed = self.json(
                'database', 'backup', 'policy', 'execution', 'list',
                '--policy', policy_id, '--status', 'succeeded')
            return [e for e in listed if e['ID'] == started['ID']]
        self.assertTrue(process_fixtures.wait_until(succeeded, 300, 1),
                        'the manual execution did not succeed')

        execution = self.json('database', 'backup', 'policy', 'execution',
                              'show', started['ID'])
        self.assertEqual(('SUCCEEDED', 'manual', policy_id),
                         (execution['Status'], execution['Trigger'],
                          execution['Policy ID']))
        self.assertIsNotNone(execution['Backup ID'])
        self.assertIsNotNone(execution['Finished At'])
        self.assertIsInstance(execution['Deleted Backups'], list)
        self.assertIn(started['ID'], self.ok(
            'database', 'backup', 'policy', 'execution', 'list', '--long',
            '--instance', 'inst-1', '-f', 'value', '-c', 'ID').split())

        # Delete: the policy is gone, its executions stay as history.
        self.assertEqual('', self.ok('database', 'backup', 'policy',
                                     'delete', policy_id))
        self.assertIn('Backup policy %s could not be found.' % policy_id,
                      self.fails('database', 'backup', 'policy', 'show',
                                 policy_id))
        self.assertEqual('SUCCEEDED', self.json(
            'database', 'backup', 'policy', 'execution', 'show',
            started['ID'])['Status'])


class TestErrors(CLITestCase):

    def test_errors_are_the_api_message_without_traceback(self):
        stderr = self.fails('database', 'backup', 'policy', 'create',
                            '--instance', 'inst-1', '--backend', 'fake',
                            '--schedule', 'every night')
        self.assertEqual(
            "Invalid cron expression 'every night': a cron expression has "
            "5 fields (minute hour day-of-month month day-of-week), got 2.",
            stderr.strip())

        self.assertIn(
            'runs every 30 seconds at the closest, more often than the '
            'minimum of 60 seconds', self.fails(
                'database', 'backup', 'policy', 'create', '--instance',
                'inst-1', '--backend', 'fake', '--schedule-type',
                'interval', '--schedule', '30'))

        self.assertEqual('Execution no-such-execution could not be found.',
                         self.fails('database', 'backup', 'policy',
                                    'execution', 'show',
                                    'no-such-execution').strip())

        stderr = self.fails('database', 'backup', 'policy', 'delete',
                            'no-such-policy', 'other-policy')
        self.assertIn('Failed to delete backup policy no-such-policy: '
                      'Backup policy no-such-policy could not be found.',
                      stderr)
        self.assertIn('Failed to delete 2 of 2 backup policies.', stderr)
        self.assertEqual([], self.json('database', 'backup', 'policy',
                                       'list'))

        # The API's URL from the environment instead of --os-endpoint.
        self.openstack.endpoint = None
        self.assertEqual(
            'Backup policy no-such-policy could not be found.',
            self.fails('--os-auth-type', 'none', 'database', 'backup',
                       'policy', 'show', 'no-such-policy',
                       env={'OS_BACKUP_SCHEDULER_URL': self.url}).strip())


class TestNoService(base.TestCase):

    def test_nobody_listens(self):
        openstack = self.useFixture(OpenStackCommand(
            'http://127.0.0.1:%d' % free_port()))
        started = time.monotonic()
        result = openstack('database', 'backup', 'policy', 'list')
        self.assertEqual(1, result.returncode)
        self.assertIn('Unable to establish connection to '
                      'http://127.0.0.1:', result.stderr)
        self.assertNotIn('Traceback', result.stderr)
        self.assertLess(time.monotonic() - started, COMMAND_TIMEOUT)
