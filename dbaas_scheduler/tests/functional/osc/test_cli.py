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
to worker; policies use the fake backend, so backups take a second, or
the local backend on a SQLite file.  The ``openstack`` program is that of
a virtualenv with only the client distribution and python-openstackclient
(:mod:`client_venv`), reached as users reach the all-in-one process:
``openstack --os-auth-type none --os-endpoint http://127.0.0.1:<port>``.
"""

import datetime
import json
import os
import signal
import sqlite3
import subprocess
import time
import urllib.request

import fixtures
from testtools import content

from dbaas_scheduler import enums
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import execution as execution_obj
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.osc import client_venv

# One openstack command loads every installed client plugin; on a busy
# machine that alone takes seconds.
COMMAND_TIMEOUT = 300


def answers(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


class OpenStackCommand(fixtures.Fixture):
    """``openstack`` of the client's virtualenv, without the tester's OS_*.

    Nor its clouds.yaml: HOME is a temporary directory.
    """

    def __init__(self, endpoint):
        super().__init__()
        self.endpoint = endpoint

    def _setUp(self):
        self.venv = client_venv.ensure()
        home = self.useFixture(fixtures.TempDir()).path
        self.env = {name: value for name, value in os.environ.items()
                    if not name.startswith('OS_')
                    and name not in ('PYTHONPATH', 'VIRTUAL_ENV')}
        self.env.update(HOME=home, XDG_CONFIG_HOME=home)
        self.calls = []

    def python(self, *args):
        """The client virtualenv's python, run with ``args``."""
        return subprocess.run(
            [os.path.join(self.venv, 'bin', 'python')] + list(args),
            capture_output=True, text=True, env=self.env, cwd='/',
            timeout=COMMAND_TIMEOUT)

    def __call__(self, *args, env=None):
        argv = [os.path.join(self.venv, 'bin', 'openstack')]
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

    # [local_backend] instances of the service, name: SQLite file name.
    instances = {}

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.port = ports.free_port()
        self.url = 'http://127.0.0.1:%d' % self.port
        self.config = os.path.join(self.tempdir, 'dbaas-scheduler.conf')
        self.write_config(self.instances)
        self.service = self.useFixture(process_fixtures.ServiceProcess(
            'all', self.config, os.path.join(self.tempdir, 'all.log')))
        self.openstack = self.useFixture(OpenStackCommand(self.url))
        self.addOnException(self._attach_logs)
        self.wait_for_the_api()

    def write_config(self, instances):
        """The service's configuration, with these local instances."""
        process_fixtures.write_config(self.config, {
            # Not set: the all-in-one process's own defaults
            # (auth_strategy = noauth, rpc_transport = none).
            'DEFAULT': {'state_path': self.tempdir,
                        'heartbeat_interval': 1},
            # noauth offers only local by default; most policies here are
            # fake (the client, without a project, is noauth's admin).
            'api': {'bind_port': self.port, 'min_schedule_interval': 60,
                    'enabled_backends': 'fake,local'},
            'engine': {'scan_interval': 0.2, 'sweep_interval': 1},
            'worker': {'poll_interval': 0.2},
            'local_backend': {'instances': ','.join(
                '%s:sqlite:///%s' % (name, os.path.join(self.tempdir, file))
                for name, file in sorted(instances.items()))},
        })

    def wait_for_the_api(self):
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
            'database', 'backup', 'policy', 'list', '--name', 'cli-test',
            '-f', 'value', '-c', 'ID').strip())
        table = self.ok('database', 'backup', 'policy', 'list', '--long')
        self.assertIn('| Instance ID ', table)
        self.assertIn('| Keep Last ', table)
        self.assertIn("fake_build_seconds='1'", table)

        # Every command takes the name as well as the ID: set changes
        # what it is given, and removes values.
        self.assertEqual('', self.ok(
            'database', 'backup', 'policy', 'set', 'cli-test',
            '--description', 'made by the CLI test', '--timezone',
            'Asia/Tokyo', '--no-end-at', '--no-remaining-runs',
            '--keep-daily', '7', '--backup-param', 'incremental=false'))
        policy = self.json('database', 'backup', 'policy', 'show',
                           'cli-test')
        self.assertEqual(
            (policy_id, 'made by the CLI test', 'Asia/Tokyo', None, None, 2,
             7),
            (policy['ID'], policy['Description'], policy['Time Zone'],
             policy['End At'], policy['Remaining Runs'], policy['Keep Last'],
             policy['Keep Daily']))
        self.assertEqual({'fake_build_seconds': '1', 'incremental': False},
                         policy['Backup Params'])
        self.assertEqual(policy, self.json('database', 'backup', 'policy',
                                           'show', policy_id))

        # The next runs, 60 s apart, with the local time in Tokyo.
        runs = self.json('database', 'backup', 'policy', 'next-runs',
                         'cli-test', '--count', '3')
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
        self.ok('database', 'backup', 'policy', 'pause', 'cli-test',
                '--reason', 'maintenance window')
        self.assertEqual(policy_id, self.ok(
            'database', 'backup', 'policy', 'list', '--disabled',
            '-f', 'value', '-c', 'ID').strip())
        self.assertEqual('False\nmaintenance window\nNone', self.ok(
            'database', 'backup', 'policy', 'show', policy_id, '-f', 'value',
            '-c', 'Enabled', '-c', 'Paused Reason', '-c',
            'Next Execution Time').strip())
        self.ok('database', 'backup', 'policy', 'resume', 'cli-test')
        policy = self.json('database', 'backup', 'policy', 'show', policy_id)
        self.assertEqual((True, None),
                         (policy['Enabled'], policy['Paused Reason']))
        self.assertIsNotNone(policy['Next Execution Time'])

        # Run now: a manual execution, which the worker takes.
        started = self.json('database', 'backup', 'policy', 'run',
                            'cli-test')
        self.assertEqual((policy_id, 'inst-1', 'manual'),
                         (started['Policy ID'], started['Instance ID'],
                          started['Trigger']))

        def succeeded():
            listed = self.json(
                'database', 'backup', 'policy', 'execution', 'list',
                '--policy', 'cli-test', '--status', 'succeeded')
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
                                     'delete', 'cli-test'))
        self.assertEqual("No backup policy with a name or ID of '%s' "
                         "exists." % policy_id,
                         self.fails('database', 'backup', 'policy', 'show',
                                    policy_id).strip())
        self.assertEqual('SUCCEEDED', self.json(
            'database', 'backup', 'policy', 'execution', 'show',
            started['ID'])['Status'])


class TestNamesAndErrors(CLITestCase):

    def create(self, name, instance='inst-1'):
        return self.json('database', 'backup', 'policy', 'create',
                         '--instance', instance, '--backend', 'fake',
                         '--schedule', '@daily', '--name', name)['ID']

    def test_names_and_errors(self):
        # A name is unique in a project: a second "orders" is refused,
        # with the ID of the first, and the name keeps naming one policy.
        first = self.create('orders')
        stderr = self.fails('database', 'backup', 'policy', 'create',
                            '--instance', 'inst-2', '--backend', 'fake',
                            '--schedule', '@daily', '--name', 'orders')
        self.assertEqual('A backup policy named "orders" already exists in '
                         'this project (%s): choose another name, or change '
                         'or delete that policy.' % first, stderr.strip())
        self.assertEqual(first, self.json(
            'database', 'backup', 'policy', 'show', 'orders')['ID'])
        second = self.create('orders-2', instance='inst-2')
        self.ok('database', 'backup', 'policy', 'pause', first)
        self.assertEqual([first], self.ok(
            'database', 'backup', 'policy', 'list', '--disabled', '-f',
            'value', '-c', 'ID').split())

        # A name nobody has fails every command, with no traceback.
        message = "No backup policy with a name or ID of 'wiki' exists."
        for command in (('show', 'wiki'), ('run', 'wiki'),
                        ('execution', 'list', '--policy', 'wiki')):
            self.assertEqual(message, self.fails(
                'database', 'backup', 'policy', *command).strip(), command)
        stderr = self.fails('database', 'backup', 'policy', 'delete',
                            'wiki', first)
        self.assertIn('Failed to delete backup policy wiki: %s' % message,
                      stderr)
        self.assertIn('Failed to delete 1 of 2 backup policies.', stderr)
        self.assertEqual([second], self.ok(
            'database', 'backup', 'policy', 'list', '-f', 'value', '-c',
            'ID').split())

        # The API's own messages.
        self.assertEqual(
            "Invalid cron expression 'every night': a cron expression has "
            "5 fields (minute hour day-of-month month day-of-week), got 2.",
            self.fails('database', 'backup', 'policy', 'create',
                       '--instance', 'inst-1', '--backend', 'fake',
                       '--schedule', 'every night').strip())
        self.assertEqual('Execution no-such-execution could not be found.',
                         self.fails('database', 'backup', 'policy',
                                    'execution', 'show',
                                    'no-such-execution').strip())

        # The API's URL from the environment instead of --os-endpoint.
        self.openstack.endpoint = None
        self.assertEqual(
            "No backup policy with a name or ID of 'no-such-policy' exists.",
            self.fails('--os-auth-type', 'none', 'database', 'backup',
                       'policy', 'show', 'no-such-policy',
                       env={'OS_BACKUP_SCHEDULER_URL': self.url}).strip())


class TestPreviewAndServices(CLITestCase):

    def test_schedule_preview_and_service_list(self):
        runs = self.json('database', 'backup', 'schedule', 'preview',
                         '--schedule', '30 2 * * *', '--timezone',
                         'Europe/Berlin', '--count', '3')
        self.assertEqual(3, len(runs))
        for run in runs:
            self.assertRegex(run['Run Time'], r'T0[01]:30:00Z$')
            self.assertRegex(run['Local Time'], r'T02:30:00\+0[12]:00$')
        self.assertEqual(2, len(self.json(
            'database', 'backup', 'schedule', 'preview', '--schedule',
            '3600', '--schedule-type', 'interval', '--count', '2')))
        self.assertEqual(
            "Invalid cron expression 'every night': a cron expression has "
            "5 fields (minute hour day-of-month month day-of-week), got 2.",
            self.fails('database', 'backup', 'schedule', 'preview',
                       '--schedule', 'every night').strip())
        result = self.openstack('database', 'backup', 'schedule', 'preview',
                                '--schedule', 'H 3 * * *', '-f', 'json')
        self.assertEqual(0, result.returncode, result.stderr)
        self.assertIn('one possible ID', result.stderr)
        # Nothing was created.
        self.assertEqual([], self.json('database', 'backup', 'policy',
                                       'list'))

        # The cluster view of the all-in-one process: one of each, up.
        def three_up():
            found = self.json('database', 'backup', 'scheduler', 'service',
                              'list', '--long')
            return found if len(found) == 3 and all(
                s['State'] == 'up' for s in found) else None
        services = process_fixtures.wait_until(three_up, 60, 0.5)
        self.assertTrue(services, 'not three services up')
        self.assertEqual(['dbaas-scheduler-api', 'dbaas-scheduler-engine',
                          'dbaas-scheduler-worker'],
                         sorted(s['Binary'] for s in services))
        # One process, the launcher's child.
        [pid] = {s['PID'] for s in services}
        self.assertNotEqual(self.service.process.pid, pid)


class TestMicroversions(CLITestCase):
    """An old client (pinned to 1.0) and a new one (negotiating)."""

    def debug(self, *args, env=None):
        """stderr of ``openstack --debug``: keystoneauth's request log."""
        result = self.openstack('--debug', *args, env=env)
        self.assertEqual(0, result.returncode, result.stderr[-2000:])
        return result.stderr

    def test_old_and_new_clients(self):
        served = json.loads(urllib.request.urlopen(self.url + '/').read())[
            'versions'][0]
        self.assertEqual('1.0', served['min_version'])
        listing = ('database', 'backup', 'policy', 'list')

        # An old client: pinned to 1.0, as a script written for it is.
        for env, option in (({}, ('--os-backup-scheduler-api-version',
                                  '1.0')),
                            ({'OS_BACKUP_SCHEDULER_API_VERSION': '1.0'},
                             ())):
            log = self.debug(*(option + listing), env=env)
            self.assertIn('OpenStack-API-Version: backup-scheduler 1.0', log)
            self.assertNotIn('is not in supported versions', log)
            # Pinned: no discovery of the version document first.
            self.assertNotIn('GET %s/ ' % self.url, log)
            self.assertNotIn('GET %s ' % self.url, log)

        # A new client: the newest version both it and the server speak,
        # read from the version document, and the server answers in it.
        log = self.debug(*listing)
        self.assertRegex(log, r'GET %s/? ' % self.url)
        newest = 'backup-scheduler %s' % served['version']
        self.assertIn('OpenStack-API-Version: %s' % newest, log)
        self.assertRegex(log, r'(?i)openstack-api-version: %s' % newest)

        # A version the client does not know fails before any request.
        self.assertIn(
            'This client speaks versions 1.0 to', self.fails(
                '--os-backup-scheduler-api-version', '1.999', *listing))
        self.assertIn("'1.x' is not a version", self.fails(
            '--os-backup-scheduler-api-version', '1.x', *listing))


class TestLocalInstances(CLITestCase):
    """The all-in-one default: the local backend, checked at create."""

    instances = {'notes': 'notes.db'}

    def setUp(self):
        super().setUp()
        for name in ('notes', 'orders'):
            database = sqlite3.connect(os.path.join(self.tempdir,
                                                    name + '.db'))
            database.execute('CREATE TABLE t (body TEXT)')
            database.execute("INSERT INTO t VALUES ('%s')" % name)
            database.commit()
            database.close()

    def create(self, instance):
        return self.openstack('database', 'backup', 'policy', 'create',
                              '--instance', instance, '--schedule',
                              '@daily', '--name', instance, '-f', 'json')

    def test_unknown_instance_then_added_with_sighup(self):
        result = self.create('orders')
        self.assertEqual(1, result.returncode, result.stdout)
        # Without the names that are configured: a tenant could read it.
        self.assertEqual(
            'The local backend cannot back up instance orders: it is not a '
            'local instance of this service; its operator configures them '
            'in [local_backend] instances (name:database-URL, then SIGHUP)',
            result.stderr.strip())
        self.assertEqual([], self.json('database', 'backup', 'policy',
                                       'list'))
        # The default backend without Keystone is local.
        self.assertEqual('local', json.loads(self.create('notes').stdout)[
            'Backend'])

        # Add the instance and reload, as the message says: no restart.
        launcher = self.service.process.pid
        self.write_config({'notes': 'notes.db', 'orders': 'orders.db'})
        os.kill(launcher, signal.SIGHUP)

        def created():
            result = self.create('orders')
            return json.loads(result.stdout) if result.returncode == 0 \
                else None
        policy = process_fixtures.wait_until(created, 60, 0.5)
        self.assertTrue(policy, 'orders was not accepted after SIGHUP')
        self.assertEqual(('orders', 'local'),
                         (policy['Instance ID'], policy['Backend']))
        self.assertEqual(launcher, self.service.process.pid)
        self.assertTrue(self.service.alive())
        self.assertIn('Option local_backend.instances changed',
                      self.service.log())

        # And it backs up.
        started = self.json('database', 'backup', 'policy', 'run', 'orders')

        def finished():
            found = self.json('database', 'backup', 'policy', 'execution',
                              'show', started['ID'])
            return found if found['Status'] in ('SUCCEEDED', 'FAILED') \
                else None
        execution = process_fixtures.wait_until(finished, 120, 0.5)
        self.assertTrue(execution, 'the backup did not finish')
        self.assertEqual('SUCCEEDED', execution['Status'],
                         execution['Fault'])


class TestClientDistribution(base.TestCase):
    """What the client's virtualenv holds, and its fields against ours."""

    def setUp(self):
        super().setUp()
        self.openstack = self.useFixture(OpenStackCommand(None))

    def test_the_client_stands_without_the_service(self):
        result = self.openstack.python('-c', 'import dbaas_scheduler')
        self.assertIn("No module named 'dbaas_scheduler'", result.stderr)
        result = self.openstack.python('-m', 'pip', 'list',
                                       '--format', 'json')
        self.assertEqual(0, result.returncode, result.stderr)
        installed = {package['name'].lower()
                     for package in json.loads(result.stdout)}
        self.assertIn('python-dbaas-schedulerclient', installed)
        self.assertIn('python-openstackclient', installed)
        for heavy in ('dbaas-scheduler', 'oslo.db', 'oslo.service',
                      'oslo.messaging', 'sqlalchemy', 'eventlet', 'alembic',
                      'cotyledon'):
            self.assertNotIn(heavy, installed)

    def test_the_client_knows_every_field(self):
        result = self.openstack.python('-c', (
            'import json\n'
            'from dbaasschedulerclient.osc.v1 import backup_policy as p\n'
            'from dbaasschedulerclient.osc.v1 import execution as e\n'
            'print(json.dumps({"policy": p.FIELDS, "options": [o[1] for o '
            'in p._VALUE_OPTIONS], "execution": e.FIELDS, '
            '"statuses": e.STATUSES}))'))
        self.assertEqual(0, result.returncode, result.stderr)
        fields = json.loads(result.stdout)
        self.assertEqual(sorted(backup_policy_obj.VISIBLE_FIELDS),
                         sorted(fields['policy']))
        # --backup-param and --exclusion add to a list, --verify-sql and
        # --verify-expected make verify_check: not value options.
        self.assertEqual(sorted(backup_policy_obj.USER_FIELDS),
                         sorted(fields['options']
                                + ['backup_params', 'exclusions',
                                   'verify_check']))
        # as_dict adds held (whether held_at is set).
        self.assertEqual(sorted(list(execution_obj.VISIBLE_FIELDS)
                                + ['held']),
                         sorted(fields['execution']))
        self.assertEqual(list(enums.ExecutionStatus.ALL),
                         fields['statuses'])


class TestNoService(base.TestCase):

    def test_nobody_listens(self):
        openstack = self.useFixture(OpenStackCommand(
            'http://127.0.0.1:%d' % ports.free_port()))
        started = time.monotonic()
        result = openstack('database', 'backup', 'policy', 'list')
        self.assertEqual(1, result.returncode)
        # keystoneauth says it, finding no version document (the client
        # negotiates its API microversion first).
        self.assertRegex(result.stderr,
                         'Unable to (establish connection to|find a version '
                         'discovery document at) http://127.0.0.1:')
        self.assertNotIn('Traceback', result.stderr)
        self.assertLess(time.monotonic() - started, COMMAND_TIMEOUT)
