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
"""The faults of a chaos run, injected at random while the load runs.

``kill``
    SIGKILL an engine or a worker (launcher and child), start it again
    ``--restart-after`` seconds later; on average every ``--kill-every``.
``stop``
    SIGSTOP an engine or a worker for ``--stop-seconds`` (longer than the
    lease by default: a paused VM, a long GC), then SIGCONT; on average
    every ``--stop-every``.
``slow``
    A share of backend creates is answered ``--slow-create-seconds`` late;
    the backup exists at the backend from the start.
``late``
    A share of backend creates lands at the backend only after
    ``--late-create-seconds``, longer than the client's timeout: the client
    has given up and retried by then.
``broker``, ``database``
    A real restart of the private RabbitMQ node, or of the private
    database server, at a given point of the run, down for
    ``--restart-down`` seconds.  On clusters (``--cluster``), a node of
    the RabbitMQ cluster, or of the Galera cluster, SIGKILLed and started
    again (see :mod:`tools.chaos.clustered`).
``writer``
    With ``--cluster single-writer``: the writer address moves to another
    Galera node while every node is up, at ``--writer-move-at``.
"""

import random
import signal
import threading
import time

from tools.benchmarks import reporting

from dbaas_scheduler.testing import fake_trove

KINDS = ('kill', 'stop', 'slow', 'late', 'broker', 'database', 'writer')


class Faults(threading.Thread):
    """Injects the chosen faults until :meth:`finish`."""

    def __init__(self, args, processes, broker, database, trove,
                 writer=None):
        super().__init__(name='chaos-faults', daemon=True)
        self.args = args
        self.kinds = set(args.faults)
        self.processes = processes
        self.broker = broker
        self.database = database
        self.trove = trove
        self.writer = writer
        self.random = random.Random(args.seed)
        self.events = []
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._busy = set()
        self._timers = []
        self._restarts = []

    def event(self, kind, message, *args):
        """Log a fault; ``kind`` counts it (None: a note, not counted)."""
        text = message % args
        self.events.append((time.time(), kind, text))
        reporting.progress('fault: %s', text)

    def begin(self):
        """Backend faults now; the others from the thread."""
        args = self.args
        # The fake applies the first injection that matches a request:
        # late first, so that its share holds whatever the slow share is
        # (with every create slow, late would otherwise never happen).
        if 'late' in self.kinds and args.late_create_share > 0:
            self.trove.inject_delay(
                args.late_create_seconds,
                operation=fake_trove.BACKUP_CREATE,
                probability=args.late_create_share)
            self.event(None, '%.0f%% of creates land after %.0f s',
                       100 * args.late_create_share, args.late_create_seconds)
        if 'slow' in self.kinds and args.slow_create_share > 0:
            self.trove.inject_delay(
                args.slow_create_seconds, operation=fake_trove.BACKUP_CREATE,
                after=True, probability=args.slow_create_share)
            self.event(None,
                       '%.0f%% of the other creates answered after %.0f s',
                       100 * args.slow_create_share, args.slow_create_seconds)
        self.started = time.time()
        self.start()

    def run(self):
        args = self.args
        duration = args.minutes * 60
        plan = []
        if 'kill' in self.kinds and args.kill_every > 0:
            plan.append(['kill', self._next(args.kill_every)])
        if 'stop' in self.kinds and args.stop_every > 0:
            plan.append(['stop', self._next(args.stop_every)])
        if 'broker' in self.kinds and self.broker is not None:
            plan.append(['broker', self.started
                         + args.broker_restart_at * duration])
        if 'database' in self.kinds and self.database is not None:
            plan.append(['database', self.started
                         + args.database_restart_at * duration])
        if 'writer' in self.kinds and self.writer is not None:
            plan.append(['writer', self.started
                         + args.writer_move_at * duration])
        while plan and not self._stopping.is_set():
            plan.sort(key=lambda item: item[1])
            kind, at = plan[0]
            if self._stopping.wait(max(0.0, at - time.time())):
                break
            if kind in ('broker', 'database'):
                # A restart takes a while; the other faults go on.
                restart = threading.Thread(target=self._fault, args=(kind,),
                                           daemon=True)
                restart.start()
                self._restarts.append(restart)
            else:
                self._fault(kind)
            if kind == 'kill':
                plan[0][1] = self._next(args.kill_every)
            elif kind == 'stop':
                plan[0][1] = self._next(args.stop_every)
            else:
                plan.pop(0)

    def _fault(self, kind):
        try:
            getattr(self, '_fault_' + kind)()
        except Exception as exc:
            self.event(None, '%s failed: %s', kind, exc)

    def _next(self, mean):
        return time.time() + self.random.expovariate(1.0 / mean)

    def _pick(self):
        with self._lock:
            idle = [p for p in self.processes if p not in self._busy]
            if not idle:
                return None
            chosen = self.random.choice(idle)
            self._busy.add(chosen)
            return chosen

    def _free(self, process):
        with self._lock:
            self._busy.discard(process)

    def _later(self, seconds, function, *args):
        timer = threading.Timer(seconds, function, args)
        timer.daemon = True
        with self._lock:
            self._timers.append(timer)
        timer.start()

    def _fault_kill(self):
        process = self._pick()
        if process is None:
            return
        process.kill()
        self.event('SIGKILL', 'SIGKILL %s', process.label)

        def restart():
            process.start()
            self._free(process)
        self._later(self.args.restart_after, restart)

    def _fault_stop(self):
        process = self._pick()
        if process is None:
            return
        process.send(signal.SIGSTOP)
        self.event('SIGSTOP', 'SIGSTOP %s for %.0f s', process.label,
                   self.args.stop_seconds)

        def resume():
            process.send(signal.SIGCONT)
            self._free(process)
        self._later(self.args.stop_seconds, resume)

    def _fault_broker(self):
        name = getattr(self.broker, 'name', 'RabbitMQ')
        self.event('RabbitMQ restart', '%s restart (down %.0f s)', name,
                   self.args.restart_down)
        took = self.broker.restart(self.args.restart_down)
        self.event(None, '%s back after %.0f s', name, took)

    def _fault_writer(self):
        self.writer.switch()
        time.sleep(5)
        self.event('writer moved', 'writer address moved: %s',
                   self.writer.moves()[-1][2])

    def _fault_database(self):
        self.event('database restart', '%s restart (down %.0f s)',
                   self.database.name, self.args.restart_down)
        took = self.database.restart(self.args.restart_down)
        self.event(None, '%s back after %.0f s', self.database.name, took)

    def finish(self):
        """No more faults: resume, restart what is down, clear the backend.

        Creates already delayed still finish late.
        """
        self._stopping.set()
        self.join()
        for restart in self._restarts:
            restart.join()
        with self._lock:
            timers = list(self._timers)
        for timer in timers:
            timer.cancel()
            timer.join()
        for process in self.processes:
            if process.alive():
                process.send(signal.SIGCONT)
            else:
                process.start()
        self._busy.clear()
        self.trove.clear_injections()
        self.event(None, 'faults stopped')
