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
"""The engine's tick alone, in process, on a real database: CPU per run.

Seeds ``--policies`` due policies in a database of its own and calls
:func:`dbaas_scheduler.engine.tick.run_tick` until none is due, in this
process, with no broker: what a burst costs the engine and the database
without the casts, which the engine benchmark adds.  Measured per
execution: this process's CPU time (the engine's share), the CPU time of
the database server's processes serving this run (PostgreSQL: the
backends connected to the database; MariaDB: the server thread that used
most CPU during the run, which is this run's connection unless another
client was busier), and the wall time of each step of a tick.  CPU time
hardly depends on what else runs on the machine; wall time does.

    $ python -m tools.benchmarks.tick --database postgresql --policies 50000
    $ python -m tools.benchmarks.tick --database mysql --policies 50000 \\
          --runs 3 --protection

``--protection`` sets windows and a protection target on every policy
(``start_window``, ``completion_window``, an exclusion
that never matches, ``rpo`` and its protection state), to compare with
a run without them.  ``--profile N`` prints the N costliest functions
(cProfile, cumulative) of the last run.
"""

import cProfile
import datetime
import os
import pstats
import tempfile
import time

from oslo_config import cfg
from oslo_utils import timeutils
import psutil
from tools.benchmarks import common
from tools.benchmarks import database
from tools.benchmarks.engine import seeding
from tools.benchmarks import reporting

from dbaas_scheduler import config
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler.engine import tick

STEPS = (('claim', db_scheduling, 'claim_due_policies'),
         ('plan', tick, 'plan_batch'),
         ('advance', db_scheduling, 'advance_policies'),
         ('insert', db_scheduling, 'insert_executions'),
         ('advance+insert', db_scheduling, 'record_tick'))


def _timed(totals, name, function):
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            totals[name] = totals.get(name, 0.0) + (
                time.perf_counter() - started)
    return wrapper


class ServerCPU:
    """CPU time of the server processes or thread serving this run."""

    def __init__(self, db):
        self.db = db

    def _postgres(self):
        pids = [row[0] for row in self.db.rows(
            'SELECT pid FROM pg_stat_activity WHERE datname = :name',
            name=self.db.name)]
        total = {}
        for pid in pids:
            try:
                times = psutil.Process(pid).cpu_times()
            except psutil.NoSuchProcess:
                continue
            total[pid] = times.user + times.system
        return total

    def _mysql(self):
        for proc in psutil.process_iter(['name']):
            if proc.info['name'] in ('mariadbd', 'mysqld'):
                times = proc.cpu_times()
                return {proc.pid: times.user + times.system}
        return {}

    def take(self):
        return (self._postgres() if self.db.backend == 'postgresql'
                else self._mysql())

    def used(self, before, after):
        # A backend that ended between the two is not counted; the
        # engine's pool keeps its connections.
        return sum(value - before.get(key, 0.0)
                   for key, value in after.items())


def _arm(db, due, protection):
    db.execute('DELETE FROM backup_execution')
    values = {'due': seeding.db_string(due)}
    extra = ''
    if protection:
        # Windows, an exclusion that never matches, a protection target
        # and its state, as the API stores them.
        extra = (', start_window = 3600, completion_window = 7200, '
                 'exclusions = :exclusions, rpo = 90000, '
                 'effective_rpo = 90000, protection = :ok, '
                 'protected_until = :later, protection_check_at = :later')
        values.update(exclusions='["2020-01-01"]', ok='ok',
                      later=seeding.db_string(
                          due + datetime.timedelta(days=1)))
    db.execute('UPDATE backup_policy SET enabled = :true, '
               'next_execution_time = :due' + extra,
               true=True, **values)
    db.vacuum('backup_policy', 'backup_execution')


def _run(args, context, db, server, number):
    due = timeutils.utcnow() - datetime.timedelta(seconds=1)
    _arm(db, due, args.protection)
    totals = {}
    originals = []
    for name, module, attribute in STEPS:
        function = getattr(module, attribute, None)
        if function is None:
            continue
        originals.append((module, attribute, function))
        setattr(module, attribute, _timed(totals, name, function))
    profile = cProfile.Profile() if args.profile else None
    # Connect first, so the server's counters see every backend.
    db_scheduling.get_earliest_due_time(context)
    server_before = server.take()
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    executions = ticks = 0
    try:
        if profile:
            profile.enable()
        while True:
            result = tick.run_tick(context, timeutils.utcnow(True),
                                   args.batch_size, 3600)
            if not result.claimed:
                break
            ticks += 1
            executions += len(result.runs) + len(result.expired)
        if profile:
            profile.disable()
    finally:
        for module, attribute, function in originals:
            setattr(module, attribute, function)
    cpu = time.process_time() - cpu_before
    wall = time.perf_counter() - wall_before
    server_cpu = server.used(server_before, server.take())
    count = db.scalar('SELECT count(*) FROM backup_execution')
    assert count == args.policies == executions, (count, executions)
    print('run %d: %d executions in %d ticks, %.2f s wall (%.0f/s); '
          'CPU per execution: engine %.1f us, database %.1f us; load %s'
          % (number, executions, ticks, wall, executions / wall,
             cpu / executions * 1e6, server_cpu / executions * 1e6,
             ' '.join('%.2f' % value for value in os.getloadavg())))
    print('  wall per tick: %s' % ', '.join(
        '%s %.1f ms' % (name, totals[name] / ticks * 1e3)
        for name, _, _ in STEPS if name in totals))
    if profile:
        stats = pstats.Stats(profile)
        stats.sort_stats('cumulative').print_stats(args.profile)
        stats.sort_stats('tottime').print_stats(args.profile)
    return cpu / executions, server_cpu / executions


def main(argv=None):
    parser = common.parser(__doc__, 'tools.benchmarks.tick')
    common.add_server_options(parser, 'dbaas_bench_tick',
                              'Name of the database to create.')
    parser.add_argument('--policies', type=int, default=50000)
    parser.add_argument('--batch-size', type=int, default=1000)
    parser.add_argument('--runs', type=int, default=1)
    parser.add_argument('--protection', action='store_true',
                        help='Windows and a protection target on every '
                             'policy.')
    parser.add_argument('--profile', type=int, default=0, metavar='N')
    parser.add_argument('--keep', action='store_true')
    args = parser.parse_args(argv)

    db = database.Database(args.database, name=args.database_name,
                           admin_url=args.admin_url)
    reporting.progress('creating %s', db.name)
    db.create()
    try:
        with tempfile.TemporaryDirectory() as workdir:
            config_file = os.path.join(workdir, 'tick.conf')
            common.write_config(config_file, {
                'DEFAULT': {'log_dir': workdir},
                'database': {'connection': db.url_string}})
            common.upgrade_schema(config_file)
            conf = cfg.ConfigOpts()
            config.parse_args(conf, ['--config-file', config_file])
            db_api.configure(conf)
        reporting.progress('seeding %d policies', args.policies)
        seeding.seed_burst(db, args.policies, timeutils.utcnow())
        context = dbaas_context.get_admin_context()
        server = ServerCPU(db)
        figures = [_run(args, context, db, server, number)
                   for number in range(1, args.runs + 1)]
        if len(figures) > 1:
            engine = sorted(value for value, _ in figures)
            server_cpu = sorted(value for _, value in figures)
            print('median CPU per execution: engine %.1f us, database '
                  '%.1f us' % (engine[len(engine) // 2] * 1e6,
                               server_cpu[len(server_cpu) // 2] * 1e6))
    finally:
        db_api.get_engine().dispose()
        if not args.keep:
            db.drop()


if __name__ == '__main__':
    main()
