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
"""The worker benchmark's consume + claim throughput: W workers, N casts.

The executions are on the fake backend, whose backups are created at
once, so what is measured is how fast the workers take messages, claim
their executions and record the backups.
"""

import collections
import math
import re
import time

import sqlalchemy as sa
from tools.benchmarks import machine
from tools.benchmarks import pyspy
from tools.benchmarks import reporting
from tools.benchmarks.worker import bench as worker_bench

# The worker's INFO line once a backup was started and its id recorded
# (lifecycle.log_started): one per backup, or one per message for its
# backups, "<N> backups started: ...".
BACKUP_STARTED = re.compile(
    r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) '
    r'(?:.*: backup \S+ started on instance|.*? (\d+) backups started: )',
    re.MULTILINE)
EXECUTIONS = worker_bench.EXECUTIONS


def backup_starts(log):
    """POSIX times of the backups the worker's INFO lines say started.

    A line for several backups counts once for each.
    """
    return [worker_bench.log_time(match.group(1), match.group(2))
            for match in BACKUP_STARTED.finditer(log)
            for _ in range(int(match.group(3) or 1))]


def run_claims(bench):
    args = bench.args
    count, per_message = args.claims, args.per_message
    db = bench.new_database('claims')
    reporting.progress('claims: seeding %d executions into %s', count,
                       db.name)
    ids = worker_bench.seed(
        db, ['instance-%d' % n for n in range(count)], 'fake',
        {'fake_build_seconds': args.fake_build_seconds})
    startup = bench.start_workers(args.workers, 'claims', False)
    if args.wait_idle:
        machine.wait_for_idle(args.wait_idle)
    sampler = worker_bench.Sampler(bench.workers, args.sample_interval)
    sampler.take()
    profilers = bench.profile('claims')
    before = machine.snapshot()
    cast_start, cast_end = bench.cast(ids, per_message)
    backlog, consumers = bench.queue_state()
    reporting.progress('claims: cast in %.1f s; %s messages still queued',
                       cast_end - cast_start, backlog)
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
    after = machine.snapshot()
    for profiler in profilers:
        profiler.stop()
    cpu = {}
    for worker in bench.workers:
        samples = sampler.samples[worker.number]
        cpu[worker.number] = samples[-1]['cpu'] - samples[0]['cpu']
    outcomes = (measure_outcomes(bench, db, count, sampler)
                if args.outcomes else None)
    rows = db.rows(sa.select(
        EXECUTIONS.c.owner, EXECUTIONS.c.started_at, EXECUTIONS.c.attempts,
        EXECUTIONS.c.status, EXECUTIONS.c.backup_id))
    stopped = bench.stop_workers()
    logs = [worker.log() for worker in bench.workers]
    bench.drop_database()

    claims = sorted((row for row in rows if row.started_at is not None),
                    key=lambda row: row.started_at)
    if not claims:
        bench.report.section('Claims: nothing was claimed')
        return
    report_claims(bench, rows, claims, logs, cpu, {
        'startup': startup, 'cast': (cast_start, cast_end),
        'backlog': backlog, 'consumers': consumers, 'finished': finished,
        'usage': (before, after), 'seen': seen, 'profilers': profilers,
        'stopped': stopped})
    if outcomes is not None:
        report_outcomes(bench, outcomes)


FINISHED = ('SUCCEEDED', 'FAILED', 'SKIPPED', 'EXPIRED')


def measure_outcomes(bench, db, count, sampler):
    """Wait for the poll passes to finish every execution; what it cost.

    The fake backend's backups are complete once created: each worker's
    next full poll pass (``[worker] poll_interval``) finds all of its
    backups done and records their outcomes (``outcome.Outcomes.finish``:
    the final state, the protection state, reconciliation, notifications;
    then retention).  Measured from all started to all finished, so the
    wait for the first pass is in the wall time but costs no CPU.
    """
    marks = {worker.number: len(sampler.samples[worker.number])
             for worker in bench.workers}
    before = machine.snapshot()
    finished = sa.select(sa.func.count()).where(
        EXECUTIONS.c.status.in_(FINISHED))

    def all_finished():
        done = db.scalar(finished)
        if done >= count:
            return True
        return '%d outcomes recorded of %d' % (done, count)
    complete = bench.wait(all_finished, 'outcomes', bench.args.timeout)
    sampler.take()
    after = machine.snapshot()
    cpu = {}
    for worker in bench.workers:
        samples = sampler.samples[worker.number]
        cpu[worker.number] = (samples[-1]['cpu']
                              - samples[marks[worker.number] - 1]['cpu'])
    rows = db.rows(sa.select(EXECUTIONS.c.owner, EXECUTIONS.c.status,
                             EXECUTIONS.c.finished_at))
    return {'complete': complete, 'usage': (before, after), 'cpu': cpu,
            'rows': rows}


def report_outcomes(bench, outcomes):
    report = bench.report
    rows = outcomes['rows']
    ended = sorted(row.finished_at.timestamp() for row in rows
                   if row.finished_at is not None)
    report.section('Outcomes: the poll passes that record them')
    report.item('recorded', '%d of %d%s' % (
        len(ended), len(rows), '' if outcomes['complete'] else ' TIMEOUT'))
    states = collections.Counter(row.status for row in rows)
    report.item('statuses', ', '.join(
        '%s %d' % item for item in sorted(states.items())))
    if len(ended) > 1:
        report.item('rate, first -> last finished_at', '%.0f /s  (%d in '
                    '%.2f s)' % (len(ended) / max(ended[-1] - ended[0],
                                                  1e-6),
                                 len(ended), ended[-1] - ended[0]))
    number_of = {w.service_id: w.number for w in bench.workers}
    mine = collections.Counter(number_of.get(row.owner) for row in rows
                               if row.finished_at is not None)
    for number, used in sorted(outcomes['cpu'].items()):
        report.item('worker %s' % number, '%d outcomes; CPU %.1f s (%.2f '
                    'ms per outcome)' % (mine[number], used,
                                         1000 * used / max(mine[number], 1)))
    report.item('machine, all started -> all finished', machine.usage(
        *outcomes['usage'], 'workers', sum(outcomes['cpu'].values())))


def report_claims(bench, rows, claims, logs, cpu, run):
    args, report = bench.args, bench.report
    count, per_message = args.claims, args.per_message
    cast_start, cast_end = run['cast']
    first = claims[0].started_at.timestamp()
    last = claims[-1].started_at.timestamp()
    starts = sorted(when for log in logs for when in backup_starts(log))
    number_of = {w.service_id: w.number for w in bench.workers}
    messages = math.ceil(count / per_message)

    report.section('Consume + claim: %d executions, %d worker(s), %d per '
                   'message' % (count, args.workers, per_message))
    report.item('backend', 'fake (in memory), fake_build_seconds = %g'
                % args.fake_build_seconds)
    report.item('worker options', ', '.join(args.worker_option) or
                'defaults (pool_size 16, poll_interval 15)')
    report.item('worker start-up (launch -> listening)',
                '%.1f s' % run['startup'])
    report.item('cast', '%d messages in %.2f s (%.0f messages/s, %.0f '
                'executions/s); %s still queued at its end; %s consumers'
                % (messages, cast_end - cast_start,
                   messages / max(cast_end - cast_start, 1e-6),
                   count / max(cast_end - cast_start, 1e-6), run['backlog'],
                   run['consumers']))
    report.item('claimed', '%d of %d%s' % (
        len(claims), count, '' if run['finished'] else ' TIMEOUT'))
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
                    '%.2f s  (%.0f /s; %d backups in "started" lines)' % (
                        starts[-1] - cast_start,
                        len(starts) / (starts[-1] - cast_start),
                        len(starts)))
    report.item('claims per second (started_at)', ' '.join(
        str(n) for n in reporting.per_second(
            [row.started_at.timestamp() - first for row in claims])))
    if starts:
        report.item('backups started per second (log)', ' '.join(
            str(n) for n in reporting.per_second(
                [when - first for when in starts])))
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
                machine.usage(*run['usage'], 'workers', sum(cpu.values())))
    for profiler in run['profilers']:
        pyspy.report_profile(report, profiler,
                             run['seen'] - run['usage'][0][0],
                             args.profile_top)
    report.item('worker stop', '; '.join(run['stopped']))
    report.item('worker logs', '; '.join(
        worker_bench.log_levels(log) for log in logs))
