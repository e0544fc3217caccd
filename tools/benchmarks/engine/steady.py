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
"""The engine benchmark's steady state: one engine, 'H H * * *' policies.

A short run of a real day would mostly see nothing due, so the day is
shifted: every run before the end of the measurement is parked whole days
later, then one stretch of the day is moved to start just after the
engine registered (see doc/source/contributor/benchmarks.rst).
"""

import collections
import datetime
import time

from oslo_utils import timeutils
import sqlalchemy as sa
from tools.benchmarks import database
from tools.benchmarks.engine import seeding
from tools.benchmarks import machine
from tools.benchmarks import reporting


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
        shift = seeding.epoch(first) - seeding.epoch(base)
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
    Only DISPATCHED rows: one given back PENDING after a failed cast is
    the sweep's to cast again.
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
    db = database.Database(args.database, name='%s_steady_%d' % (
        args.database_name, count), url=args.database_url,
        admin_url=args.admin_url)
    bench.use_database(db)
    if args.reuse and db.exists():
        db.connect()
        try:
            seeded = db.scalar(
                'SELECT count(*) FROM backup_policy WHERE schedule = :s',
                s=seeding.STEADY_SCHEDULE)
        except sa.exc.DBAPIError:
            seeded = None
        if seeded == count:
            reporting.progress('steady: reusing %s with %d policies',
                               db.name, count)
            # Seeded by an older checkout: bring its schema to this one's
            # (a no-op when it is there already).
            bench.upgrade_schema()
            return db, 0.0
    reporting.progress('steady: seeding %d policies into %s', count, db.name)
    started = time.time()
    db.create()
    bench.upgrade_schema()
    seeding.seed_steady(db, count, args.seed_processes)
    db.vacuum('backup_policy')
    return db, time.time() - started


def run_steady(bench, count):
    args = bench.args
    db, seeded = prepare_steady_database(bench, count)
    bench.start_consumer()
    bench.consumer.ask('reset')
    window = args.minutes * 60
    db.execute('DELETE FROM backup_execution')
    db.execute('DELETE FROM service')
    horizon = timeutils.utcnow() + datetime.timedelta(seconds=window + 600)
    parked = park(db, horizon)
    db.vacuum('backup_policy')
    db.vacuum('backup_execution')
    bench.engines = []
    engine = bench.add_engine(steady=True)
    bench.start_sampler()
    engine.start()
    launched = time.time()
    if not bench.wait_registered(1):
        reporting.progress('warning: the engine did not register within '
                           '60 s')
    time.sleep(2)
    if args.wait_idle:
        machine.wait_for_idle(args.wait_idle)
    base = timeutils.utcnow() + datetime.timedelta(seconds=args.lead)
    armed = arm(db, args.spread, base, window)
    if timeutils.utcnow() > base:
        reporting.progress('warning: the first runs were armed after they '
                           'were due')
    reporting.progress('steady: %d policies, %d due in the next %d min '
                       '(%s), parked %d', count, armed, args.minutes,
                       args.spread, parked)
    while timeutils.utcnow() < base:
        time.sleep(0.05)
    engine.sample()
    cpu_start = engine.current.cpu()
    window_start = time.time()
    before = bench.snapshot()
    end = window_start + window
    waiting = []
    while time.time() < end:
        time.sleep(min(1.0, max(0.0, end - time.time())))
        complete_received(bench, waiting)
    engine.sample()
    window_end = time.time()
    measured = {'launched': launched, 'start': window_start,
                'end': window_end, 'cpu': engine.current.cpu() - cpu_start}
    usage = machine.usage(before, bench.snapshot(), 'engines',
                          measured['cpu'])
    rss_end = max([entry['rss'] for entry in engine.current.procs.values()
                   if entry['role'] == 'worker'] or [0])
    overdue = db.scalar('SELECT count(*) FROM backup_policy WHERE enabled = '
                        ':enabled AND next_execution_time <= :t',
                        enabled=True, t=seeding.db_time(window_end - 2))
    bench.stop_engines()
    rows = db.rows('SELECT id, policy_id, scheduled_at, dispatched_at, '
                   'status FROM backup_execution WHERE scheduled_at >= '
                   ':start AND scheduled_at <= :end',
                   start=base, end=seeding.db_time(window_end))
    runs = [row for row in rows if row.status != 'SKIPPED']
    bench.consumer.wait_for(len(runs), timeout=60)
    return report_steady(bench, count, db, seeded, measured, usage, rss_end,
                         overdue, rows)


def report_steady(bench, count, db, seeded, measured, usage, rss_end,
                  overdue, rows):
    args, report, engine = bench.args, bench.report, bench.engines[0]
    runs = [row for row in rows if row.status != 'SKIPPED']
    received = bench.consumer.ask('ids')
    dispatched = [row for row in runs if row.dispatched_at is not None]
    instants = collections.Counter(row.scheduled_at for row in rows)
    inc = engine.current
    epoch = seeding.epoch
    elapsed = measured['end'] - measured['start']
    cpu_used = measured['cpu']

    report.section('Steady state: %d policies on %r, 1 engine, %d min (%s)'
                   % (count, seeding.STEADY_SCHEDULE, args.minutes,
                      args.spread))
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
    lateness = sorted(received[row.id][1] - epoch(row.scheduled_at)
                      for row in runs if row.id in received)
    report.item('lateness received - scheduled_at',
                reporting.spread(lateness))
    # dispatched_at is stamped when the tick starts, before it commits.
    report.item('  dispatched_at - scheduled_at', reporting.spread(
        [epoch(row.dispatched_at) - epoch(row.scheduled_at)
         for row in dispatched]))
    report.item('engine CPU over the window', '%.2f s in %.0f s = %.2f%% '
                'of one core' % (cpu_used, elapsed,
                                 100 * cpu_used / elapsed))
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
                % (measured['start'] - measured['launched']))
    return {'count': count, 'hwm': inc.hwm('worker'),
            'cpu': 100 * cpu_used / elapsed,
            'lateness': lateness}


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
                        reporting.percentile(ordered, 0.99)))
