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
"""Benchmark real dbaas-scheduler-engine processes on a real database.

Burst: N policies due at one instant, K engines, optional SIGKILLs::

    python tools/benchmark_engine.py --database postgresql \\
        --policies 100000 --engines 1 --baseline
    python tools/benchmark_engine.py --database postgresql \\
        --policies 100000 --engines 3 --kill 4

Steady state: 'H H * * *' policies, one engine for M minutes::

    python tools/benchmark_engine.py --database postgresql --steady \\
        --compare-rss 10000,1000000 --minutes 3 --reuse

The benchmark creates a database of its own (dropped at the end unless
``--keep`` or ``--reuse``), RabbitMQ topics unique to the run (their queues
are deleted at the end), and a work directory with the engines' configs and
logs.  ``doc/source/contributor/benchmarks.rst`` explains every figure.
"""

import argparse
import collections
import configparser
import datetime
import io
import json
import math
import multiprocessing
import os
import platform
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
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
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler import schedule
from dbaas_scheduler import version

EPOCH = datetime.datetime(1970, 1, 1)
DAY = 86400
BURST_SCHEDULE = '0 3 * * *'
STEADY_SCHEDULE = 'H H * * *'
# oslo.messaging's default control exchange, where casts are published.
CONTROL_EXCHANGE = 'openstack'
SEED_CHUNK = 5000
ADMIN_URLS = {
    'postgresql': 'postgresql+psycopg2://postgres@127.0.0.1:5432/postgres',
    'mysql': 'mysql+pymysql://root:@127.0.0.1:3306/',
}
DEFAULT_TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'
POLICY_COLUMNS = ('id', 'name', 'project_id', 'instance_id', 'backend',
                  'schedule_type', 'schedule', 'timezone', 'enabled',
                  'overlap_policy', 'created_at', 'next_execution_time')

_STARTED = time.time()
# Server versions of the databases used, for the report.
VERSIONS = set()


def progress(message, *args):
    """A progress line on stderr; the report itself goes to stdout."""
    print('[%7.1fs] %s' % (time.time() - _STARTED, message % args),
          file=sys.stderr, flush=True)


def epoch(naive_utc):
    return (naive_utc - EPOCH).total_seconds()


def db_time(seconds):
    """A naive UTC datetime, as the database stores it, from epoch time."""
    return EPOCH + datetime.timedelta(seconds=seconds)


def db_string(naive_utc):
    return naive_utc.strftime('%Y-%m-%d %H:%M:%S.%f')


def percentile(ordered, fraction):
    """Nearest-rank percentile of an already sorted list."""
    if not ordered:
        return float('nan')
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def spread(values):
    """'p50 / p99 / max' of a list of seconds."""
    ordered = sorted(values)
    if not ordered:
        return 'n/a (no values)'
    return '%.3f s / %.3f s / %.3f s  (n=%d)' % (
        percentile(ordered, 0.5), percentile(ordered, 0.99), ordered[-1],
        len(ordered))


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

    def __init__(self, backend, name=None, url=None, admin_url=None):
        if url:
            self.url = sa_url.make_url(url)
            self.owned = False
        else:
            self.admin_url = sa_url.make_url(admin_url or ADMIN_URLS[backend])
            self.url = self.admin_url.set(database=name)
            self.owned = True
        self.name = self.url.database
        self.backend = ('mysql' if self.url.get_backend_name()
                        in ('mysql', 'mariadb') else 'postgresql')
        self.engine = None

    @property
    def url_string(self):
        return self.url.render_as_string(hide_password=False)

    def _admin(self, statement):
        engine = sa.create_engine(self.admin_url,
                                  isolation_level='AUTOCOMMIT')
        try:
            with engine.connect() as connection:
                result = connection.execute(sa.text(statement))
                return result.all() if result.returns_rows else None
        finally:
            engine.dispose()

    def exists(self):
        if not self.owned:
            return True
        if self.backend == 'postgresql':
            return bool(self._admin(
                "SELECT 1 FROM pg_database WHERE datname = '%s'" % self.name))
        return bool(self._admin(
            "SELECT 1 FROM information_schema.schemata "
            "WHERE schema_name = '%s'" % self.name))

    def create(self):
        """A new, empty database (an old one of the same name is dropped)."""
        if not self.owned:
            self.connect()
            self.execute('DROP TABLE IF EXISTS backup_execution, '
                         'backup_policy, service, alembic_version')
            return
        self.drop()
        if self.backend == 'postgresql':
            self._admin('CREATE DATABASE "%s"' % self.name)
        else:
            self._admin('CREATE DATABASE `%s` CHARACTER SET utf8mb4'
                        % self.name)
        self.connect()

    def drop(self):
        self.dispose()
        if not self.owned:
            return
        if self.backend == 'postgresql':
            self._admin('DROP DATABASE IF EXISTS "%s" WITH (FORCE)'
                        % self.name)
        else:
            self._admin('DROP DATABASE IF EXISTS `%s`' % self.name)

    def connect(self):
        if self.engine is None:
            self.engine = sa.create_engine(self.url, pool_size=2)
            VERSIONS.add(self.server_version())

    def dispose(self):
        if self.engine is not None:
            self.engine.dispose()
            self.engine = None

    def execute(self, statement, **params):
        with self.engine.begin() as connection:
            return connection.execute(sa.text(statement), params).rowcount

    def scalar(self, statement, **params):
        with self.engine.connect() as connection:
            return connection.execute(sa.text(statement), params).scalar()

    def rows(self, statement, **params):
        with self.engine.connect() as connection:
            return connection.execute(sa.text(statement), params).all()

    def server_version(self):
        """The server's version and the settings that bound commit cost."""
        if self.backend == 'postgresql':
            return ('PostgreSQL %s (synchronous_commit=%s, '
                    'shared_buffers=%s)' % (
                        self.scalar('SHOW server_version'),
                        self.scalar('SHOW synchronous_commit'),
                        self.scalar('SHOW shared_buffers')))
        row = self.rows('SELECT VERSION(), @@innodb_flush_log_at_trx_commit, '
                        '@@innodb_buffer_pool_size')[0]
        return ('MariaDB/MySQL %s (innodb_flush_log_at_trx_commit=%s, '
                'innodb_buffer_pool_size=%d MiB)' % (
                    row[0], row[1], int(row[2]) // 2 ** 20))

    def vacuum(self, table='backup_policy'):
        """Clean and analyse a table, so every run starts from the same."""
        if self.backend == 'postgresql':
            with self.engine.connect().execution_options(
                    isolation_level='AUTOCOMMIT') as connection:
                connection.execute(sa.text('VACUUM ANALYZE %s' % table))
        else:
            self.rows('ANALYZE TABLE %s' % table)

    def copy_policies(self, rows):
        """Insert policy rows (tuples in POLICY_COLUMNS order), fast.

        PostgreSQL: COPY.  MariaDB: one multi-row INSERT per SEED_CHUNK
        rows (PyMySQL turns executemany into multi-row statements).
        """
        raw = self.engine.raw_connection()
        try:
            cursor = raw.cursor()
            columns = ', '.join(POLICY_COLUMNS)
            for start in range(0, len(rows), SEED_CHUNK * 20):
                chunk = rows[start:start + SEED_CHUNK * 20]
                if self.backend == 'postgresql':
                    data = io.StringIO(''.join(
                        '\t'.join(str(value) for value in row) + '\n'
                        for row in chunk))
                    cursor.copy_expert('COPY backup_policy (%s) FROM STDIN'
                                       % columns, data)
                else:
                    sql = 'INSERT INTO backup_policy (%s) VALUES (%s)' % (
                        columns, ', '.join(['%s'] * len(POLICY_COLUMNS)))
                    for offset in range(0, len(chunk), SEED_CHUNK):
                        cursor.executemany(
                            sql, chunk[offset:offset + SEED_CHUNK])
            raw.commit()
        finally:
            raw.close()


def policy_row(number, policy_id, schedule_text, next_time, created):
    return (policy_id, 'bench-%d' % number, 'project-%d' % (number % 100),
            'instance-%d' % number, 'trove', 'cron', schedule_text, 'UTC',
            True, 'skip', created, next_time)


def _steady_chunk(count, seed_time):
    """Ids and their next 'H H * * *' run after seed_time (a worker job)."""
    after = db_time(seed_time).replace(tzinfo=datetime.timezone.utc)
    by_share_key = {}
    result = []
    for _ in range(count):
        policy_id = str(uuid.uuid4())
        sched = schedule.parse_schedule('cron', STEADY_SCHEDULE, 'UTC',
                                        hash_key=policy_id)
        key = sched.share_key
        if key not in by_share_key:
            by_share_key[key] = db_string(
                sched.next_time(after).replace(tzinfo=None))
        result.append((policy_id, by_share_key[key]))
    return result


def seed_burst(db, count, next_time):
    created = db_string(timeutils.utcnow())
    due = db_string(next_time)
    rows = [policy_row(number, str(uuid.uuid4()), BURST_SCHEDULE, due,
                       created) for number in range(count)]
    db.copy_policies(rows)


def seed_steady(db, count, processes):
    """Policies on 'H H * * *', each at its real next run time.

    Parsing a hashed schedule costs 0.2 to 0.7 ms per policy (croniter's
    expansion), so it is done in a pool; run times are computed once per
    share_key (croniter's H gives 'H H' only 240 distinct (hour, minute)
    pairs).
    """
    created = timeutils.utcnow()
    seed_time = epoch(created)
    chunk = 20000
    sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
    context = multiprocessing.get_context('spawn')
    with context.Pool(processes) as pool:
        parts = pool.starmap(_steady_chunk,
                             [(size, seed_time) for size in sizes])
    created = db_string(created)
    rows = []
    for part in parts:
        for policy_id, next_time in part:
            rows.append(policy_row(len(rows), policy_id, STEADY_SCHEDULE,
                                   next_time, created))
    db.copy_policies(rows)


# RabbitMQ and the stand-in worker.

class _Received:
    """What the stand-in worker was sent: id -> [deliveries, first time]."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        self.ids = {}
        self.new = []
        self.deliveries = 0
        self.messages = collections.Counter()
        self.last = None

    def record(self, method, execution_ids):
        now = time.time()
        with self.lock:
            self.messages[method] += 1
            self.last = now
            for execution_id in execution_ids:
                self.deliveries += 1
                seen = self.ids.get(execution_id)
                if seen is None:
                    self.ids[execution_id] = [1, now]
                    self.new.append(execution_id)
                else:
                    seen[0] += 1

    def answer(self, command):
        with self.lock:
            if command == 'status':
                return {'unique': len(self.ids),
                        'deliveries': self.deliveries,
                        'messages': dict(self.messages), 'last': self.last}
            if command == 'take':
                new, self.new = self.new, []
                return new
            if command == 'ids':
                return self.ids
            if command == 'reset':
                self.reset()
                return True
        raise ValueError(command)


def _serve_commands(pipe, received, wait):
    while True:
        wait()
        while pipe.poll():
            command = pipe.recv()
            if command == 'stop':
                return
            pipe.send(received.answer(command))


def _consume_kombu(pipe, transport_url, topic):
    received = _Received()
    with kombu.Connection(transport_url.replace('rabbit://', 'amqp://', 1),
                          heartbeat=0) as connection:
        # The queue and exchange exactly as oslo.messaging's topic
        # consumer declares them (non-durable, not auto-deleted).
        exchange = kombu.Exchange(CONTROL_EXCHANGE, type='topic',
                                  durable=False, auto_delete=False)
        queue = kombu.Queue(topic, exchange, routing_key=topic,
                            durable=False, auto_delete=False)

        def on_message(body, message):
            call = json.loads(body['oslo.message'])
            args = call['args']
            received.record(call['method'],
                            args.get('execution_ids')
                            or [args['execution_id']])

        with connection.Consumer(queue, callbacks=[on_message], no_ack=True,
                                 prefetch_count=1000):
            pipe.send('ready')

            def wait():
                try:
                    connection.drain_events(timeout=0.05)
                except socket.timeout:
                    pass
            _serve_commands(pipe, received, wait)


def _consume_oslo(pipe, config_file, topic):
    # Imported here: this module's top imports select the threading backend
    # first, and only the oslo consumer needs oslo.messaging directly.
    import oslo_messaging as messaging

    received = _Received()

    class RecordingEndpoint:
        target = messaging.Target(version='1.1')

        def backup_database_instance(self, context, execution_id):
            received.record('backup_database_instance', [execution_id])

        def backup_database_instances(self, context, execution_ids):
            received.record('backup_database_instances', execution_ids)

    config.parse_args(cfg.CONF, ['--config-file', config_file])
    rpc.init(cfg.CONF)
    server = rpc.get_server(
        messaging.Target(topic=topic, server=cfg.CONF.host),
        [RecordingEndpoint()])
    server.start()
    pipe.send('ready')
    try:
        _serve_commands(pipe, received, lambda: pipe.poll(0.05))
    finally:
        server.stop()
        server.wait()
        rpc.cleanup()


def _consumer_main(kind, pipe, transport_url, config_file, topic):
    if kind == 'kombu':
        _consume_kombu(pipe, transport_url, topic)
    else:
        _consume_oslo(pipe, config_file, topic)


class Consumer:
    """The stand-in worker, in a process of its own (no GIL sharing)."""

    def __init__(self, kind, transport_url, config_file, topic):
        self.kind = kind
        context = multiprocessing.get_context('spawn')
        self.pipe, child = context.Pipe()
        self.process = context.Process(
            target=_consumer_main, daemon=True,
            args=(kind, child, transport_url, config_file, topic))
        self.process.start()
        if not self.pipe.poll(60) or self.pipe.recv() != 'ready':
            raise RuntimeError('the consumer did not start')

    def ask(self, command):
        self.pipe.send(command)
        return self.pipe.recv()

    def cpu_seconds(self):
        times = psutil.Process(self.process.pid).cpu_times()
        return times.user + times.system

    def wait_for(self, expected, timeout=120, quiet=10):
        """Wait until ``expected`` distinct ids have arrived.

        Gives up when nothing has arrived for ``quiet`` seconds, or after
        ``timeout``; returns the last status.
        """
        deadline = time.time() + timeout
        while time.time() < deadline:
            status = self.ask('status')
            if status['unique'] >= expected:
                return status
            if status['last'] and time.time() - status['last'] > quiet:
                return status
            time.sleep(0.2)
        return self.ask('status')

    def stop(self):
        try:
            self.pipe.send('stop')
        except (OSError, ValueError):
            pass
        self.process.join(10)
        if self.process.is_alive():
            self.process.kill()


def delete_queues(transport_url, names):
    try:
        with kombu.Connection(
                transport_url.replace('rabbit://', 'amqp://', 1)) as conn:
            channel = conn.channel()
            for name in names:
                channel.queue_delete(name)
    except Exception as exc:
        progress('could not delete queues %s: %s', names, exc)


def broker_version(transport_url):
    with kombu.Connection(
            transport_url.replace('rabbit://', 'amqp://', 1)) as conn:
        conn.connect()
        value = conn.connection.server_properties.get('version', '?')
        return 'RabbitMQ %s' % (value.decode() if isinstance(value, bytes)
                                else value)


# Engine processes.

def write_config(path, sections):
    parser = configparser.ConfigParser(interpolation=None)
    for group, options in sections.items():
        parser[group] = {name: str(value) for name, value in options.items()}
    with open(path, 'w') as stream:
        parser.write(stream)


def read_vm(pid, field):
    """VmHWM / VmRSS of a process, in bytes (0 if it is gone)."""
    try:
        with open('/proc/%d/status' % pid) as stream:
            for line in stream:
                if line.startswith(field + ':'):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


class Incarnation:
    """One start of an engine: the launcher and the child it forks."""

    def __init__(self, popen):
        self.popen = popen
        self.started = time.time()
        self.ended = None
        self.how = 'running'
        # pid -> {'role', 'cpu', 'hwm', 'rss'}: the last sample.
        self.procs = {}

    def sample(self):
        try:
            launcher = psutil.Process(self.popen.pid)
            procs = [launcher] + launcher.children(recursive=True)
        except psutil.Error:
            return
        for proc in procs:
            try:
                times = proc.cpu_times()
            except psutil.Error:
                continue
            entry = self.procs.setdefault(proc.pid, {
                'role': 'launcher' if proc.pid == self.popen.pid
                else 'worker', 'cpu': 0.0, 'hwm': 0, 'rss': 0})
            entry['cpu'] = max(entry['cpu'], times.user + times.system)
            hwm = read_vm(proc.pid, 'VmHWM')
            if hwm:
                entry['hwm'] = max(entry['hwm'], hwm)
                entry['rss'] = read_vm(proc.pid, 'VmRSS')

    def cpu(self, role=None):
        return sum(entry['cpu'] for entry in self.procs.values()
                   if role in (None, entry['role']))

    def hwm(self, role):
        return max([entry['hwm'] for entry in self.procs.values()
                    if entry['role'] == role] or [0])


class EngineProcess:
    """A dbaas-scheduler-engine in its own session (process group)."""

    def __init__(self, number, command, config_file, log_file):
        self.number = number
        self.command = command
        self.config_file = config_file
        self.log_file = log_file
        self.incarnations = []
        self.lock = threading.Lock()

    @property
    def current(self):
        return self.incarnations[-1] if self.incarnations else None

    def start(self):
        with open(self.log_file, 'ab') as log:
            popen = subprocess.Popen(
                [self.command, '--config-file', self.config_file],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        with self.lock:
            self.incarnations.append(Incarnation(popen))

    def alive(self):
        current = self.current
        return current is not None and current.popen.poll() is None

    def sample(self):
        with self.lock:
            if self.alive():
                self.current.sample()

    def _ended(self, how):
        self.current.ended = time.time()
        self.current.how = how

    def kill(self):
        """SIGKILL the whole process group: launcher and child."""
        self.sample()
        with self.lock:
            try:
                os.killpg(self.current.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.current.popen.wait()
            self._ended('SIGKILL')

    def terminate(self, timeout=60):
        if not self.alive():
            return
        self.sample()
        with self.lock:
            self.current.popen.send_signal(signal.SIGTERM)
            try:
                self.current.popen.wait(timeout)
                self._ended('SIGTERM (exit %d)'
                            % self.current.popen.returncode)
            except subprocess.TimeoutExpired:
                os.killpg(self.current.popen.pid, signal.SIGKILL)
                self.current.popen.wait()
                self._ended('SIGKILL after a SIGTERM timeout')

    def log(self):
        with open(self.log_file, errors='replace') as stream:
            return stream.read()


class Sampler(threading.Thread):
    """Samples the engines' CPU time and peak RSS every quarter second."""

    def __init__(self, engines, interval=0.25):
        super().__init__(daemon=True)
        self.engines = engines
        self.interval = interval
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.wait(self.interval):
            for engine in list(self.engines):
                engine.sample()

    def stop(self):
        self.stopping.set()
        self.join()


# Where the machine's CPU time goes while something is measured.
_SERVERS = {'postgres': 'PostgreSQL', 'mariadbd': 'MariaDB',
            'mysqld': 'MySQL', 'beam.smp': 'RabbitMQ'}


def machine_snapshot(consumer=None):
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
    if consumer is not None:
        known[('stand-in worker', 0)] = consumer.cpu_seconds()
    return time.time(), ticks, known


def machine_usage(before, after, engines):
    """What happened between two snapshots, as one line.

    CPU seconds of the engines (given), the servers, the stand-in worker
    and this process; what the rest of the machine used ("other": another
    test run or benchmark on the same machine makes the figures
    unreliable); the idle and steal shares (steal: time the hypervisor gave
    to other guests).
    """
    elapsed = after[0] - before[0]
    ticks = [b - a for a, b in zip(before[1], after[1])]
    total = max(sum(ticks), 1)
    used = collections.Counter({'engines': engines})
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
    """Wait up to ``limit`` seconds for the machine to be idle.

    Another test run or benchmark sharing the machine makes the figures
    unreliable.
    """
    deadline = time.time() + limit
    while True:
        with open('/proc/stat') as stream:
            before = [int(v) for v in stream.readline().split()[1:9]]
        time.sleep(2)
        with open('/proc/stat') as stream:
            after = [int(v) for v in stream.readline().split()[1:9]]
        ticks = [b - a for a, b in zip(before, after)]
        idle = (ticks[3] + ticks[4]) / max(sum(ticks), 1)
        if idle >= 0.9 or time.time() >= deadline:
            if idle < 0.9:
                progress('warning: the machine is still %.0f%% busy',
                         100 * (1 - idle))
            return
        progress('waiting for the machine to be idle (%.0f%% busy)',
                 100 * (1 - idle))


def program(name):
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else shutil.which(name) or name


# One invocation: database, topics, consumer, engines.

class Bench:

    def __init__(self, args, report):
        self.args = args
        self.report = report
        self.workdir = args.workdir or tempfile.mkdtemp(prefix='dbaas-bench-')
        os.makedirs(self.workdir, exist_ok=True)
        prefix = 'dbaas-bench-%s' % uuid.uuid4().hex[:10]
        self.worker_topic = prefix + '-worker'
        self.engine_topic = prefix + '-engine'
        self.host = socket.gethostname()
        self.transport_url = args.transport_url
        self.consumer = None
        self.engines = []
        self.sampler = None
        self.rng = random.Random(args.seed)
        self.config_file = None
        self.db = None

    def queues(self):
        return [name for topic in (self.worker_topic, self.engine_topic)
                for name in (topic, '%s.%s' % (topic, self.host))]

    def use_database(self, db):
        """Point the benchmark (config files, schema) at ``db``."""
        self.db = db
        self.config_file = os.path.join(self.workdir, 'benchmark.conf')
        write_config(self.config_file, {
            'DEFAULT': {'transport_url': self.transport_url,
                        'log_file': os.path.join(self.workdir,
                                                 'benchmark.log')},
            'database': {'connection': db.url_string},
            'engine': {'topic': self.engine_topic},
            'worker': {'topic': self.worker_topic},
        })

    def upgrade_schema(self):
        subprocess.run([program('dbaas-scheduler-manage'), '--config-file',
                        self.config_file, 'db', 'upgrade'], check=True,
                       stdout=subprocess.DEVNULL)

    def start_consumer(self):
        if self.consumer is None:
            self.consumer = Consumer(self.args.consumer, self.transport_url,
                                     self.config_file, self.worker_topic)

    def engine_options(self, steady):
        args = self.args
        options = {'topic': self.engine_topic,
                   'batch_size': args.batch_size,
                   'executions_per_message': args.executions_per_message}
        # A burst that outlasts dispatch_timeout has its first executions
        # cast again (and dispatched_at stamped again), which blurs the
        # figures; with --kill the sweep must cast the orphans within the run.
        defaults = ((1.0, 10.0, 60) if steady else
                    (0.2, 1.0, 60 if args.kill else 600))
        for name, given, default in zip(
                ('scan_interval', 'sweep_interval', 'dispatch_timeout'),
                (args.scan_interval, args.sweep_interval,
                 args.dispatch_timeout), defaults):
            options[name] = default if given is None else given
        sections = {'engine': options}
        for option in args.engine_option:
            name, _, value = option.partition('=')
            group, _, name = name.rpartition('.')
            sections.setdefault(group or 'engine', {})[name] = value
        return sections

    def add_engine(self, steady=False):
        number = len(self.engines)
        sections = {
            'DEFAULT': {'transport_url': self.transport_url,
                        'log_file': os.path.join(
                            self.workdir, 'engine-%d.log' % number),
                        'graceful_shutdown_timeout': 30},
            'database': {'connection': self.db.url_string,
                         'max_retries': -1, 'retry_interval': 1},
            'worker': {'topic': self.worker_topic},
            'oslo_messaging_rabbit': {'rabbit_retry_interval': 1,
                                      'rabbit_retry_backoff': 1},
        }
        for group, options in self.engine_options(steady).items():
            sections.setdefault(group, {}).update(options)
        config_file = os.path.join(self.workdir, 'engine-%d.conf' % number)
        write_config(config_file, sections)
        engine = EngineProcess(number, program('dbaas-scheduler-engine'),
                               config_file, sections['DEFAULT']['log_file'])
        self.engines.append(engine)
        return engine

    def start_sampler(self):
        self.sampler = Sampler(self.engines)
        self.sampler.start()

    def stop_engines(self):
        for engine in self.engines:
            engine.terminate()
        if self.sampler is not None:
            self.sampler.stop()
            self.sampler = None

    def registered_engines(self):
        return self.db.scalar(
            "SELECT count(*) FROM service "
            "WHERE \"binary\" = 'dbaas-scheduler-engine'"
            if self.db.backend == 'postgresql' else
            "SELECT count(*) FROM service "
            "WHERE `binary` = 'dbaas-scheduler-engine'")

    def wait_registered(self, count, timeout=60):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.registered_engines() >= count:
                return True
            time.sleep(0.1)
        return False

    def close(self):
        for engine in self.engines:
            if engine.alive():
                engine.kill()
        if self.consumer is not None:
            self.consumer.stop()
        delete_queues(self.transport_url, self.queues())


# The burst.

def reset_burst(db, due):
    """Every policy due at ``due``; no executions; no service rows."""
    db.execute('DELETE FROM backup_execution')
    db.execute('DELETE FROM service')
    armed = db.execute(
        'UPDATE backup_policy SET next_execution_time = :due, '
        'enabled = :enabled, paused_reason = NULL, '
        'last_execution_id = NULL', due=due, enabled=True)
    db.vacuum('backup_policy')
    db.vacuum('backup_execution')
    return armed


def burst_progress(db):
    now = timeutils.utcnow()
    due = db.scalar('SELECT count(*) FROM backup_policy '
                    'WHERE enabled = :enabled AND next_execution_time <= :now',
                    enabled=True, now=now)
    pending = db.scalar("SELECT count(*) FROM backup_execution "
                        "WHERE status = 'PENDING'")
    started = db.scalar('SELECT min(created_at) FROM backup_execution')
    return due, pending, started


def run_engine_burst(bench):
    args, db = bench.args, bench.db
    bench.engines = []
    for _ in range(args.engines):
        bench.add_engine()
    bench.start_sampler()
    if args.wait_idle:
        wait_for_idle(args.wait_idle)
    if args.warm:
        launched = time.time()
        before = machine_snapshot(bench.consumer)
        for engine in bench.engines:
            engine.start()
        if not bench.wait_registered(args.engines):
            progress('warning: not every engine registered within 60 s')
        due = timeutils.utcnow() + datetime.timedelta(seconds=args.lead)
        reset_burst(db, due)
        if epoch(timeutils.utcnow()) > epoch(due):
            progress('warning: the due instant passed before it was armed')
    else:
        due = timeutils.utcnow() - datetime.timedelta(seconds=1)
        reset_burst(db, due)
        launched = time.time()
        before = machine_snapshot(bench.consumer)
        for engine in bench.engines:
            engine.start()
    progress('burst: %d policies due at %s, %d engine(s)', args.policies,
             due.time(), args.engines)

    kills = []
    next_kill = None
    deadline = time.time() + args.timeout
    done = None
    while time.time() < deadline:
        due_left, pending, started = burst_progress(db)
        if due_left == 0 and pending == 0 and started is not None:
            done = time.time()
            break
        now = time.time()
        if started is not None and len(kills) < args.kill:
            if next_kill is None:
                next_kill = now + bench.rng.uniform(0.3, 2.0)
            elif now >= next_kill:
                victim = bench.rng.choice(bench.engines)
                victim.kill()
                victim.start()
                kills.append((now - epoch(started), victim.number, due_left))
                progress('SIGKILL engine %d (%d policies still due), '
                         'restarted', victim.number, due_left)
                next_kill = now + bench.rng.uniform(0.3, 2.0)
        time.sleep(0.2)
    if done is None:
        progress('warning: timeout: %d due, %d pending', due_left, pending)
    for engine in bench.engines:
        engine.sample()
    usage = machine_usage(before, machine_snapshot(bench.consumer), sum(
        inc.cpu() for engine in bench.engines
        for inc in engine.incarnations))
    bench.stop_engines()
    rows = db.rows('SELECT id, policy_id, scheduled_at, created_at, '
                   'dispatched_at, status FROM backup_execution')
    runs = [row for row in rows if row.status != 'SKIPPED']
    progress('engines stopped; waiting for the consumer to drain')
    status = bench.consumer.wait_for(len(runs))
    received = bench.consumer.ask('ids')
    consumer_cpu = bench.consumer.cpu_seconds()
    return report_burst(bench, due, launched, done, rows, received, status,
                        kills, consumer_cpu, usage)


def report_burst(bench, due, launched, done, rows, received, status, kills,
                 consumer_cpu, usage):
    args, db, report = bench.args, bench.db, bench.report
    report.section('Burst: %d policies due at one instant, %d engine(s)%s'
                   % (args.policies, args.engines,
                      ', %d SIGKILLs' % len(kills) if args.kill else ''))
    runs = [row for row in rows if row.status != 'SKIPPED']
    dispatched = [row for row in runs if row.dispatched_at is not None]
    due_epoch = epoch(due)
    if not dispatched:
        report.item('result', 'nothing was dispatched')
        return 0.0
    first_tick = min(epoch(row.created_at) for row in rows)
    last_cast = max(epoch(row.dispatched_at) for row in dispatched)
    report.item('start', 'warm engines, due %.1f s after they were '
                'launched' % (due_epoch - launched) if args.warm else
                'cold: due %.1f s before the engines were launched (set '
                '1 s in the past, then the tables were vacuumed)'
                % (launched - due_epoch))
    report.item('launch -> first tick (start-up)',
                '%.2f s' % (first_tick - launched))
    report.item('executions committed and cast', '%d of %d policies'
                % (len(dispatched), args.policies))
    rate = len(dispatched) / max(last_cast - first_tick, 1e-6)
    report.item('dispatch rate, first tick -> last cast',
                '%.0f /s  (%d in %.2f s: min(created_at) to '
                'max(dispatched_at))' % (rate, len(dispatched),
                                         last_cast - first_tick))
    report.item('dispatch rate, due instant -> last cast',
                '%.0f /s  (%.2f s)' % (
                    len(dispatched) / max(last_cast - due_epoch, 1e-6),
                    last_cast - due_epoch))
    report.item('wall time, engine launch -> last cast',
                '%.2f s (includes process start-up)'
                % (last_cast - launched))
    if done:
        report.item('launch -> nothing due and nothing PENDING',
                    '%.2f s' % (done - launched))
    report.item('lateness dispatched_at - scheduled_at',
                spread([epoch(row.dispatched_at) - epoch(row.scheduled_at)
                        for row in dispatched]))
    report.item('lateness from the first tick',
                spread([epoch(row.dispatched_at) - first_tick
                        for row in dispatched]))
    report.item('lateness received - scheduled_at',
                spread([received[row.id][1] - epoch(row.scheduled_at)
                        for row in runs if row.id in received]))
    report.item('cast timeline (per second from first tick)',
                timeline([epoch(row.dispatched_at) - first_tick
                          for row in dispatched]))

    per_policy = collections.Counter(row.policy_id for row in rows)
    per_slot = collections.Counter((row.policy_id, row.scheduled_at)
                                   for row in rows)
    ids = {row.id for row in runs}
    report.add('  correctness')
    report.item('  duplicates: policies with > 1 execution',
                sum(1 for count in per_policy.values() if count > 1))
    report.item('  duplicates: slots with > 1 execution',
                sum(1 for count in per_slot.values() if count > 1))
    report.item('  missing: policies without an execution',
                db.scalar('SELECT count(*) FROM backup_policy p WHERE NOT '
                          'EXISTS (SELECT 1 FROM backup_execution e '
                          'WHERE e.policy_id = p.id)'))
    report.item('  missing: executions never received',
                sum(1 for execution_id in ids if execution_id not in received))
    report.item('  executions never cast (dispatched_at NULL)',
                len(runs) - len(dispatched))
    report.item('  SKIPPED executions', len(rows) - len(runs))
    report.item('  received more than once (harmless)',
                '%d ids (%d deliveries for %d distinct ids)' % (
                    sum(1 for seen in received.values() if seen[0] > 1),
                    status['deliveries'], status['unique']))
    report.item('  received ids unknown to the database',
                sum(1 for execution_id in received if execution_id not in ids))
    report.item('  messages received', ', '.join(
        '%s: %d' % item for item in sorted(status['messages'].items())))
    if args.kill:
        report.item('  SIGKILLs (s after first tick, engine, due)',
                    '; '.join('%.1f s, #%d, %d due' % kill for kill in kills))
    report_engines(bench, len(dispatched))
    report.item('consumer CPU (user+sys, whole run so far)',
                '%.1f s (%s consumer)' % (consumer_cpu, args.consumer))
    report.item('machine, engine launch -> done', usage)
    return rate


def timeline(offsets):
    if not offsets:
        return ''
    counts = collections.Counter(int(offset) for offset in offsets)
    return ' '.join(str(counts.get(second, 0))
                    for second in range(int(max(offsets)) + 1))


def report_engines(bench, executions):
    report = bench.report
    total = 0.0
    for engine in bench.engines:
        log = engine.log()
        for number, inc in enumerate(engine.incarnations):
            worker = [pid for pid, entry in inc.procs.items()
                      if entry['role'] == 'worker']
            total += inc.cpu()
            report.item(
                'engine %d%s' % (engine.number, ' run %d' % (number + 1)
                                 if len(engine.incarnations) > 1 else ''),
                'CPU %.2f s (launcher %.2f + child %.2f), peak RSS '
                '(VmHWM) child %.1f MiB, launcher %.1f MiB; pid %d/%s; '
                'lived %.1f s; ended by %s' % (
                    inc.cpu(), inc.cpu('launcher'), inc.cpu('worker'),
                    inc.hwm('worker') / 2 ** 20,
                    inc.hwm('launcher') / 2 ** 20, inc.popen.pid,
                    ','.join(map(str, worker)) or '-',
                    (inc.ended or time.time()) - inc.started, inc.how))
        ticks = re.findall(r'Tick: (\d+) due policies', log)
        recast = sum(int(n) for n in re.findall(r'Casting (\d+) executions '
                                                r'again', log))
        report.item('engine %d log' % engine.number,
                    '%d ticks with work (mean %.0f policies), %d executions '
                    'cast again by sweeps, %d ERROR lines, %d "Could not '
                    'cast"' % (len(ticks), sum(map(int, ticks))
                               / max(len(ticks), 1), recast,
                               log.count(' ERROR '),
                               log.count('Could not cast')))
    report.item('engine CPU, all engines', '%.2f s (%.2f ms per execution)'
                % (total, 1000 * total / max(executions, 1)))


# The baseline: Mistral's algorithm.

def run_baseline(bench):
    """Mistral's loop: select every due row, then one row at a time.

    Per row: a compare-and-set UPDATE in its own transaction, then one
    cast, then the next row (Mistral's ``process_cron_triggers_v2``).
    """
    args, db, report = bench.args, bench.db, bench.report
    bench.consumer.ask('reset')
    if args.wait_idle:
        wait_for_idle(args.wait_idle)
    due = timeutils.utcnow() - datetime.timedelta(seconds=1)
    reset_burst(db, due)
    config.parse_args(cfg.CONF, ['--config-file', bench.config_file])
    rpc.init(cfg.CONF)
    worker_api = rpcapi.WorkerAPI(cfg.CONF)
    context = dbaas_context.get_admin_context()
    # Parsed once, as the engine's cache does; Mistral builds a croniter
    # per trigger, which would only make the baseline slower.
    sched = schedule.parse_schedule('cron', BURST_SCHEDULE, 'UTC')
    update = sa.text('UPDATE backup_policy SET next_execution_time = :next, '
                     'updated_at = :now WHERE id = :id '
                     'AND next_execution_time = :due')
    progress('baseline: %d policies due at %s', args.policies, due.time())
    started = time.time()
    before = machine_snapshot(bench.consumer)
    cast_at = []
    sent = []
    with db.engine.connect() as connection:
        due_rows = connection.execute(sa.text(
            'SELECT id, next_execution_time FROM backup_policy '
            'WHERE enabled = :enabled AND next_execution_time <= :now '
            'ORDER BY next_execution_time'),
            {'enabled': True, 'now': timeutils.utcnow()}).all()
        connection.commit()
        selected = time.time()
        for row in due_rows:
            now = timeutils.utcnow()
            after = max(now, row.next_execution_time).replace(
                tzinfo=datetime.timezone.utc)
            following = sched.next_time(after).replace(tzinfo=None)
            matched = connection.execute(update, {
                'next': following, 'now': now, 'id': row.id,
                'due': row.next_execution_time}).rowcount
            connection.commit()
            if matched:
                execution_id = str(uuid.uuid4())
                worker_api.backup_database_instance(context, execution_id)
                sent.append(execution_id)
                cast_at.append(time.time())
    finished = time.time()
    usage = machine_usage(before, machine_snapshot(bench.consumer), 0.0)
    status = bench.consumer.wait_for(len(sent))
    received = bench.consumer.ask('ids')
    rate = len(sent) / (finished - started)
    report.section('Baseline (Mistral algorithm), same database and broker')
    report.item('definition', 'SELECT all due; per row: CAS UPDATE in its '
                'own transaction, one cast')
    report.item('casts', '%d of %d due rows' % (len(sent), len(due_rows)))
    report.item('rate', '%.0f /s  (%d in %.2f s; the SELECT took %.2f s)'
                % (rate, len(sent), finished - started, selected - started))
    report.item('lateness cast - scheduled_at',
                spread([at - epoch(due) for at in cast_at]))
    report.item('missing: casts never received', sum(
        1 for execution_id in sent if execution_id not in received))
    report.item('received more than once',
                sum(1 for seen in received.values() if seen[0] > 1))
    report.item('messages received', status['deliveries'])
    report.item('machine, during the baseline', usage)
    return rate


# Steady state.

def park(db, horizon):
    """Move every run before ``horizon`` whole days later.

    The time of day stays, so that nothing fires during the run but what
    :func:`arm` chooses.
    """
    if db.backend == 'postgresql':
        sql = ("UPDATE backup_policy SET next_execution_time = "
               "next_execution_time + (floor(extract(epoch FROM "
               "(:horizon - next_execution_time)) / 86400) + 1) "
               "* interval '1 day' WHERE next_execution_time < :horizon")
    else:
        sql = ('UPDATE backup_policy SET next_execution_time = '
               'next_execution_time + INTERVAL (FLOOR(TIMESTAMPDIFF(SECOND, '
               'next_execution_time, :horizon) / 86400) + 1) DAY '
               'WHERE next_execution_time < :horizon')
    return db.execute(sql, horizon=horizon)


def arm(db, mode, base, window):
    """Shift one stretch of the day, ``window`` seconds long, to ``base``.

    ``schedule``: the policies' real 'H H * * *' times from the first one
    after now; the run sees exactly the bursts that stretch of a real day
    has.  ``uniform``: one run per policy spread evenly over the day by a
    hash of its id, about N/86,400 every second (its later runs follow the
    real schedule).
    """
    if mode == 'schedule':
        first = db.scalar('SELECT min(next_execution_time) FROM '
                          'backup_policy WHERE enabled = :enabled',
                          enabled=True)
        shift = epoch(first) - epoch(base)
        if db.backend == 'postgresql':
            sql = ('UPDATE backup_policy SET next_execution_time = '
                   'next_execution_time - make_interval(secs => :shift) '
                   'WHERE next_execution_time < :until')
        else:
            sql = ('UPDATE backup_policy SET next_execution_time = '
                   'next_execution_time - INTERVAL :shift_us MICROSECOND '
                   'WHERE next_execution_time < :until')
        return db.execute(sql, shift=shift, shift_us=int(shift * 1e6),
                          until=first + datetime.timedelta(seconds=window))
    if db.backend == 'postgresql':
        offset = 'mod(abs(hashtext(id)::bigint), 86400)'
        sql = ('UPDATE backup_policy SET next_execution_time = :base + '
               'make_interval(secs => %s) WHERE %s < :window'
               % (offset, offset))
    else:
        offset = 'MOD(CRC32(id), 86400)'
        sql = ('UPDATE backup_policy SET next_execution_time = '
               'DATE_ADD(:base, INTERVAL %s SECOND) WHERE %s < :window'
               % (offset, offset))
    return db.execute(sql, base=base, window=window)


def complete_received(bench, waiting):
    """The stand-in worker finishes what it received.

    As a real worker would, so that the sweep has nothing to cast again.
    Only DISPATCHED rows: a row still PENDING keeps its dispatched_at to
    come.
    """
    waiting.extend(bench.consumer.ask('take'))
    if not waiting:
        return
    statement = sa.text(
        "UPDATE backup_execution SET status = 'SUCCEEDED', "
        "finished_at = :now WHERE status = 'DISPATCHED' AND id IN :ids"
    ).bindparams(sa.bindparam('ids', expanding=True))
    with bench.db.engine.begin() as connection:
        connection.execute(statement, {'now': timeutils.utcnow(),
                                       'ids': list(waiting)})
        done = {row[0] for row in connection.execute(
            sa.text("SELECT id FROM backup_execution WHERE status = "
                    "'SUCCEEDED' AND id IN :ids").bindparams(
                sa.bindparam('ids', expanding=True)),
            {'ids': list(waiting)})}
    waiting[:] = [execution_id for execution_id in waiting
                  if execution_id not in done]


def prepare_steady_database(bench, count):
    args = bench.args
    db = Database(args.database, name='%s_steady_%d' % (
        args.database_name, count), url=args.database_url,
        admin_url=args.admin_url)
    bench.use_database(db)
    if args.reuse and db.exists():
        db.connect()
        try:
            seeded = db.scalar(
                'SELECT count(*) FROM backup_policy WHERE schedule = :s',
                s=STEADY_SCHEDULE)
        except sa.exc.DBAPIError:
            seeded = None
        if seeded == count:
            progress('steady: reusing %s with %d policies', db.name, count)
            return db, 0.0
    progress('steady: seeding %d policies into %s', count, db.name)
    started = time.time()
    db.create()
    bench.upgrade_schema()
    seed_steady(db, count, args.seed_processes)
    db.vacuum()
    return db, time.time() - started


def run_steady(bench, count):
    args, report = bench.args, bench.report
    db, seeded = prepare_steady_database(bench, count)
    bench.start_consumer()
    bench.consumer.ask('reset')
    window = args.minutes * 60
    db.execute('DELETE FROM backup_execution')
    db.execute('DELETE FROM service')
    horizon = timeutils.utcnow() + datetime.timedelta(seconds=window + 600)
    parked = park(db, horizon)
    db.vacuum()
    db.vacuum('backup_execution')
    bench.engines = []
    engine = bench.add_engine(steady=True)
    bench.start_sampler()
    engine.start()
    launched = time.time()
    if not bench.wait_registered(1):
        progress('warning: the engine did not register within 60 s')
    time.sleep(2)
    if args.wait_idle:
        wait_for_idle(args.wait_idle)
    base = timeutils.utcnow() + datetime.timedelta(seconds=args.lead)
    armed = arm(db, args.spread, base, window)
    if timeutils.utcnow() > base:
        progress('warning: the first runs were armed after they were due')
    progress('steady: %d policies, %d due in the next %d min (%s), '
             'parked %d', count, armed, args.minutes, args.spread, parked)
    while timeutils.utcnow() < base:
        time.sleep(0.05)
    engine.sample()
    cpu_start = engine.current.cpu()
    window_start = time.time()
    before = machine_snapshot(bench.consumer)
    end = window_start + window
    waiting = []
    while time.time() < end:
        time.sleep(min(1.0, max(0.0, end - time.time())))
        complete_received(bench, waiting)
    engine.sample()
    cpu_used = engine.current.cpu() - cpu_start
    window_end = time.time()
    usage = machine_usage(before, machine_snapshot(bench.consumer),
                          cpu_used)
    rss_end = max([entry['rss'] for entry in engine.current.procs.values()
                   if entry['role'] == 'worker'] or [0])
    overdue = db.scalar('SELECT count(*) FROM backup_policy WHERE enabled = '
                        ':enabled AND next_execution_time <= :t',
                        enabled=True, t=db_time(window_end - 2))
    bench.stop_engines()
    rows = db.rows('SELECT id, policy_id, scheduled_at, dispatched_at, '
                   'status FROM backup_execution WHERE scheduled_at >= '
                   ':start AND scheduled_at <= :end',
                   start=base, end=db_time(window_end))
    runs = [row for row in rows if row.status != 'SKIPPED']
    bench.consumer.wait_for(len(runs), timeout=60)
    received = bench.consumer.ask('ids')
    dispatched = [row for row in runs if row.dispatched_at is not None]
    instants = collections.Counter(row.scheduled_at for row in rows)
    inc = engine.current

    report.section('Steady state: %d policies on %r, 1 engine, %d min (%s)'
                   % (count, STEADY_SCHEDULE, args.minutes, args.spread))
    report.item('database', '%s (%s)' % (
        db.name, 'reused' if not seeded else 'seeded in %.0f s' % seeded))
    report.item('engine options', ', '.join(
        '%s=%s' % item for item in sorted(
            bench.engine_options(True)['engine'].items())
        if item[0] != 'topic'))
    report.item('runs due in the window', '%d at %d distinct instants '
                '(largest: %d at once)' % (
                    len(rows), len(instants),
                    max(instants.values()) if instants else 0))
    report.item('lateness dispatched_at - scheduled_at',
                spread([epoch(row.dispatched_at) - epoch(row.scheduled_at)
                        for row in dispatched]))
    report.item('lateness received - scheduled_at',
                spread([received[row.id][1] - epoch(row.scheduled_at)
                        for row in runs if row.id in received]))
    report.item('engine CPU over the window', '%.2f s in %.0f s = %.2f%% '
                'of one core' % (cpu_used, window_end - window_start,
                                 100 * cpu_used / (window_end - window_start)))
    report.item('engine peak RSS (VmHWM of the child)',
                '%.1f MiB (RSS at the end %.1f MiB; launcher %.1f MiB)' % (
                    inc.hwm('worker') / 2 ** 20, rss_end / 2 ** 20,
                    inc.hwm('launcher') / 2 ** 20))
    report.item('machine, during the window', usage)
    report.item('missing: policies overdue at the end', overdue)
    report.item('missing: executions never received', sum(
        1 for row in runs if row.id not in received))
    report.item('executions never cast', len(runs) - len(dispatched))
    report.item('engine start-up', 'launched %.1f s before the window'
                % (window_start - launched))
    return {'count': count, 'hwm': inc.hwm('worker'),
            'cpu': 100 * cpu_used / (window_end - window_start),
            'lateness': sorted(epoch(row.dispatched_at)
                               - epoch(row.scheduled_at)
                               for row in dispatched)}


# The report's header and the command line.

def machine_lines(report, bench):
    report.section('Machine and versions')
    with open('/proc/meminfo') as stream:
        memory = int(stream.readline().split()[1]) * 1024
    model = platform.processor()
    try:
        with open('/proc/cpuinfo') as stream:
            for line in stream:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
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
            'oslo.messaging', 'oslo.db', 'SQLAlchemy', 'psycopg2-binary',
            'PyMySQL', 'kombu', 'croniter')))
    report.item('command', ' '.join(sys.argv))
    report.item('work directory', bench.workdir)


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
    except (OSError, subprocess.CalledProcessError):
        return '?'
    revision = git('rev-parse', '--short', 'HEAD')
    if changed:
        revision += '; uncommitted changes to %s' % ', '.join(
            line[3:] for line in changed.splitlines())
    return revision


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='See doc/source/contributor/benchmarks.rst.')
    parser.add_argument('--database', choices=('postgresql', 'mysql'),
                        default='postgresql',
                        help='Database server on 127.0.0.1 (default: '
                             'postgresql; mysql means MariaDB/MySQL).')
    parser.add_argument('--database-url',
                        help='Use this database instead of creating one; '
                             'its dbaas-scheduler tables are emptied.')
    parser.add_argument('--admin-url',
                        help='Server URL used to create and drop the '
                             'database (default: %s)' % ADMIN_URLS)
    parser.add_argument('--database-name', default='dbaas_bench',
                        help='Name of the database to create (steady state '
                             'appends _steady_<policies>).')
    parser.add_argument('--transport-url', default=DEFAULT_TRANSPORT_URL)
    parser.add_argument('--policies', type=int, default=100000)
    parser.add_argument('--engines', type=int, default=1,
                        help='Engine processes in a burst (default 1).')
    parser.add_argument('--kill', type=int, default=0, metavar='N',
                        help='SIGKILL a random engine N times during the '
                             'burst and restart it.')
    parser.add_argument('--baseline', action='store_true',
                        help='Also run the Mistral-style baseline.')
    parser.add_argument('--warm', action='store_true',
                        help='Start the engines before the burst is due '
                             '(default: due 1 s before they start).')
    parser.add_argument('--lead', type=float, default=5.0,
                        help='Seconds between arming and the first due '
                             'time (warm burst, steady state).')
    parser.add_argument('--steady', action='store_true',
                        help='Steady state instead of a burst.')
    parser.add_argument('--minutes', type=float, default=3.0)
    parser.add_argument('--spread', choices=('schedule', 'uniform'),
                        default='schedule',
                        help='Steady state: the real H H times (schedule) '
                             'or one run per policy spread evenly over '
                             'the day (uniform).')
    parser.add_argument('--compare-rss', metavar='N,N,...',
                        help='Steady state at each number of policies.')
    parser.add_argument('--reuse', action='store_true',
                        help='Steady state: reuse a seeded database (and '
                             'keep it).')
    parser.add_argument('--keep', action='store_true',
                        help='Keep the database at the end.')
    parser.add_argument('--seed-processes', type=int,
                        default=len(os.sched_getaffinity(0)))
    parser.add_argument('--consumer', choices=('kombu', 'oslo'),
                        default='kombu',
                        help='Stand-in worker: a raw kombu consumer '
                             '(default, cheapest) or an oslo.messaging RPC '
                             'server.')
    parser.add_argument('--batch-size', type=int, default=1000)
    parser.add_argument('--executions-per-message', type=int, default=20)
    parser.add_argument('--scan-interval', type=float)
    parser.add_argument('--sweep-interval', type=float)
    parser.add_argument('--dispatch-timeout', type=int)
    parser.add_argument('--engine-option', action='append', default=[],
                        metavar='[GROUP.]NAME=VALUE',
                        help='Any other engine option (repeatable).')
    parser.add_argument('--timeout', type=float, default=900)
    parser.add_argument('--wait-idle', type=float, default=0,
                        metavar='SECONDS',
                        help='Before each measurement, wait up to this long '
                             'for the machine to be at least 90%% idle.')
    parser.add_argument('--seed', type=int, help='Random seed for --kill.')
    parser.add_argument('--workdir',
                        help='Configs, logs and report (default: a new '
                             'temporary directory).')
    args = parser.parse_args(argv)
    if args.engines < 1:
        parser.error('--engines must be at least 1')
    if args.reuse:
        args.keep = True
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    report = Report()
    bench = Bench(args, report)
    report.add('dbaas-scheduler engine benchmark')
    report.add('================================')
    try:
        if args.steady or args.compare_rss:
            sizes = ([int(size) for size in args.compare_rss.split(',')]
                     if args.compare_rss else [args.policies])
            results = []
            for size in sizes:
                results.append(run_steady(bench, size))
                if not args.keep:
                    bench.db.drop()
            if len(results) > 1:
                report_rss(report, results)
        else:
            run_burst(bench)
        machine_lines(report, bench)
    finally:
        bench.close()
        if bench.db is not None and not args.keep:
            bench.db.drop()
        elif bench.db is not None:
            bench.db.dispose()
    path = os.path.join(bench.workdir, 'report.txt')
    with open(path, 'w') as stream:
        stream.write(report.text())
    progress('report written to %s', path)
    return 0


def run_burst(bench):
    args = bench.args
    db = Database(args.database, name=args.database_name,
                  url=args.database_url, admin_url=args.admin_url)
    bench.use_database(db)
    progress('seeding %d policies into %s', args.policies, db.name)
    db.create()
    bench.upgrade_schema()
    started = time.time()
    # Not due (tomorrow) until reset_burst() arms them all at one instant.
    seed_burst(db, args.policies,
               timeutils.utcnow() + datetime.timedelta(days=1))
    db.vacuum()
    progress('seeded in %.1f s', time.time() - started)
    bench.start_consumer()
    ours = run_engine_burst(bench)
    if args.baseline:
        baseline = run_baseline(bench)
        bench.report.item(
            'engine rate / baseline rate',
            '%.1fx  (%.0f /s vs %.0f /s; engine rate from its first tick)'
            % (ours / baseline, ours, baseline))


def report_rss(report, results):
    report.section('Steady state compared')
    smallest = results[0]
    for result in results:
        ordered = result['lateness']
        report.item('%d policies' % result['count'],
                    'peak RSS %.1f MiB (%+.1f%% vs %d), CPU %.2f%% of a '
                    'core, lateness p99 %.3f s' % (
                        result['hwm'] / 2 ** 20,
                        100 * (result['hwm'] / smallest['hwm'] - 1),
                        smallest['count'], result['cpu'],
                        percentile(ordered, 0.99)))


if __name__ == '__main__':
    sys.exit(main())
