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
"""What the benchmarks share: options, config files, services, the broker.

A benchmark is one :class:`Bench`: its options, report, work directory and
RabbitMQ topics unique to the run; it starts the project's services as
:class:`ServiceProcess` from config files it writes, and casts to them
through ``dbaas_scheduler.rpcapi``.
"""

import argparse
import configparser
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import uuid

import kombu
from oslo_config import cfg
from tools.benchmarks import database
from tools.benchmarks import machine
from tools.benchmarks import reporting

from dbaas_scheduler import config
from dbaas_scheduler import rpc
from dbaas_scheduler import rpcapi
from dbaas_scheduler.testing import broker

DEFAULT_TRANSPORT_URL = 'rabbit://guest:guest@127.0.0.1:5672/'


# The command line.

def parser(doc, package):
    """The parser of ``python -m package``, described by ``doc``'s summary."""
    return argparse.ArgumentParser(
        prog='python -m %s' % package, description=doc.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog='See doc/source/contributor/benchmarks.rst.')


def add_server_options(parser, database_name, name_help):
    """--database, --admin-url, --database-name, --transport-url."""
    parser.add_argument('--database', choices=('postgresql', 'mysql'),
                        default='postgresql',
                        help='Database server on 127.0.0.1 (default: '
                             'postgresql; mysql means MariaDB/MySQL).')
    parser.add_argument('--admin-url',
                        help='Server URL used to create and drop the '
                             'database (default: %s)' % database.ADMIN_URLS)
    parser.add_argument('--database-name', default=database_name,
                        help=name_help)
    parser.add_argument('--transport-url', default=DEFAULT_TRANSPORT_URL)


def add_run_options(parser, keep_help):
    """--keep, --wait-idle, --workdir."""
    parser.add_argument('--keep', action='store_true', help=keep_help)
    parser.add_argument('--wait-idle', type=float, default=0,
                        metavar='SECONDS',
                        help='Before each measurement, wait up to this long '
                             'for the machine to be at least 90%% idle.')
    parser.add_argument('--workdir',
                        help='Configs, logs and report (default: a new '
                             'temporary directory).')


# Config files and service processes.

def write_config(path, sections):
    """An oslo.config file of ``{group: {option: value}}``."""
    parser = configparser.ConfigParser(interpolation=None)
    for group, options in sections.items():
        parser[group] = {name: str(value) for name, value in options.items()}
    with open(path, 'w') as stream:
        parser.write(stream)


def service_config(bench, log_file, graceful_shutdown_timeout):
    """The sections every service of a run has: broker, log, database."""
    return {
        'DEFAULT': {'transport_url': bench.transport_url,
                    'log_file': log_file,
                    'graceful_shutdown_timeout': graceful_shutdown_timeout},
        'database': {'connection': bench.db.url_string,
                     'max_retries': -1, 'retry_interval': 1},
        'worker': {'topic': bench.topics['worker']},
    }


def set_options(sections, options, default_group):
    """Apply ``[GROUP.]NAME=VALUE`` strings (repeatable command options)."""
    for option in options:
        name, _, value = option.partition('=')
        group, _, name = name.rpartition('.')
        sections.setdefault(group or default_group, {})[name] = value
    return sections


def program(name):
    """A console script of this virtual environment, else from PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else shutil.which(name) or name


def upgrade_schema(config_file):
    subprocess.run([program('dbaas-scheduler-manage'), '--config-file',
                    config_file, 'db', 'upgrade'], check=True,
                   stdout=subprocess.DEVNULL)


@contextlib.contextmanager
def benchmark_database(args, workdir_prefix):
    """The benchmark's database with its schema at head: (db, config file).

    ``args.reuse``: the one a ``--keep`` run left (upgraded, for a
    migration since, and not seeded again); otherwise a new one.  Dropped
    at the end unless ``args.keep`` or ``args.reuse``.
    """
    db = database.Database(args.database, args.database_name,
                           admin_url=args.admin_url)
    if args.reuse:
        db.connect()
    else:
        db.create()
    workdir = tempfile.mkdtemp(prefix=workdir_prefix)
    config_file = os.path.join(workdir, 'dbaas-scheduler.conf')
    write_config(config_file, {'database': {'connection': db.url_string}})
    try:
        upgrade_schema(config_file)
        yield db, config_file
    finally:
        if args.keep or args.reuse:
            db.dispose()
        else:
            db.drop()


class ServiceProcess:
    """A dbaas-scheduler service in a session (process group) of its own.

    The oslo.service launcher forks the child that runs the service; a
    signal to the session reaches both.
    """

    def __init__(self, number, binary, config_file, log_file):
        self.number = number
        self.binary = binary
        self.config_file = config_file
        self.log_file = log_file
        self.popen = None

    def start(self):
        with open(self.log_file, 'ab') as log:
            self.popen = subprocess.Popen(
                [program(self.binary), '--config-file', self.config_file],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def alive(self):
        return self.popen is not None and self.popen.poll() is None

    def kill(self):
        """SIGKILL the whole session: launcher and child."""
        try:
            os.killpg(self.popen.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.popen.wait()

    def send(self, sig):
        """Send ``sig`` to the whole session (e.g. SIGSTOP, SIGCONT)."""
        try:
            os.killpg(self.popen.pid, sig)
        except ProcessLookupError:
            pass

    def restart(self):
        """SIGKILL the session and start the service again."""
        self.kill()
        self.start()

    def stop(self, timeout):
        """SIGTERM (a graceful stop); its exit code, or None if killed."""
        self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None

    def log(self):
        with open(self.log_file, errors='replace') as stream:
            return stream.read()


class Sampler(threading.Thread):
    """Calls :meth:`take` every ``interval`` seconds until stopped."""

    def __init__(self, interval):
        super().__init__(daemon=True)
        self.interval = interval
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.wait(self.interval):
            self.take()

    def take(self):
        raise NotImplementedError

    def stop(self):
        self.stopping.set()
        self.join()


# The broker.

def broker_version(transport_url):
    with kombu.Connection(broker.kombu_url(transport_url)) as connection:
        connection.connect()
        value = connection.connection.server_properties.get('version', '?')
        return 'RabbitMQ %s' % (value.decode() if isinstance(value, bytes)
                                else value)


def queue_state(transport_url, name):
    """(messages ready, consumers) of a queue; (None, None) if unknown."""
    try:
        with kombu.Connection(broker.kombu_url(transport_url)) as connection:
            _, messages, consumers = connection.channel().queue_declare(
                name, passive=True)
            return messages, consumers
    except Exception as exc:
        reporting.progress('could not read queue %s: %s', name, exc)
        return None, None


def delete_queues(transport_url, names):
    try:
        with kombu.Connection(broker.kombu_url(transport_url)) as connection:
            channel = connection.channel()
            for name in names:
                channel.queue_delete(name)
    except Exception as exc:
        reporting.progress('could not delete queues %s: %s', names, exc)


# One invocation.

class Bench:
    """One invocation: options, report, work directory, topics, database.

    The topics (``dbaas-bench-<random>-<name>``) are unique to the run, so
    that runs and test runs sharing the broker never see each other's
    messages; their queues are deleted by :meth:`close`.
    """

    def __init__(self, args, workdir_prefix, topics):
        self.args = args
        self.report = reporting.Report()
        self.workdir = args.workdir or tempfile.mkdtemp(prefix=workdir_prefix)
        os.makedirs(self.workdir, exist_ok=True)
        prefix = 'dbaas-bench-%s' % uuid.uuid4().hex[:10]
        self.topics = {name: '%s-%s' % (prefix, name) for name in topics}
        self.host = socket.gethostname()
        self.transport_url = args.transport_url
        self.db = None
        self.api = None

    def queues(self):
        return [name for topic in self.topics.values()
                for name in (topic, '%s.%s' % (topic, self.host))]

    def worker_api(self, config_file):
        """This process's WorkerAPI (oslo.messaging on cfg.CONF)."""
        if self.api is None:
            config.parse_args(cfg.CONF, ['--config-file', config_file])
            rpc.init(cfg.CONF)
            self.api = rpcapi.WorkerAPI(cfg.CONF)
        return self.api

    def run(self, title, measure, libraries):
        """``measure(self)``, the machine and versions; report.txt."""
        self.report.title(title)
        try:
            measure(self)
            machine.versions_section(
                self.report, broker_version(self.transport_url), libraries,
                self.workdir)
        finally:
            self.close()
        self.report.write(self.workdir)
        return 0

    def close(self):
        """Stop what the run started; delete its queues."""
        if self.api is not None:
            rpc.cleanup()
            self.api = None
        delete_queues(self.transport_url, self.queues())
