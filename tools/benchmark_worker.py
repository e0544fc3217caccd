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
"""Benchmark real dbaas-scheduler-worker processes on a real database.

In-flight monitoring: one worker watching N backups that take an hour at
a fake Trove served by this process, measured for M seconds at each N::

    python tools/benchmark_worker.py --database postgresql \\
        --in-flight 1000,5000 --seconds 120

Consume + claim throughput: W workers, N executions on the fake backend
cast K to a message::

    python tools/benchmark_worker.py --database postgresql \\
        --claims 20000 --workers 2 --per-message 20
    python tools/benchmark_worker.py --database mysql \\
        --claims 5000 --workers 2 --per-message 1

The benchmark creates a database of its own (dropped at the end unless
``--keep``), RabbitMQ topics unique to the run (their queues are deleted at
the end), and a work directory with the workers' configs and logs.
``doc/source/contributor/benchmarks.rst`` explains every figure.
"""

import argparse
import collections
import configparser
import datetime
import math
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid

import kombu
from oslo_config import cfg
from oslo_utils import timeutils
import psutil
import sqlalchemy as sa
from sqlalchemy.engine import url as sa_url

# First of the project's imports: selects oslo.service's threading backend
# (and keeps eventlet out) before oslo.messaging is imported.
from dbaas_scheduler import cmd as _backend  # noqa: F401
from dbaas_scheduler import config
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import models
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests.functional import fake_trove
from dbaas_scheduler import version

WORKER_BINARY = 'dbaas-scheduler-worker'
PROJECT = 'bench-project'
ADMIN_URLS = {
    'postgresql': 'postgresql+psycopg2://postgres@127.0.0.1:5432/postgres',
    'mysql': 'mysql+pymysql://root:@127.0.0.1:3306/',
}
DEFAULT_TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'
SEED_CHUNK = 5000
POLICIES = models.BackupPolicy.__table__
EXECUTIONS = models.BackupExecution.__table__
SERVICES = models.Service.__table__
# The worker's DEBUG line after each pass of its poller.
POLL_PASS = re.compile(
    r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) .*Poll pass: checked '
    r'(\d+) running backups in ([\d.]+)s')
# The worker's INFO line once a backup was started and its id recorded.
BACKUP_STARTED = re.compile(
    r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) .*: backup \S+ started '
    r'on instance', re.MULTILINE)
_TROVE_PATH = re.compile(r'/(instances|backups)(/[^/]+)?/?$')

_STARTED = time.time()
# Server versions of the databases used, for the report.
VERSIONS = set()


def progress(message, *args):
    """A progress line on stderr; the report itself goes to stdout."""
    print('[%7.1fs] %s' % (time.time() - _STARTED, message % args),
          file=sys.stderr, flush=True)


def percentile(ordered, fraction):
    """Nearest-rank percentile of an already sorted list."""
    if not ordered:
        return float('nan')
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def spread(values, unit='s', digits=3):
    """'p50 / p99 / max' of a list of numbers."""
    ordered = sorted(values)
    if not ordered:
        return 'n/a (no values)'
    form = '%%.%df %s' % (digits, unit)
    return '%s / %s / %s  (n=%d)' % (
        form % percentile(ordered, 0.5), form % percentile(ordered, 0.99),
        form % ordered[-1], len(ordered))


def mib(value):
    return '%.1f MiB' % (value / 2 ** 20)


class Report:
    """Plain text sections, printed to stdout and kept for a file."""

    def __init__(self):
        self.lines = []

    def section(self, title):
        self.add('')
        self.add(title)
        self.add('-' * len(title))

    def add(self, text=''):
        self.lines.append(text)
        print(text, flush=True)

    def item(self, key, value):
        self.add('  %-44s %s' % (key + ':', value))

    def text(self):
        return '\n'.join(self.lines) + '\n'


# The database.

class Database:
    """The benchmark's own database on PostgreSQL or MariaDB/MySQL."""

    def __init__(self, backend, name, admin_url=None):
        self.admin_url = sa_url.make_url(admin_url or ADMIN_URLS[backend])
        self.url = self.admin_url.set(database=name)
        self.name = name
        self.backend = backend
        self.engine = None

    @property
    def url_string(self):
        return self.url.render_as_string(hide_password=False)

    def _admin(self, statement):
        engine = sa.create_engine(self.admin_url,
                                  isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as connection:
                connection.execute(sa.text(statement))
        finally:
            engine.dispose()

    def create(self):
        """A new, empty database (an old one of the same name is dropped)."""
        self.drop()
        if self.backend == 'postgresql':
            self._admin('CREATE DATABASE "%s"' % self.name)
        else:
            self._admin('CREATE DATABASE `%s` CHARACTER SET utf8mb4'
                        % self.name)
        self.engine = sa.create_engine(self.url, pool_size=2)
        VERSIONS.add(self.server_version())

    def drop(self):
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None
        if self.backend == 'postgresql':
            self._admin('DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                        % self.name)
        else:
            self._admin('DROP DATABASE IF EXISTS `%s`' % self.name)

    def scalar(self, statement):
        with self.engine.connect() as connection:
            return connection.execute(statement).scalar()

    def rows(self, statement):
        with self.engine.connect() as connection:
            return connection.execute(statement).all()

    def insert(self, table, rows):
        for start in range(0, len(rows), SEED_CHUNK):
            with self.engine.begin() as connection:
                connection.execute(sa.insert(table),
                                   rows[start:start + SEED_CHUNK])

    def analyze(self):
        """Fresh planner statistics after seeding, as on a settled table."""
        statement = ('VACUUM ANALYZE %s' if self.backend == 'postgresql'
                     else 'ANALYZE TABLE %s')
        with self.engine.connect().execution_options(
                isolation_level='AUTOCOMMIT') as connection:
            for table in (POLICIES.name, EXECUTIONS.name):
                connection.execute(sa.text(statement % table))

    def server_version(self):
        """The server's version and the settings that bound commit cost."""
        with self.engine.connect() as connection:
            if self.backend == 'postgresql':
                return 'PostgreSQL %s (synchronous_commit=%s)' % tuple(
                    connection.execute(sa.text('SHOW %s' % name)).scalar()
                    for name in ('server_version', 'synchronous_commit'))
            row = connection.execute(sa.text(
                'SELECT VERSION(), @@innodb_flush_log_at_trx_commit')).one()
        return 'MariaDB/MySQL %s (innodb_flush_log_at_trx_commit=%s)' % (
            tuple(row))

    def status_counts(self):
        """{status: (executions, of which with a backup id)}."""
        return {row[0]: (row[1], row[2]) for row in self.rows(
            sa.select(EXECUTIONS.c.status, sa.func.count(),
                      sa.func.count(EXECUTIONS.c.backup_id))
            .group_by(EXECUTIONS.c.status))}

    def workers(self):
        """{service id: pid} of the registered workers."""
        return dict(self.rows(sa.select(SERVICES.c.id, SERVICES.c.pid).where(
            SERVICES.c.binary == WORKER_BINARY)))


def seed(db, instance_ids, backend, backup_params=None):
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
            'project_id': PROJECT, 'instance_id': instance_id,
            'backend': backend, 'backup_params': backup_params,
            'schedule_type': 'cron', 'schedule': '0 3 * * *',
            'timezone': 'UTC', 'enabled': True, 'overlap_policy': 'skip',
            'next_execution_time': now + datetime.timedelta(days=1),
            'created_at': now})
        executions.append({
            'id': str(uuid.uuid4()), 'policy_id': policy_id,
            'project_id': PROJECT, 'instance_id': instance_id,
            'scheduled_at': now, 'trigger': 'schedule',
            'status': 'PENDING', 'attempts': 0, 'created_at': now})
    db.insert(POLICIES, policies)
    db.insert(EXECUTIONS, executions)
    db.analyze()
    return [row['id'] for row in executions]


# The fake Trove.

class CountingTrove(fake_trove.FakeTrove):
    """The functional tests' fake Trove, counting requests by operation."""

    OPERATIONS = {
        ('GET', 'instances', True): 'show instance',
        ('GET', 'backups', False): 'list backups',
        ('POST', 'backups', False): 'create backup',
        ('GET', 'backups', True): 'show backup',
        ('DELETE', 'backups', True): 'delete backup',
    }

    def __init__(self, **kwargs):
        super().__init__(record_requests=False, **kwargs)
        self.counts = collections.Counter()
        self._count_lock = threading.Lock()

    def handle(self, method, target, token, raw_body):
        match = _TROVE_PATH.search(urllib.parse.urlsplit(target).path)
        operation = self.OPERATIONS.get(
            (method, match.group(1), bool(match.group(2)))
            if match else None, 'other')
        with self._count_lock:
            self.counts[operation] += 1
        return super().handle(method, target, token, raw_body)

    def snapshot(self):
        with self._count_lock:
            return collections.Counter(self.counts)


# Worker processes.

def write_config(path, sections):
    parser = configparser.ConfigParser(interpolation=None)
    for group, options in sections.items():
        parser[group] = {name: str(value) for name, value in options.items()}
    with open(path, 'w') as stream:
        parser.write(stream)


def program(name):
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else shutil.which(name) or name


class WorkerProcess:
    """A dbaas-scheduler-worker in its own session (process group).

    The oslo.service launcher forks the child that runs the service; the
    child registers the ``service`` row (its id is the ``owner`` of what it
    claims) once its RPC server listens, and it is the process measured.
    """

    def __init__(self, number, config_file, log_file):
        self.number = number
        self.config_file = config_file
        self.log_file = log_file
        self.popen = None
        self.child = None
        self.service_id = None
        self.ended = None

    def start(self):
        with open(self.log_file, 'ab') as log:
            self.popen = subprocess.Popen(
                [program(WORKER_BINARY), '--config-file', self.config_file],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

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

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

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
        self.popen.send_signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout)
            return 'SIGTERM, exited %d in %.1f s' % (
                self.popen.returncode, time.time() - started)
        except subprocess.TimeoutExpired:
            self.kill()
            return 'SIGKILL after %d s without exiting on SIGTERM' % timeout

    def kill(self):
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait()

    def log(self):
        with open(self.log_file, errors='replace') as stream:
            return stream.read()


class Sampler(threading.Thread):
    """Samples the workers' children every ``interval`` seconds."""

    def __init__(self, workers, interval):
        super().__init__(daemon=True)
        self.workers = workers
        self.interval = interval
        self.samples = collections.defaultdict(list)
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.wait(self.interval):
            self.take()

    def take(self):
        for worker in self.workers:
            sample = worker.sample()
            if sample is not None:
                self.samples[worker.number].append(sample)

    def between(self, number, start, end):
        return [s for s in self.samples[number] if start <= s['time'] <= end]

    def stop(self):
        self.stopping.set()
        self.join()


# Where the machine's CPU time goes while something is measured.
_SERVERS = {'postgres': 'PostgreSQL', 'mariadbd': 'MariaDB',
            'mysqld': 'MySQL', 'beam.smp': 'RabbitMQ'}


def machine_snapshot():
    """/proc/stat's CPU line and the CPU time of the processes we know."""
    with open('/proc/stat') as stream:
        ticks = [int(value) for value in stream.readline().split()[1:9]]
    known = collections.Counter()
    for proc in psutil.process_iter(['name', 'cpu_times']):
        group = _SERVERS.get(proc.info['name'])
        if group and proc.info['cpu_times'] is not None:
            times = proc.info['cpu_times']
            known[(group, proc.pid)] = times.user + times.system
    times = psutil.Process().cpu_times()
    known[('benchmark process', 0)] = times.user + times.system
    return time.time(), ticks, known


def machine_usage(before, after, workers):
    """What the machine did between two snapshots, as one line.

    CPU seconds of the workers (given), the servers and this process (the
    fake Trove, the casts); what the rest of the machine used ("other":
    another test run or benchmark on the machine makes the figures
    unreliable); the idle and steal shares.
    """
    elapsed = after[0] - before[0]
    ticks = [b - a for a, b in zip(before[1], after[1])]
    total = max(sum(ticks), 1)
    used = collections.Counter({'workers': workers})
    for key, seconds in after[2].items():
        used[key[0]] += seconds - before[2].get(key, 0.0)
    busy = (total - ticks[3] - ticks[4] - ticks[7]) / os.sysconf(
        'SC_CLK_TCK')
    return ('%.1f s; CPU seconds: %s, other processes %.1f; machine idle '
            '%.0f%%, steal %.0f%%' % (
                elapsed, ', '.join('%s %.1f' % item
                                   for item in sorted(used.items())),
                max(busy - sum(used.values()), 0.0),
                100 * (ticks[3] + ticks[4]) / total,
                100 * ticks[7] / total))


def wait_for_idle(limit):
    """Wait up to ``limit`` seconds for the machine to be 90% idle.

    Another test run or benchmark sharing the machine makes the figures
    unreliable.
    """
    deadline = time.time() + limit
    while True:
        before = machine_snapshot()[1]
        time.sleep(2)
        ticks = [b - a for a, b in zip(before, machine_snapshot()[1])]
        idle = (ticks[3] + ticks[4]) / max(sum(ticks), 1)
        if idle >= 0.9 or time.time() >= deadline:
            if idle < 0.9:
                progress('warning: the machine is still %.0f%% busy',
                         100 * (1 - idle))
            return
        progress('waiting for the machine to be idle (%.0f%% busy)',
                 100 * (1 - idle))


def log_levels(log):
    """'N lines, N ERROR, N WARNING' of a worker's log."""
    levels = collections.Counter(re.findall(
        r'^\S+ \S+ \d+ (ERROR|WARNING|CRITICAL) ', log, re.MULTILINE))
    return '%d lines, %d ERROR, %d WARNING' % (
        log.count('\n'), levels['ERROR'] + levels['CRITICAL'],
        levels['WARNING'])


class Profiler:
    """py-spy sampling one process, only the threads holding the GIL.

    It shows where the process spends CPU time in Python code (a thread
    waiting for the database or the network releases the GIL).  Stopped
    with SIGINT, it writes collapsed stacks (``--format raw``).
    """

    def __init__(self, binary, pid, path):
        self.path = path
        self.popen = subprocess.Popen(
            [binary, 'record', '--pid', str(pid), '--format', 'raw',
             '--output', path, '--gil', '--nonblocking', '--nolineno',
             '--rate', '100'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        self.popen.send_signal(signal.SIGINT)
        try:
            self.popen.wait(60)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()

    def summary(self, top):
        """Where the samples are: by package, by function, in our code.

        Returns ``(samples, [(package, n)], [(function, n)],
        [(dbaas_scheduler function, n)])``: the package and the function
        of the innermost frame (self time), and the functions of this
        project a sample passes through (total time).
        """
        packages, own, ours = (collections.Counter(), collections.Counter(),
                               collections.Counter())
        samples = 0
        try:
            with open(self.path) as stream:
                lines = stream.read().splitlines()
        except OSError:
            return 0, [], [], []
        for line in lines:
            stack, _, count = line.rpartition(' ')
            frames = [frame for frame in stack.split(';')
                      if frame.endswith(')') and ' (' in frame
                      and not frame.startswith(('process ', 'thread '))]
            if not frames or not count.isdigit():
                continue
            samples += int(count)
            own[frames[-1]] += int(count)
            where = frames[-1].rsplit(' (', 1)[1].rstrip(')')
            packages[where.split('/')[0]] += int(count)
            for frame in set(frames):
                if '(dbaas_scheduler/' in frame:
                    ours[frame] += int(count)
        return (samples, packages.most_common(top), own.most_common(top),
                ours.most_common(top))


def report_profile(report, profiler, seconds, top):
    samples, packages, own, ours = profiler.summary(top)
    report.item('py-spy samples holding the GIL', '%d in %.0f s at 100 Hz '
                '(%.0f%% of one core in Python); %s' % (
                    samples, seconds, samples / max(seconds, 1e-6),
                    profiler.path))
    share = 100.0 / max(samples, 1)
    report.item('  self time by package', ', '.join(
        '%s %.1f%%' % (package, count * share) for package, count in packages))
    for title, rows in (('self', own), ('in', ours)):
        for frame, count in rows:
            report.item('  %s %5.1f%%' % (title, count * share), frame)


# One invocation: topics, the casting client, the runs.

class Bench:

    def __init__(self, args, report):
        self.args = args
        self.report = report
        self.workdir = args.workdir or tempfile.mkdtemp(
            prefix='dbaas-bench-worker-')
        os.makedirs(self.workdir, exist_ok=True)
        self.topic = 'dbaas-bench-%s-worker' % uuid.uuid4().hex[:10]
        self.host = socket.gethostname()
        self.transport_url = args.transport_url
        self.api = None
        self.db = None
        self.workers = []

    def queues(self):
        return [self.topic, '%s.%s' % (self.topic, self.host)]

    def client(self):
        """The WorkerAPI of this process (oslo.messaging on cfg.CONF)."""
        if self.api is None:
            path = os.path.join(self.workdir, 'benchmark.conf')
            write_config(path, {
                'DEFAULT': {'transport_url': self.transport_url,
                            'log_file': os.path.join(self.workdir,
                                                     'benchmark.log')},
                'worker': {'topic': self.topic}})
            config.parse_args(cfg.CONF, ['--config-file', path])
            rpc.init(cfg.CONF)
            self.api = rpcapi.WorkerAPI(cfg.CONF)
        return self.api

    def queue_state(self):
        """(messages ready, consumers) of the worker topic's queue."""
        try:
            with kombu.Connection(self.transport_url.replace(
                    'rabbit://', 'amqp://', 1)) as connection:
                _, messages, consumers = connection.channel().queue_declare(
                    self.topic, passive=True)
                return messages, consumers
        except Exception as exc:
            progress('could not read queue %s: %s', self.topic, exc)
            return None, None

    def new_database(self, suffix):
        args = self.args
        self.db = Database(args.database, '%s_%s' % (args.database_name,
                                                     suffix), args.admin_url)
        self.db.create()
        path = os.path.join(self.workdir, 'manage-%s.conf' % suffix)
        write_config(path, {'database': {'connection': self.db.url_string}})
        subprocess.run([program('dbaas-scheduler-manage'), '--config-file',
                        path, 'db', 'upgrade'], check=True,
                       stdout=subprocess.DEVNULL)
        return self.db

    def drop_database(self):
        if self.db is not None and not self.args.keep:
            self.db.drop()
        elif self.db is not None:
            self.db.engine.dispose()
        self.db = None

    def start_workers(self, count, name, debug, trove_url=None):
        """Start ``count`` workers and wait until each one listens."""
        args = self.args
        self.workers = []
        for number in range(count):
            label = '%s-%d' % (name, number)
            worker = {'topic': self.topic}
            sections = {
                'DEFAULT': {'transport_url': self.transport_url,
                            'log_file': os.path.join(self.workdir,
                                                     label + '.log'),
                            'debug': debug,
                            'graceful_shutdown_timeout': 60},
                'database': {'connection': self.db.url_string,
                             'max_retries': -1, 'retry_interval': 1},
                'worker': worker,
                'service_credentials': {'auth_type': 'none'},
            }
            if trove_url:
                sections['trove'] = {'endpoint_override': trove_url}
            for option in args.worker_option:
                key, _, value = option.partition('=')
                group, _, key = key.rpartition('.')
                sections.setdefault(group or 'worker', {})[key] = value
            config_file = os.path.join(self.workdir, label + '.conf')
            write_config(config_file, sections)
            self.workers.append(WorkerProcess(
                number, config_file, sections['DEFAULT']['log_file']))
        launched = time.time()
        for worker in self.workers:
            worker.start()
        deadline = time.time() + 120
        while time.time() < deadline:
            self.check_alive()
            services = self.db.workers()
            if all(w.child or w.bind(services) for w in self.workers):
                _, consumers = self.queue_state()
                progress('%d worker(s) listening after %.1f s (%s consumers '
                         'on %s)', count, time.time() - launched, consumers,
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
        return [Profiler(self.args.py_spy, worker.child.pid, os.path.join(
            self.workdir, '%s-%d.pyspy.txt' % (label, worker.number)))
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
                progress('%s: %s', what, state)
                last = time.time()
            time.sleep(0.2)
        progress('warning: timeout (%d s) waiting for %s', timeout, what)
        return False

    def close(self):
        for worker in self.workers:
            if worker.alive():
                worker.kill()
        if self.api is not None:
            rpc.cleanup()
        try:
            with kombu.Connection(self.transport_url.replace(
                    'rabbit://', 'amqp://', 1)) as connection:
                channel = connection.channel()
                for name in self.queues():
                    channel.queue_delete(name)
        except Exception as exc:
            progress('could not delete queues %s: %s', self.queues(), exc)


# In-flight monitoring.

def log_time(date, milliseconds):
    """POSIX time of an oslo.log timestamp (local time, milliseconds)."""
    return time.mktime(time.strptime(date, '%Y-%m-%d %H:%M:%S')) + (
        int(milliseconds) / 1000.0)


def poll_passes(log):
    """[(end time, backups checked, seconds)] from a worker's DEBUG log."""
    passes = []
    for line in log.splitlines():
        match = POLL_PASS.match(line)
        if match:
            passes.append((log_time(match.group(1), match.group(2)),
                           int(match.group(3)), float(match.group(4))))
    return passes


def run_in_flight(bench, count):
    args, report = bench.args, bench.report
    trove = CountingTrove(behaviour=fake_trove.BackupBehaviour(
        new_seconds=args.new_seconds, build_seconds=args.build_seconds))
    trove.setUp()
    try:
        db = bench.new_database('inflight_%d' % count)
        progress('in-flight %d: seeding %s', count, db.name)
        ids = seed(db, [trove.add_instance() for _ in range(count)], 'trove')
        startup = bench.start_workers(1, 'inflight-%d' % count, True,
                                      trove.url)
        worker = bench.workers[0]
        sampler = Sampler(bench.workers, args.sample_interval)
        sampler.take()
        idle = sampler.samples[0][-1]
        sampler.start()
        cast_start, cast_end = bench.cast(ids, args.per_message)
        progress('in-flight %d: cast in %.1f s, waiting for every backup '
                 'to start', count, cast_end - cast_start)

        def all_started():
            counts = db.status_counts()
            running = counts.get('RUNNING', (0, 0))[1]
            if running == count:
                return True
            return '%d of %d running with a backup; %s' % (
                running, count, sorted(counts.items()))
        started = bench.wait(all_started, 'start', args.timeout)
        ramp = time.time() - cast_start
        if args.wait_idle:
            wait_for_idle(args.wait_idle)

        requests_before = trove.snapshot()
        profilers = bench.profile('inflight-%d' % count)
        sampler.take()
        before = machine_snapshot()
        window_start = time.time()
        progress('in-flight %d: measuring for %d s', count, args.seconds)
        time.sleep(args.seconds)
        window_end = time.time()
        sampler.take()
        after = machine_snapshot()
        requests = trove.snapshot() - requests_before
        for profiler in profilers:
            profiler.stop()
        samples = sampler.between(0, window_start, window_end)
        sampler.stop()
        counts = db.status_counts()
        log = worker.log()
        stopped = bench.stop_workers()[0]
    finally:
        trove.cleanUp()
    bench.drop_database()

    first, last = samples[0], samples[-1]
    elapsed = window_end - window_start
    cpu = last['cpu'] - first['cpu']
    passes = [p for p in poll_passes(log)
              if window_start <= p[0] <= window_end]
    full = [p for p in passes if p[1] == count]
    gaps = [b[0] - a[0] for a, b in zip(passes, passes[1:])]
    threads = [s['threads'] for s in samples]
    result = {'count': count, 'cpu': 100 * cpu / elapsed,
              'threads': (first['threads'], last['threads'], min(threads),
                          max(threads)),
              'idle_threads': idle['threads'],
              'rss': last['rss'], 'passes': [p[2] for p in full],
              'rate': requests['show backup'] / elapsed}

    report.section('In-flight monitoring: %d backups, 1 worker, %d s'
                   % (count, args.seconds))
    report.item('worker options', '%s; debug = True' % (
        ', '.join(args.worker_option)
        or 'defaults (poll_interval 15, poll_concurrency 8, pool_size 16)'))
    report.item('fake Trove backups', 'NEW %.0f s, then BUILDING %.0f s'
                % (args.new_seconds, args.build_seconds))
    report.item('worker start-up (launch -> listening)', '%.1f s' % startup)
    report.item('cast', '%d executions in %d messages of %d in %.2f s' % (
        count, math.ceil(count / args.per_message), args.per_message,
        cast_end - cast_start))
    report.item('first cast -> all RUNNING with a backup',
                '%.1f s (%.0f backups started /s; 3 Trove requests each)%s'
                % (ramp, count / ramp, '' if started else ' TIMEOUT'))
    report.item('statuses at the end of the window', ', '.join(
        '%s %d' % (status, number)
        for status, (number, _) in sorted(counts.items())))
    report.item('worker CPU over the window', '%.2f s in %.0f s = %.1f%% '
                'of one core' % (cpu, elapsed, result['cpu']))
    report.item('worker threads', 'idle before the casts %d; window start '
                '%d, end %d (min %d, max %d over %d samples)' % (
                    idle['threads'], first['threads'], last['threads'],
                    min(threads), max(threads), len(samples)))
    report.item('worker RSS', 'idle %s; window start %s, end %s' % (
        mib(idle['rss']), mib(first['rss']), mib(last['rss'])))
    report.item('poll passes ending in the window', '%d (%d checked all '
                '%d; checked: %s)' % (
                    len(passes), len(full), count,
                    ', '.join(str(p[1]) for p in passes) or '-'))
    report.item('poll pass duration p50 / p99 / max',
                spread([p[2] for p in full]))
    report.item('time between pass ends', spread(gaps, digits=2))
    report.item('fake Trove requests in the window', '%s (%.1f /s)' % (
        ', '.join('%s %d' % item for item in sorted(requests.items())),
        sum(requests.values()) / elapsed))
    period = sum(gaps) / len(gaps) if gaps else float('nan')
    report.item('show backup rate vs one per backup a pass',
                '%.1f /s measured, %.1f /s expected (%d backups every %.1f '
                's, the mean time between pass ends)' % (
                    requests['show backup'] / elapsed, count / period,
                    count, period))
    report.item('machine, during the window',
                machine_usage(before, after, cpu))
    for profiler in profilers:
        report_profile(report, profiler, elapsed, args.profile_top)
    report.item('worker stop', stopped)
    report.item('worker log', log_levels(log))
    return result


def report_in_flight(report, results):
    report.section('In-flight monitoring compared')
    for result in results:
        report.item('%d backups' % result['count'],
                    'CPU %.1f%% of a core; threads start %d / end %d '
                    '(min %d, max %d; idle %d); RSS %s; pass p50 %.2f s; '
                    'show backup %.1f /s' % (
                        result['cpu'], *result['threads'],
                        result['idle_threads'], mib(result['rss']),
                        percentile(sorted(result['passes']), 0.5),
                        result['rate']))


# Consume + claim throughput.

def run_claims(bench):
    args, report = bench.args, bench.report
    count, per_message = args.claims, args.per_message
    db = bench.new_database('claims')
    progress('claims: seeding %d executions into %s', count, db.name)
    ids = seed(db, ['instance-%d' % n for n in range(count)], 'fake',
               {'fake_build_seconds': args.fake_build_seconds})
    startup = bench.start_workers(args.workers, 'claims', False)
    if args.wait_idle:
        wait_for_idle(args.wait_idle)
    sampler = Sampler(bench.workers, args.sample_interval)
    sampler.take()
    profilers = bench.profile('claims')
    before = machine_snapshot()
    cast_start, cast_end = bench.cast(ids, per_message)
    backlog, consumers = bench.queue_state()
    progress('claims: cast in %.1f s; %s messages still queued', cast_end
             - cast_start, backlog)
    claimed = sa.select(sa.func.count(EXECUTIONS.c.started_at))
    started = sa.select(sa.func.count()).where(sa.or_(
        EXECUTIONS.c.backup_id.is_not(None),
        EXECUTIONS.c.status.in_(('SUCCEEDED', 'FAILED', 'SKIPPED'))))

    def all_started():
        done = db.scalar(started)
        if done >= count:
            return True
        return '%d claimed, %d backups started of %d' % (
            db.scalar(claimed), done, count)
    finished = bench.wait(all_started, 'claims', args.timeout)
    seen = time.time()
    sampler.take()
    after = machine_snapshot()
    for profiler in profilers:
        profiler.stop()
    rows = db.rows(sa.select(
        EXECUTIONS.c.owner, EXECUTIONS.c.started_at, EXECUTIONS.c.attempts,
        EXECUTIONS.c.status, EXECUTIONS.c.backup_id))
    stopped = bench.stop_workers()
    logs = [worker.log() for worker in bench.workers]
    bench.drop_database()

    claims = sorted((row for row in rows if row.started_at is not None),
                    key=lambda row: row.started_at)
    if not claims:
        report.section('Claims: nothing was claimed')
        return
    first = claims[0].started_at.timestamp()
    last = claims[-1].started_at.timestamp()
    starts = sorted(when for log in logs for when in backup_starts(log))
    cpu = {}
    for worker in bench.workers:
        samples = sampler.samples[worker.number]
        cpu[worker.number] = samples[-1]['cpu'] - samples[0]['cpu']
    number_of = {w.service_id: w.number for w in bench.workers}
    messages = math.ceil(count / per_message)

    report.section('Consume + claim: %d executions, %d worker(s), %d per '
                   'message' % (count, args.workers, per_message))
    report.item('backend', 'fake (in memory), fake_build_seconds = %g'
                % args.fake_build_seconds)
    report.item('worker options', ', '.join(args.worker_option) or
                'defaults (pool_size 16, poll_interval 15)')
    report.item('worker start-up (launch -> listening)', '%.1f s' % startup)
    report.item('cast', '%d messages in %.2f s (%.0f messages/s, %.0f '
                'executions/s); %s still queued at its end; %s consumers'
                % (messages, cast_end - cast_start,
                   messages / max(cast_end - cast_start, 1e-6),
                   count / max(cast_end - cast_start, 1e-6), backlog,
                   consumers))
    report.item('claimed', '%d of %d%s' % (len(claims), count,
                                           '' if finished else ' TIMEOUT'))
    report.item('claim rate, first -> last started_at',
                '%.0f /s  (%d in %.2f s)' % (
                    len(claims) / max(last - first, 1e-6), len(claims),
                    last - first))
    report.item('wall time, first cast -> last started_at',
                '%.2f s  (%.0f /s; the first claim came %.3f s after the '
                'first cast)' % (last - cast_start,
                                 len(claims) / (last - cast_start),
                                 first - cast_start))
    if starts:
        report.item('wall time, first cast -> last backup started',
                    '%.2f s  (%.0f /s; %d "backup started" log lines)' % (
                        starts[-1] - cast_start,
                        len(starts) / (starts[-1] - cast_start),
                        len(starts)))
    report.item('claims per second (started_at)', ' '.join(
        str(n) for n in per_second(
            [row.started_at.timestamp() - first for row in claims])))
    if starts:
        report.item('backups started per second (log)', ' '.join(
            str(n) for n in per_second([when - first for when in starts])))
    shares = collections.Counter(row.owner for row in claims)
    for owner, taken in sorted(shares.items(), key=lambda item: str(
            number_of.get(item[0]))):
        mine = [row.started_at.timestamp() for row in claims
                if row.owner == owner]
        number = number_of.get(owner, '?')
        used = cpu.get(number, float('nan'))
        report.item('worker %s' % number,
                    '%d claims (%.1f%%), %.0f /s over its own %.2f s; CPU '
                    '%.1f s (%.2f ms per execution)' % (
                        taken, 100 * taken / len(claims),
                        taken / max(mine[-1] - mine[0], 1e-6),
                        mine[-1] - mine[0], used, 1000 * used / taken))
    report.item('claimed more than once (attempts > 1)',
                sum(1 for row in claims if row.attempts > 1))
    states = collections.Counter(row.status for row in rows)
    report.item('statuses when all had started', ', '.join(
        '%s %d' % item for item in sorted(states.items())))
    report.item('backups recorded (backup_id set)',
                sum(1 for row in rows if row.backup_id))
    report.item('machine, first cast -> all started',
                machine_usage(before, after, sum(cpu.values())))
    for profiler in profilers:
        report_profile(report, profiler, seen - before[0], args.profile_top)
    report.item('worker stop', '; '.join(stopped))
    report.item('worker logs', '; '.join(log_levels(log) for log in logs))


def backup_starts(log):
    """POSIX times of the worker's "backup ... started" INFO lines."""
    return [log_time(match.group(1), match.group(2))
            for match in BACKUP_STARTED.finditer(log)]


def per_second(offsets):
    counts = collections.Counter(int(offset) for offset in offsets)
    return [counts.get(second, 0) for second in range(int(max(offsets)) + 1)]


# The report's header and the command line.

def machine_lines(bench):
    report = bench.report
    report.section('Machine and versions')
    with open('/proc/meminfo') as stream:
        memory = int(stream.readline().split()[1]) * 1024
    model = platform.processor()
    with open('/proc/cpuinfo') as stream:
        for line in stream:
            if line.startswith('model name'):
                model = line.split(':', 1)[1].strip()
                break
    report.item('date (UTC)', timeutils.utcnow().strftime('%Y-%m-%d %H:%M'))
    report.item('CPUs (nproc)', '%d x %s' % (len(os.sched_getaffinity(0)),
                                             model))
    report.item('memory', '%.1f GiB' % (memory / 2 ** 30))
    report.item('kernel / python', '%s / %s' % (platform.release(),
                                                platform.python_version()))
    report.item('dbaas-scheduler', '%s (git %s)' % (
        version.version_string(), git_revision()))
    for server in sorted(VERSIONS):
        report.item('database', server)
    report.item('broker', broker_version(bench.transport_url))
    report.item('libraries', ', '.join(
        '%s %s' % (name, module_version(name)) for name in (
            'oslo.messaging', 'oslo.service', 'oslo.db', 'SQLAlchemy',
            'psycopg2-binary', 'PyMySQL', 'kombu', 'keystoneauth1',
            'futurist')))
    report.item('command', ' '.join(sys.argv))
    report.item('work directory', bench.workdir)


def broker_version(transport_url):
    with kombu.Connection(
            transport_url.replace('rabbit://', 'amqp://', 1)) as conn:
        conn.connect()
        value = conn.connection.server_properties.get('version', '?')
        return 'RabbitMQ %s' % (value.decode() if isinstance(value, bytes)
                                else value)


def module_version(name):
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return '-'


def git_revision():
    """The commit measured, and the package files changed since it."""
    def git(*args):
        return subprocess.run(
            ('git',) + args, cwd=os.path.dirname(os.path.abspath(__file__)),
            capture_output=True, text=True, check=True).stdout.rstrip()
    try:
        changed = git('status', '--porcelain', '--', '../dbaas_scheduler')
        revision = git('rev-parse', '--short', 'HEAD')
    except (OSError, subprocess.CalledProcessError):
        return '?'
    if changed:
        revision += '; uncommitted changes to %s' % ', '.join(
            line[3:] for line in changed.splitlines())
    return revision


def sizes(text):
    return [int(size) for size in text.split(',') if size]


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='See doc/source/contributor/benchmarks.rst.')
    parser.add_argument('--database', choices=('postgresql', 'mysql'),
                        default='postgresql',
                        help='Database server on 127.0.0.1 (default: '
                             'postgresql; mysql means MariaDB/MySQL).')
    parser.add_argument('--admin-url',
                        help='Server URL used to create and drop the '
                             'database (default: %s)' % ADMIN_URLS)
    parser.add_argument('--database-name', default='dbaas_bench_worker',
                        help='Prefix of the databases created (a suffix '
                             'names the run).')
    parser.add_argument('--transport-url', default=DEFAULT_TRANSPORT_URL)
    parser.add_argument('--in-flight', type=sizes, metavar='N[,N...]',
                        help='In-flight monitoring, once at each number of '
                             'running backups (e.g. 1000,5000).')
    parser.add_argument('--seconds', type=float, default=120,
                        help='In-flight: length of the measurement window '
                             '(default 120).')
    parser.add_argument('--new-seconds', type=float, default=0.0,
                        help='In-flight: seconds a fake Trove backup stays '
                             'NEW (default 0).')
    parser.add_argument('--build-seconds', type=float, default=3600.0,
                        help='In-flight: seconds it then stays BUILDING; '
                             'must outlast the start and the window '
                             '(default 3600).')
    parser.add_argument('--claims', type=int, metavar='N',
                        help='Consume + claim throughput of N executions.')
    parser.add_argument('--workers', type=int, default=2,
                        help='Claims: worker processes (default 2).')
    parser.add_argument('--fake-build-seconds', type=float, default=0.0,
                        help='Claims: the fake backend\'s backup duration '
                             '(default 0).')
    parser.add_argument('--per-message', type=int, default=20,
                        help='Executions per cast (default 20, as the '
                             'engine\'s executions_per_message; 1 uses '
                             'backup_database_instance).')
    parser.add_argument('--worker-option', action='append', default=[],
                        metavar='[GROUP.]NAME=VALUE',
                        help='Any worker option (repeatable; GROUP '
                             'defaults to worker).')
    parser.add_argument('--sample-interval', type=float, default=1.0,
                        help='Seconds between samples of the workers\' CPU, '
                             'threads and RSS (default 1).')
    parser.add_argument('--timeout', type=float, default=600,
                        help='Longest wait for the backups to start or the '
                             'executions to be claimed (default 600).')
    parser.add_argument('--wait-idle', type=float, default=0,
                        metavar='SECONDS',
                        help='Before each measurement, wait up to this long '
                             'for the machine to be at least 90%% idle.')
    parser.add_argument('--py-spy', metavar='PATH',
                        help='Profile each worker child with this py-spy '
                             'binary during the measurement (it costs some '
                             'CPU: compare the figures with a run without).')
    parser.add_argument('--profile-top', type=int, default=12,
                        help='Functions listed from each profile '
                             '(default 12).')
    parser.add_argument('--keep', action='store_true',
                        help='Keep the databases at the end.')
    parser.add_argument('--workdir',
                        help='Configs, logs and report (default: a new '
                             'temporary directory).')
    args = parser.parse_args(argv)
    if not args.in_flight and not args.claims:
        parser.error('give --in-flight N[,N...] and/or --claims N')
    if args.per_message < 1 or args.workers < 1:
        parser.error('--per-message and --workers must be at least 1')
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = Report()
    bench = Bench(args, report)
    report.add('dbaas-scheduler worker benchmark')
    report.add('================================')
    try:
        if args.in_flight:
            results = [run_in_flight(bench, count)
                       for count in args.in_flight]
            if len(results) > 1:
                report_in_flight(report, results)
        if args.claims:
            run_claims(bench)
        machine_lines(bench)
    finally:
        bench.close()
        if bench.db is not None:
            bench.drop_database()
    path = os.path.join(bench.workdir, 'report.txt')
    with open(path, 'w') as stream:
        stream.write(report.text())
    progress('report written to %s', path)
    return 0


if __name__ == '__main__':
    sys.exit(main())
