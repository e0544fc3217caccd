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
"""The worker benchmark's run: its databases, workers and casts."""

import collections
import datetime
import os
import re
import time
import uuid

from oslo_utils import timeutils
import psutil
import sqlalchemy as sa
from tools.benchmarks import common
from tools.benchmarks import database
from tools.benchmarks import pyspy
from tools.benchmarks import reporting

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import models

WORKER_BINARY = 'dbaas-scheduler-worker'
PROJECT = 'bench-project'
POLICIES = models.BackupPolicy.__table__
EXECUTIONS = models.BackupExecution.__table__
SERVICES = models.Service.__table__


def seed(db, instance_ids, backend, backup_params=None, project_id=PROJECT):
    """One policy per instance and one PENDING execution per policy.

    The policies are due tomorrow (no engine runs anyway); returns the
    execution ids in the order they were created.
    """
    now = timeutils.utcnow(True)
    policies, executions = [], []
    for number, instance_id in enumerate(instance_ids):
        policy_id = str(uuid.uuid4())
        policies.append({
            'id': policy_id, 'name': 'bench-%d' % number,
            'project_id': project_id, 'instance_id': instance_id,
            'backend': backend, 'backup_params': backup_params,
            'schedule_type': 'cron', 'schedule': '0 3 * * *',
            'timezone': 'UTC', 'enabled': True, 'overlap_policy': 'skip',
            'next_execution_time': now + datetime.timedelta(days=1),
            'created_at': now})
        executions.append({
            'id': str(uuid.uuid4()), 'policy_id': policy_id,
            'project_id': project_id, 'instance_id': instance_id,
            'scheduled_at': now, 'trigger': 'schedule',
            'status': 'PENDING', 'attempts': 0, 'created_at': now})
    db.insert(POLICIES, policies)
    db.insert(EXECUTIONS, executions)
    db.vacuum(POLICIES.name, EXECUTIONS.name)
    return [row['id'] for row in executions]


def status_counts(db):
    """{status: (executions, of which with a backup id)}."""
    return {row[0]: (row[1], row[2]) for row in db.rows(
        sa.select(EXECUTIONS.c.status, sa.func.count(),
                  sa.func.count(EXECUTIONS.c.backup_id))
        .group_by(EXECUTIONS.c.status))}


def log_time(date, milliseconds):
    """POSIX time of an oslo.log timestamp (local time, milliseconds)."""
    return time.mktime(time.strptime(date, '%Y-%m-%d %H:%M:%S')) + (
        int(milliseconds) / 1000.0)


def log_levels(log):
    """'N lines, N ERROR, N WARNING' of a worker's log."""
    levels = collections.Counter(re.findall(
        r'^\S+ \S+ \d+ (ERROR|WARNING|CRITICAL) ', log, re.MULTILINE))
    return '%d lines, %d ERROR, %d WARNING' % (
        log.count('\n'), levels['ERROR'] + levels['CRITICAL'],
        levels['WARNING'])


class WorkerProcess(common.ServiceProcess):
    """A dbaas-scheduler-worker, measured through the child it forks.

    The child registers the ``service`` row (its id is the ``owner`` of
    what it claims) once its RPC server listens.
    """

    def __init__(self, number, config_file, log_file):
        super().__init__(number, WORKER_BINARY, config_file, log_file)
        self.child = None
        self.service_id = None

    def bind(self, services):
        """Find this launcher's child among ``{service id: pid}``."""
        for service_id, pid in services.items():
            try:
                if psutil.Process(pid).ppid() == self.popen.pid:
                    self.child = psutil.Process(pid)
                    self.service_id = service_id
                    return True
            except psutil.Error:
                continue
        return False

    def sample(self):
        """CPU seconds, threads and RSS of the child (None once gone)."""
        try:
            with self.child.oneshot():
                times = self.child.cpu_times()
                return {'time': time.time(),
                        'cpu': times.user + times.system,
                        'threads': self.child.num_threads(),
                        'rss': self.child.memory_info().rss}
        except (psutil.Error, AttributeError):
            return None

    def terminate(self, timeout=90):
        """SIGTERM the launcher (graceful stop); SIGKILL after timeout."""
        if not self.alive():
            return 'had exited (%s)' % (self.popen and self.popen.returncode)
        started = time.time()
        code = self.stop(timeout)
        if code is None:
            return 'SIGKILL after %d s without exiting on SIGTERM' % timeout
        return 'SIGTERM, exited %d in %.1f s' % (code, time.time() - started)


class Sampler(common.Sampler):
    """Samples the workers' children every ``interval`` seconds."""

    def __init__(self, workers, interval):
        super().__init__(interval)
        self.workers = workers
        self.samples = collections.defaultdict(list)

    def take(self):
        for worker in self.workers:
            sample = worker.sample()
            if sample is not None:
                self.samples[worker.number].append(sample)

    def between(self, number, start, end):
        return [s for s in self.samples[number] if start <= s['time'] <= end]


class Bench(common.Bench):
    """One invocation: a database per run, the workers, the casts."""

    def __init__(self, args):
        super().__init__(args, 'dbaas-bench-worker-', ('worker',))
        self.workers = []

    @property
    def topic(self):
        return self.topics['worker']

    def client(self):
        """The WorkerAPI of this process (oslo.messaging on cfg.CONF)."""
        path = os.path.join(self.workdir, 'benchmark.conf')
        if self.api is None:
            common.write_config(path, {
                'DEFAULT': {'transport_url': self.transport_url,
                            'log_file': os.path.join(self.workdir,
                                                     'benchmark.log')},
                'worker': {'topic': self.topic}})
        return self.worker_api(path)

    def queue_state(self):
        """(messages ready, consumers) of the worker topic's queue."""
        return common.queue_state(self.transport_url, self.topic)

    def new_database(self, suffix):
        args = self.args
        self.db = database.Database(
            args.database, name='%s_%s' % (args.database_name, suffix),
            admin_url=args.admin_url)
        self.db.create()
        path = os.path.join(self.workdir, 'manage-%s.conf' % suffix)
        common.write_config(path, {
            'database': {'connection': self.db.url_string}})
        common.upgrade_schema(path)
        return self.db

    def drop_database(self):
        if self.db is not None and not self.args.keep:
            self.db.drop()
        elif self.db is not None:
            self.db.dispose()
        self.db = None

    def registered_workers(self):
        """{service id: pid} of the registered workers."""
        return dict(self.db.rows(
            sa.select(SERVICES.c.id, SERVICES.c.pid).where(
                SERVICES.c.binary == WORKER_BINARY)))

    def start_workers(self, count, name, debug, trove_url=None):
        """Start ``count`` workers and wait until each one listens."""
        self.workers = []
        for number in range(count):
            label = '%s-%d' % (name, number)
            log_file = os.path.join(self.workdir, label + '.log')
            sections = common.service_config(self, log_file, 60)
            sections['DEFAULT']['debug'] = debug
            sections['service_credentials'] = {'auth_type': 'none'}
            if trove_url:
                sections['trove'] = {'endpoint_override': trove_url}
            common.set_options(sections, self.args.worker_option, 'worker')
            config_file = os.path.join(self.workdir, label + '.conf')
            common.write_config(config_file, sections)
            self.workers.append(WorkerProcess(number, config_file, log_file))
        launched = time.time()
        for worker in self.workers:
            worker.start()
        deadline = time.time() + 120
        while time.time() < deadline:
            self.check_alive()
            services = self.registered_workers()
            if all(w.child or w.bind(services) for w in self.workers):
                _, consumers = self.queue_state()
                reporting.progress(
                    '%d worker(s) listening after %.1f s (%s consumers on '
                    '%s)', count, time.time() - launched, consumers,
                    self.topic)
                return time.time() - launched
            time.sleep(0.1)
        raise RuntimeError('the workers did not register within 120 s; see '
                           'their logs in %s' % self.workdir)

    def check_alive(self):
        dead = [w.log_file for w in self.workers if not w.alive()]
        if dead:
            raise RuntimeError('worker(s) exited: see %s' % ', '.join(dead))

    def profile(self, label):
        """Start py-spy on every worker child (with ``--py-spy``)."""
        if not self.args.py_spy:
            return []
        return [pyspy.Profiler(self.args.py_spy, worker.child.pid,
                               os.path.join(self.workdir, '%s-%d.pyspy.txt'
                                            % (label, worker.number)))
                for worker in self.workers]

    def stop_workers(self):
        return [worker.terminate() for worker in self.workers]

    def cast(self, execution_ids, per_message):
        """Cast every id, ``per_message`` to a message; (start, end)."""
        api = self.client()
        context = dbaas_context.get_admin_context()
        started = time.time()
        for start in range(0, len(execution_ids), per_message):
            group = execution_ids[start:start + per_message]
            if per_message == 1:
                api.backup_database_instance(context, group[0])
            else:
                api.backup_database_instances(context, group)
        return started, time.time()

    def wait(self, done, what, timeout):
        """Wait for ``done()`` to return true, logging progress."""
        deadline = time.time() + timeout
        last = 0.0
        while time.time() < deadline:
            self.check_alive()
            state = done()
            if state is True:
                return True
            if time.time() - last >= 5:
                reporting.progress('%s: %s', what, state)
                last = time.time()
            time.sleep(0.2)
        reporting.progress('warning: timeout (%d s) waiting for %s', timeout,
                           what)
        return False

    def close(self):
        for worker in self.workers:
            if worker.alive():
                worker.kill()
        super().close()
        self.drop_database()
