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
"""The engine benchmark's burst: N policies due at one instant, K engines."""

import collections
import datetime
import os
import re
import time

from oslo_utils import timeutils
from tools.benchmarks.engine import seeding
from tools.benchmarks import machine
from tools.benchmarks import reporting


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


# What one burst measured, for the summary of several runs.
BurstResult = collections.namedtuple('BurstResult', (
    'run', 'rate', 'runs', 'cast_twice', 'extra_deliveries', 'sweep_recasts',
    'left_pending', 'deadlocks', 'load'))


def burst_progress(db):
    """(policies due, executions PENDING, runs recorded, first created)."""
    now = timeutils.utcnow()
    due = db.scalar('SELECT count(*) FROM backup_policy '
                    'WHERE enabled = :enabled AND next_execution_time <= :now',
                    enabled=True, now=now)
    pending = db.scalar("SELECT count(*) FROM backup_execution "
                        "WHERE status = 'PENDING'")
    runs = db.scalar("SELECT count(*) FROM backup_execution "
                     "WHERE status <> 'SKIPPED'")
    started = db.scalar('SELECT min(created_at) FROM backup_execution')
    return due, pending, runs, started


def load_average():
    return '%.2f %.2f %.2f' % os.getloadavg()


def run_engine_burst(bench, run=1):
    args, db = bench.args, bench.db
    if args.runs > 1:
        bench.file_prefix = 'run%d-' % run
        bench.consumer.ask('reset')
    bench.engines = []
    for _ in range(args.engines):
        bench.add_engine()
    bench.start_sampler()
    if args.wait_idle:
        machine.wait_for_idle(args.wait_idle)
    if args.warm:
        launched = time.time()
        before = bench.snapshot()
        for engine in bench.engines:
            engine.start()
        if not bench.wait_registered(args.engines):
            reporting.progress(
                'warning: not every engine registered within 60 s')
        due = timeutils.utcnow() + datetime.timedelta(seconds=args.lead)
        reset_burst(db, due)
        if seeding.epoch(timeutils.utcnow()) > seeding.epoch(due):
            reporting.progress(
                'warning: the due instant passed before it was armed')
    else:
        due = timeutils.utcnow() - datetime.timedelta(seconds=1)
        reset_burst(db, due)
        launched = time.time()
        before = bench.snapshot()
        for engine in bench.engines:
            engine.start()
    load = load_average()
    deadlocks_before, _ = db.deadlocks()
    reporting.progress('burst: %d policies due at %s, %d engine(s)',
                       args.policies, due.time(), args.engines)

    kills = []
    next_kill = None
    deadline = time.time() + args.timeout
    done = None
    while time.time() < deadline:
        due_left, pending, runs, started = burst_progress(db)
        # Done when every run was recorded and reached the stand-in: a
        # run is recorded DISPATCHED before it is cast.
        if due_left == 0 and pending == 0 and started is not None and \
                bench.consumer.ask('status')['unique'] >= runs:
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
                kills.append((now - seeding.epoch(started), victim.number,
                              due_left))
                reporting.progress('SIGKILL engine %d (%d policies still '
                                   'due), restarted', victim.number, due_left)
                next_kill = now + bench.rng.uniform(0.3, 2.0)
        time.sleep(0.2)
    if done is None:
        reporting.progress('warning: timeout: %d due, %d pending, %d of %d '
                           'runs received', due_left, pending,
                           bench.consumer.ask('status')['unique'], runs)
    for engine in bench.engines:
        engine.sample()
    usage = machine.usage(before, bench.snapshot(), 'engines', sum(
        inc.cpu() for engine in bench.engines
        for inc in engine.incarnations))
    bench.stop_engines()
    rows = db.rows('SELECT id, policy_id, scheduled_at, created_at, '
                   'dispatched_at, status FROM backup_execution')
    runs = [row for row in rows if row.status != 'SKIPPED']
    reporting.progress('engines stopped; waiting for the consumer to drain')
    status = bench.consumer.wait_for(len(runs))
    received = bench.consumer.ask('ids')
    consumer_cpu = bench.consumer.cpu_seconds()
    deadlocks_after, scope = db.deadlocks()
    deadlocks = ('%d (%s)' % (deadlocks_after - deadlocks_before, scope)
                 if deadlocks_after is not None else 'unknown')
    return report_burst(bench, run, due, launched, done, rows, received,
                        status, kills, consumer_cpu, usage, deadlocks, load)


def report_burst(bench, run, due, launched, done, rows, received, status,
                 kills, consumer_cpu, usage, deadlocks, load):
    args, report = bench.args, bench.report
    report.section('Burst%s: %d policies due at one instant, %d engine(s)%s'
                   % (' %d of %d' % (run, args.runs) if args.runs > 1 else '',
                      args.policies, args.engines,
                      ', %d SIGKILLs' % len(kills) if args.kill else ''))
    runs = [row for row in rows if row.status != 'SKIPPED']
    dispatched = [row for row in runs if row.dispatched_at is not None]
    delivered = [received[row.id][1] for row in runs if row.id in received]
    due_epoch = seeding.epoch(due)
    if not dispatched or not delivered:
        report.item('result', 'nothing was dispatched')
        return BurstResult(run, 0.0, len(runs), 0, 0, 0, 0, deadlocks, load)
    first_tick = min(seeding.epoch(row.created_at) for row in rows)
    # A run is recorded DISPATCHED, stamped, before it is cast: the last
    # cast is the last arrival at the stand-in.
    last_cast = max(delivered)
    last_stamp = max(seeding.epoch(row.dispatched_at) for row in dispatched)
    report.item('start', 'warm engines, due %.1f s after they were '
                'launched' % (due_epoch - launched) if args.warm else
                'cold: due %.1f s before the engines were launched (set '
                '1 s in the past, then the tables were vacuumed)'
                % (launched - due_epoch))
    report.item('launch -> first tick (start-up)',
                '%.2f s' % (first_tick - launched))
    report.item('machine load (uptime) at launch', load)
    report.item('executions committed and cast', '%d of %d policies'
                % (len(delivered), args.policies))
    rate = len(delivered) / max(last_cast - first_tick, 1e-6)
    report.item('dispatch rate, first tick -> last cast',
                '%.0f /s  (%d in %.2f s: min(created_at) to the last '
                'arrival at the stand-in)' % (rate, len(delivered),
                                              last_cast - first_tick))
    report.item('  first tick -> last commit',
                '%.0f /s  (%.2f s: to max(dispatched_at))' % (
                    len(dispatched) / max(last_stamp - first_tick, 1e-6),
                    last_stamp - first_tick))
    report.item('dispatch rate, due instant -> last cast',
                '%.0f /s  (%.2f s)' % (
                    len(delivered) / max(last_cast - due_epoch, 1e-6),
                    last_cast - due_epoch))
    report.item('wall time, engine launch -> last cast',
                '%.2f s (includes process start-up)'
                % (last_cast - launched))
    if done:
        report.item('launch -> nothing due and every run received',
                    '%.2f s' % (done - launched))
    epoch = seeding.epoch
    report.item('lateness received - scheduled_at', reporting.spread(
        [received[row.id][1] - epoch(row.scheduled_at)
         for row in runs if row.id in received]))
    report.item('lateness received - first tick', reporting.spread(
        [arrived - first_tick for arrived in delivered]))
    report.item('lateness dispatched_at - scheduled_at', reporting.spread(
        [epoch(row.dispatched_at) - epoch(row.scheduled_at)
         for row in dispatched]) + ' (stamped as its tick began)')
    report.item('cast timeline (per second from first tick)',
                ' '.join(str(count) for count in reporting.per_second(
                    [arrived - first_tick for arrived in delivered])))
    report_correctness(bench, rows, runs, dispatched, received, status,
                       kills)
    sweep_recasts = report_engines(bench, len(dispatched))
    cast_twice = sum(1 for row in runs
                     if received.get(row.id, [0])[0] > 1)
    extra = sum(received[row.id][0] - 1 for row in runs
                if row.id in received)
    left_pending = sum(1 for row in runs if row.status == 'PENDING')
    report.item('re-casts (target 0)',
                '%d executions cast more than once (%d extra deliveries '
                'at the stand-in); %d cast again by the sweeps (engine '
                'logs)' % (cast_twice, extra, sweep_recasts))
    report.item('left PENDING at the end', left_pending)
    report.item('database deadlocks during the run', deadlocks)
    report.item('consumer CPU (user+sys, whole run so far)',
                '%.1f s (%s consumer)' % (consumer_cpu, args.consumer))
    report.item('machine, engine launch -> done', usage)
    return BurstResult(run, rate, len(runs), cast_twice, extra,
                       sweep_recasts, left_pending, deadlocks, load)


def report_runs(report, results):
    """One line per run of a burst repeated with --runs."""
    report.section('Runs in a row')
    for result in results:
        report.item(
            'run %d' % result.run,
            '%.0f /s; re-casts: %d cast more than once, %d by sweeps; '
            '%d left PENDING; deadlocks %s; load %s' % (
                result.rate, result.cast_twice, result.sweep_recasts,
                result.left_pending, result.deadlocks, result.load))


def report_correctness(bench, rows, runs, dispatched, received, status,
                       kills):
    """Duplicates and missing executions; what the stand-in received."""
    report = bench.report
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
                bench.db.scalar(
                    'SELECT count(*) FROM backup_policy p WHERE NOT '
                    'EXISTS (SELECT 1 FROM backup_execution e '
                    'WHERE e.policy_id = p.id)'))
    report.item('  missing: executions never received',
                sum(1 for execution_id in ids if execution_id not in received))
    report.item('  executions not DISPATCHED (dispatched_at NULL)',
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
    if bench.args.kill:
        report.item('  SIGKILLs (s after first tick, engine, due)',
                    '; '.join('%.1f s, #%d, %d due' % kill for kill in kills))


def report_engines(bench, executions):
    """Each engine's CPU, RSS and log; returns the sweeps' re-casts."""
    report = bench.report
    total = 0.0
    recasts = 0
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
        recasts += recast
        report.item('engine %d log' % engine.number,
                    '%d ticks with work (mean %.0f policies), %d executions '
                    'cast again by sweeps, %d ERROR lines, %d "Could not '
                    'cast"' % (len(ticks), sum(map(int, ticks))
                               / max(len(ticks), 1), recast,
                               log.count(' ERROR '),
                               log.count('Could not cast')))
    report.item('engine CPU, all engines', '%.2f s (%.2f ms per execution)'
                % (total, 1000 * total / max(executions, 1)))
    return recasts
