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
"""Real worker (and engine) processes over the real RabbitMQ.

Trove is ``fake_trove`` in this process; the database is a provisioned
one on the real PostgreSQL or MariaDB.  Workers are killed with SIGKILL at
the two moments that matter -- between the backend's create and the
recording of the backup id, and while the backup runs -- and another
worker must finish the execution without a second backup.
"""

import datetime
import gzip
import os
import signal
import subprocess
import sys
import threading
import time

import fixtures
import kombu
from oslo_utils import timeutils
import sqlalchemy as sa
from testtools import content

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler import rpcapi
from dbaas_scheduler import servicegroup
from dbaas_scheduler.testing import fake_trove
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.fixtures import tcp_proxy

wait_until = process_fixtures.wait_until
PROJECT = 'project-a'


class WorkerProcessMixin(db_fixtures.DatabaseMixin):
    """Real engine and worker processes of this test, and their helpers."""

    def setUp(self):
        super().setUp()
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        self.trove = self.useFixture(fake_trove.FakeTrove(
            behaviour=fake_trove.BackupBehaviour(build_seconds=1)))
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.processes = []
        self.context = dbaas_context.get_admin_context()
        self.addOnException(self._attach_logs)

    def _attach_logs(self, exc_info):
        for process in self.processes:
            self.addDetail(os.path.basename(process.log_file),
                           content.text_content(process.log()[-20000:]))

    def _config(self, name, **groups):
        database_url = self.engine.url.render_as_string(hide_password=False)
        sections = {
            'DEFAULT': {'transport_url': messaging_fixtures.transport_url(),
                        'heartbeat_interval': 1},
            'database': {'connection': database_url, 'retry_interval': 1,
                         'max_retries': -1},
            'engine': {'topic': self.conf.engine.topic, 'scan_interval': 0.2,
                       'sweep_interval': 0.5, 'dispatch_timeout': 3},
            'worker': {'topic': self.conf.worker.topic, 'lease_duration': 10,
                       'poll_interval': 0.5, 'pool_size': 4,
                       'retry_initial_delay': 0.1, 'retry_max_delay': 0.5},
            'trove': {'endpoint_override': self.trove.url},
            # Shorter than the lease, as the worker requires.
            'service_credentials': {'auth_type': 'none', 'timeout': 5},
        }
        for group, options in groups.items():
            sections.setdefault(group, {}).update(options)
        path = os.path.join(self.tempdir, name + '.conf')
        process_fixtures.write_config(path, sections)
        return path

    def start(self, program, name=None, **groups):
        name = name or '%s-%d' % (program, len(self.processes))
        process = self.useFixture(process_fixtures.ServiceProcess(
            program, self._config(name, **groups),
            os.path.join(self.tempdir, name + '.log')))
        self.processes.append(process)
        return process

    def add_policy(self, **values):
        row = dict(name=db_fixtures.policy_name(self), project_id=PROJECT,
                   instance_id=self.trove.add_instance(),
                   schedule_type='cron', schedule='30 2 * * *',
                   timezone='UTC', next_execution_time=timeutils.utcnow(True)
                   + datetime.timedelta(days=1))
        row.update(values)
        return db_api.create_policy(self.context, row)

    def add_execution(self, policy, status='PENDING'):
        return db_api.create_execution(self.context, {
            'policy_id': policy.id, 'project_id': policy.project_id,
            'instance_id': policy.instance_id, 'status': status,
            'scheduled_at': timeutils.utcnow(True)})

    def execution(self, execution_id):
        return db_api.get_execution(self.context, execution_id)

    def wait_for(self, predicate, timeout, message):
        """Wait for ``predicate``; fail at once if a process has died."""
        def done_or_dead():
            return predicate() or self.dead()
        wait_until(done_or_dead, timeout, 0.2)
        self.assertEqual([], self.dead(), 'processes died')
        self.assertTrue(predicate(), message())

    def worker_rows(self):
        """The service rows of the workers."""
        return [row for row in db_services.list_services(self.context)
                if row.binary == 'dbaas-scheduler-worker']

    def wait_for_workers(self, count):
        """Wait until ``count`` workers listen (their row follows start)."""
        self.wait_for(lambda: len(self.worker_rows()) >= count, 60,
                      lambda: 'workers did not start')

    def dead(self):
        """Processes that exited, or whose service keeps crashing."""
        return [os.path.basename(p.log_file) for p in self.processes
                if (p.process.poll() is not None and not p.killed)
                or 'Unhandled error' in p.log()]

    def wait_for_status(self, execution_id, status, timeout=60):
        self.wait_for(
            lambda: self.execution(execution_id).status == status, timeout,
            lambda: 'execution %s is %s, not %s' % (
                execution_id, self.execution(execution_id).status, status))
        return self.execution(execution_id)


class _WorkerProcessTests(WorkerProcessMixin):

    def test_engine_and_workers_take_every_due_backup_once(self):
        policies = [self.add_policy(next_execution_time=timeutils.utcnow(
            True) - datetime.timedelta(seconds=1)) for _ in range(30)]
        self.start('worker')
        self.start('worker')
        self.start('engine')
        table = models.BackupExecution.__table__

        def succeeded():
            with self.engine.connect() as connection:
                return connection.execute(
                    sa.select(sa.func.count()).select_from(table).where(
                        table.c.status == 'SUCCEEDED')).scalar()
        self.wait_for(lambda: succeeded() == 30, 90,
                      lambda: '%d of 30 succeeded' % succeeded())
        for policy in policies:
            self.assertEqual(1, self.trove.create_count(policy.instance_id))
        with self.engine.connect() as connection:
            workers = connection.execute(
                sa.select(sa.func.count(sa.distinct(table.c.owner)))).scalar()
        self.assertGreaterEqual(workers, 1)

    def test_the_same_message_twice_makes_one_backup(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        self.start('worker')
        self.start('worker')
        self.wait_for_workers(2)
        api = rpcapi.WorkerAPI(self.conf)
        api.backup_database_instance(self.context, execution.id)
        api.backup_database_instances(self.context, [execution.id])
        api.backup_database_instance(self.context, execution.id)
        self.wait_for_status(execution.id, 'SUCCEEDED')
        time.sleep(1)
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        self.assertEqual(1, self.execution(execution.id).attempts)

    def test_a_busy_worker_leaves_messages_for_others(self):
        # Slow creates: each of the first worker's two threads is busy for
        # seconds.  It must not take the whole burst off the broker.  4 s
        # (below the 5 s client timeout) leaves the second worker about
        # 12 s to start and take a message before the first drains the
        # queue; it needs 3-4 s on an idle machine.
        self.trove.inject_delay(4, operation=fake_trove.BACKUP_CREATE)
        executions = [self.add_execution(self.add_policy())
                      for _ in range(12)]
        self.start('worker', worker={'pool_size': 2})
        self.wait_for_workers(1)
        api = rpcapi.WorkerAPI(self.conf)
        for execution in executions:
            api.backup_database_instance(self.context, execution.id)
        time.sleep(1)
        # Two being handled and at most two prefetched: the rest wait.
        self.assertGreaterEqual(self.messages_ready(), 6)
        self.start('worker', worker={'pool_size': 2})
        self.wait_for(
            lambda: all(self.execution(e.id).backup_id for e in executions),
            60, lambda: 'not every backup was started')
        owners = {self.execution(e.id).owner for e in executions}
        self.assertEqual(2, len(owners))

    def messages_ready(self):
        url = messaging_fixtures.transport_url().replace('rabbit://',
                                                         'amqp://', 1)
        with kombu.Connection(url) as connection:
            _, count, _ = connection.channel().queue_declare(
                queue=self.conf.worker.topic, passive=True)
        return count

    def test_a_worker_without_its_database_leaves_casts_queued(self):
        # The worker reaches its database through a proxy that is cut:
        # it must stop taking casts (they wait on the broker, not fail
        # here), say so once, and take them when the database is back.
        proxy = self.useFixture(tcp_proxy.TCPProxy(
            '127.0.0.1', self.engine.url.port or self.DEFAULT_PORT))
        early, *executions = [self.add_execution(self.add_policy())
                              for _ in range(4)]
        through_proxy = self.engine.url.set(host='127.0.0.1',
                                            port=proxy.port)
        worker = self.start('worker', database={
            'connection': through_proxy.render_as_string(
                hide_password=False)})
        self.wait_for_workers(1)
        proxy.cut()
        api = rpcapi.WorkerAPI(self.conf)
        # Taken (or not) while the worker finds its database gone: its
        # failed claim is cast again, not dropped.
        api.backup_database_instance(self.context, early.id)
        paused = 'this worker takes no casts until it answers again'
        self.wait_for(lambda: paused in worker.log(), 30,
                      lambda: 'the worker did not pause its intake')
        for execution in executions:
            api.backup_database_instance(self.context, execution.id)
        self.wait_for(lambda: self.messages_ready() >= 3, 30,
                      lambda: '%d casts queued, not 3' % self.messages_ready())
        for execution in [early] + executions:
            self.assertEqual('PENDING', self.execution(execution.id).status)
        proxy.restore()
        for execution in [early] + executions:
            policy = db_api.get_policy(self.context, execution.policy_id)
            self.wait_for_status(execution.id, 'SUCCEEDED')
            self.assertEqual(1, self.trove.create_count(policy.instance_id))
        log = worker.log()
        self.assertEqual(1, log.count(paused), log)
        self.assertIn('this worker takes casts again', log)
        self.assertNotIn('Traceback', log)
        self.assertEqual(0, self.messages_ready())

    def test_worker_killed_between_create_and_record(self):
        policy = self.add_policy()
        execution = self.add_execution(policy)
        # Trove stores the backup, then its answer takes a long time: the
        # worker is killed while it waits for the backup id.
        serve, answered = self.trove._create_backup, threading.Event()

        def store_then_stall(*args):
            result = serve(*args)
            answered.wait(60)
            return result
        self.trove._create_backup = store_then_stall
        self.addCleanup(answered.set)
        first = self.start('worker')
        self.wait_for_workers(1)
        rpcapi.WorkerAPI(self.conf).backup_database_instance(self.context,
                                                             execution.id)
        self.wait_for(
            lambda: self.trove.create_count(policy.instance_id) == 1, 30,
            lambda: 'no backup was created')
        first.kill(signal.SIGKILL)
        self.trove._create_backup = serve
        answered.set()
        self.assertIsNone(self.execution(execution.id).backup_id)

        # Another worker, and an engine whose sweep hands the execution
        # over once the dead worker's lease has expired.
        self.start('worker')
        self.start('engine')
        done = self.wait_for_status(execution.id, 'SUCCEEDED', timeout=60)
        self.assertEqual(1, self.trove.create_count(policy.instance_id))
        [backup] = self.trove.backups(PROJECT)
        self.assertEqual(backup['id'], done.backup_id)
        self.assertEqual(2, done.attempts)

    def test_worker_killed_while_the_backup_runs(self):
        instance = self.trove.add_instance(build_seconds=8)
        policy = self.add_policy(instance_id=instance)
        execution = self.add_execution(policy)
        first = self.start('worker')
        self.wait_for_workers(1)
        rpcapi.WorkerAPI(self.conf).backup_database_instance(self.context,
                                                             execution.id)
        self.wait_for(lambda: self.execution(execution.id).backup_id, 30,
                      lambda: 'no backup id was recorded')
        started = self.execution(execution.id)
        first.kill(signal.SIGKILL)

        self.start('worker')
        self.start('engine')
        done = self.wait_for_status(execution.id, 'SUCCEEDED', timeout=60)
        self.assertEqual(started.backup_id, done.backup_id)
        self.assertNotEqual(started.owner, done.owner)
        self.assertEqual(2, done.attempts)
        self.assertEqual(1, self.trove.create_count(instance))

    def test_a_restarted_child_registers_itself(self):
        # oslo.service's launcher runs each service in a child process and
        # starts a new child when one dies.  The new child must appear in
        # the cluster view as itself, alive, and not as the dead one.
        # Heartbeats every second: 8 s lets a loaded machine delay a live
        # child's heartbeats by seconds without the check calling it down.
        down_time = 8
        processes = {
            binary: self.start(program, **{'DEFAULT': {
                'service_down_time': down_time}})
            for binary, program in (('dbaas-scheduler-worker', 'worker'),
                                    ('dbaas-scheduler-engine', 'engine'))}
        self.wait_for(lambda: self._child_rows(processes), 60,
                      lambda: 'the services did not register')
        killed = self._child_rows(processes)
        for binary, row in killed.items():
            os.kill(row.pid, signal.SIGKILL)

        def restarted():
            rows = self._child_rows(processes)
            return rows if rows and all(
                rows[binary].pid != killed[binary].pid
                and rows[binary].heartbeat_at > rows[binary].started_at
                for binary in rows) else None
        self.wait_for(restarted, 60, lambda: 'no child came back alive: %s'
                      % [(row.binary, row.pid, row.heartbeat_at.isoformat())
                         for row in db_services.list_services(self.context)])
        rows = restarted()
        for binary, row in rows.items():
            self.assertNotEqual(killed[binary].id, row.id)
            self.assertTrue(processes[binary].alive(), binary)
            self.assertNotIn('DBDuplicateEntry', processes[binary].log())

        # Once the dead children are down, the upgrade check still sees an
        # engine and a worker.
        self.assertTrue(wait_until(lambda: not any(
            servicegroup.is_up(row, timeutils.utcnow(True), down_time)
            for row in killed.values()), down_time + 5))
        check = subprocess.run(
            [sys.executable, '-c',
             'import sys; from dbaas_scheduler.cmd import status as m; '
             'sys.exit(m.main())',
             '--config-file', processes['dbaas-scheduler-worker'].config_file,
             'upgrade', 'check'],
            capture_output=True, text=True, timeout=120)
        self.assertNotIn('has reported', check.stdout)
        self.assertEqual(0, check.returncode, check.stdout + check.stderr)

    def _child_rows(self, processes):
        """{binary: the live row of the launcher's current child}, if all.

        A row is a child's when its pid is alive and is a child of the
        launcher (the process the test started); it is live when its
        heartbeat is recent.
        """
        now = timeutils.utcnow(True)
        rows = {}
        for row in db_services.list_services(self.context):
            process = processes.get(row.binary)
            if (process is not None and _parent_pid(row.pid)
                    == process.process.pid and servicegroup.is_up(
                        row, now, self.conf.service_down_time)):
                rows[row.binary] = row
        return rows if len(rows) == len(processes) else None

    def test_local_backend_backs_up_the_real_database(self):
        with self.engine.begin() as connection:
            connection.execute(sa.text(
                'CREATE TABLE guestbook (id INTEGER PRIMARY KEY, '
                'entry VARCHAR(64))'))
            connection.execute(sa.text(
                "INSERT INTO guestbook VALUES (1, 'kept by the local "
                "backend')"))
        backups = os.path.join(self.tempdir, 'backups')
        local = {'instances': 'main:%s' % self.engine.url.render_as_string(
            hide_password=False), 'backup_dir': backups}
        policy = self.add_policy(
            instance_id='main', backend='local', keep_last=1,
            next_execution_time=timeutils.utcnow(True)
            - datetime.timedelta(seconds=1))
        self.start('worker', local_backend=local)
        self.start('engine', local_backend=local)
        self.wait_for(
            lambda: db_api.list_executions(self.context,
                                           policy_id=policy.id), 30,
            lambda: 'the engine recorded no execution')
        [execution] = db_api.list_executions(self.context, policy_id=policy.id)
        done = self.wait_for_status(execution.id, 'SUCCEEDED', timeout=90)
        [dump] = [name for name in os.listdir(os.path.join(backups, 'main'))
                  if name.startswith(done.backup_id) and '.json' not in name]
        with gzip.open(os.path.join(backups, 'main', dump), 'rt') as stream:
            text = stream.read()
        self.assertIn('guestbook', text)
        self.assertIn('kept by the local backend', text)


def _parent_pid(pid):
    """The parent of process ``pid``, or None if there is no such process."""
    try:
        with open('/proc/%d/stat' % pid) as stream:
            # "pid (comm) state ppid ...": comm may hold spaces.
            return int(stream.read().rsplit(')', 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


class TestWorkerProcessesMySQL(_WorkerProcessTests, base.TestCase):
    DRIVER = 'mysql'
    DEFAULT_PORT = 3306


class TestWorkerProcessesPostgreSQL(_WorkerProcessTests, base.TestCase):
    DRIVER = 'postgresql'
    DEFAULT_PORT = 5432
