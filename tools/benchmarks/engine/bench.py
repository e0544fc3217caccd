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
"""The engine benchmark's run: its database, stand-in worker and engines."""

import os
import threading
import time

import psutil
from sqlalchemy.engine import url as sa_url
from tools.benchmarks import common
from tools.benchmarks.engine import standin
from tools.benchmarks import machine

ENGINE_BINARY = 'dbaas-scheduler-engine'


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


class EngineProcess(common.ServiceProcess):
    """A dbaas-scheduler-engine, each of its starts an :class:`Incarnation`.

    Killed and started again, it keeps the figures of every start.
    """

    def __init__(self, number, config_file, log_file):
        super().__init__(number, ENGINE_BINARY, config_file, log_file)
        self.incarnations = []
        self.lock = threading.Lock()

    @property
    def current(self):
        return self.incarnations[-1] if self.incarnations else None

    def start(self):
        super().start()
        with self.lock:
            self.incarnations.append(Incarnation(self.popen))

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
            super().kill()
            self._ended('SIGKILL')

    def terminate(self, timeout=60):
        if not self.alive():
            return
        self.sample()
        with self.lock:
            code = self.stop(timeout)
            self._ended('SIGKILL after a SIGTERM timeout' if code is None
                        else 'SIGTERM (exit %d)' % code)


class Sampler(common.Sampler):
    """Samples the engines' CPU time and peak RSS every quarter second."""

    def __init__(self, engines, interval=0.25):
        super().__init__(interval)
        self.engines = engines

    def take(self):
        for engine in list(self.engines):
            engine.sample()


class Bench(common.Bench):
    """One invocation: database, topics, stand-in worker, engines."""

    def __init__(self, args, rng):
        super().__init__(args, 'dbaas-bench-', ('worker', 'engine'))
        self.rng = rng
        self.consumer = None
        self.engines = []
        self.sampler = None
        self.config_file = None
        # Prefix of the engines' config and log files ('run2-' ...).
        self.file_prefix = ''

    def use_database(self, db):
        """Point the benchmark (config files, schema) at ``db``."""
        self.db = db
        self.config_file = os.path.join(self.workdir, 'benchmark.conf')
        common.write_config(self.config_file, {
            'DEFAULT': {'transport_url': self.transport_url,
                        'log_file': os.path.join(self.workdir,
                                                 'benchmark.log')},
            'database': {'connection': db.url_string},
            'engine': {'topic': self.topics['engine']},
            'worker': {'topic': self.topics['worker']},
        })

    def upgrade_schema(self):
        common.upgrade_schema(self.config_file)

    def start_consumer(self):
        if self.consumer is None:
            self.consumer = standin.Consumer(
                self.args.consumer, self.transport_url, self.config_file,
                self.topics['worker'])

    def snapshot(self):
        """A machine snapshot that counts the stand-in worker's CPU."""
        return machine.snapshot(
            {'stand-in worker': self.consumer.cpu_seconds()})

    def engine_options(self, steady):
        args = self.args
        options = {'topic': self.topics['engine'],
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
        return common.set_options({'engine': options}, args.engine_option,
                                  'engine')

    def add_engine(self, steady=False):
        number = len(self.engines)
        log_file = os.path.join(self.workdir, '%sengine-%d.log'
                                % (self.file_prefix, number))
        sections = common.service_config(self, log_file, 30)
        nodes = [node for node in self.args.engine_nodes.split(',') if node]
        if nodes:
            host, _, port = nodes[number % len(nodes)].rpartition(':')
            sections['database']['connection'] = sa_url.make_url(
                self.db.url_string).set(host=host, port=int(port)
                                        ).render_as_string(
                                            hide_password=False)
        sections['oslo_messaging_rabbit'] = {'rabbit_retry_interval': 1,
                                             'rabbit_retry_backoff': 1}
        for group, options in self.engine_options(steady).items():
            sections.setdefault(group, {}).update(options)
        config_file = os.path.join(self.workdir, '%sengine-%d.conf'
                                   % (self.file_prefix, number))
        common.write_config(config_file, sections)
        engine = EngineProcess(number, config_file, log_file)
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
        quote = '"' if self.db.backend == 'postgresql' else '`'
        return self.db.scalar(
            "SELECT count(*) FROM service WHERE {q}binary{q} = '{b}'".format(
                q=quote, b=ENGINE_BINARY))

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
        super().close()
        if self.db is not None and not self.args.keep:
            self.db.drop()
        elif self.db is not None:
            self.db.dispose()
