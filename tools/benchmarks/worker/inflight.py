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
"""The worker benchmark's in-flight monitoring: one worker, N backups.

The backups are started at a fake Trove served by the benchmark process,
where they stay BUILDING longer than the run; the worker is measured while
it watches them.
"""

import collections
import math
import re
import threading
import time
import urllib.parse

from tools.benchmarks import machine
from tools.benchmarks import pyspy
from tools.benchmarks import reporting
from tools.benchmarks.worker import bench as worker_bench

from dbaas_scheduler.testing import fake_trove

# The worker's DEBUG line after each pass of its poller.
POLL_PASS = re.compile(
    r'^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.(\d{3}) .*Poll pass: checked '
    r'(\d+) running backups in ([\d.]+)s')
_TROVE_PATH = re.compile(r'/(instances|backups)(/[^/]+)?/?$')


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


def poll_passes(log):
    """[(end time, backups checked, seconds)] from a worker's DEBUG log."""
    passes = []
    for line in log.splitlines():
        match = POLL_PASS.match(line)
        if match:
            passes.append((worker_bench.log_time(match.group(1),
                                                 match.group(2)),
                           int(match.group(3)), float(match.group(4))))
    return passes


def run_in_flight(bench, count):
    args = bench.args
    trove = CountingTrove(behaviour=fake_trove.BackupBehaviour(
        new_seconds=args.new_seconds, build_seconds=args.build_seconds))
    trove.setUp()
    try:
        db = bench.new_database('inflight_%d' % count)
        reporting.progress('in-flight %d: seeding %s', count, db.name)
        ids = worker_bench.seed(
            db, [trove.add_instance() for _ in range(count)], 'trove')
        startup = bench.start_workers(1, 'inflight-%d' % count, True,
                                      trove.url)
        worker = bench.workers[0]
        sampler = worker_bench.Sampler(bench.workers, args.sample_interval)
        sampler.take()
        idle = sampler.samples[0][-1]
        sampler.start()
        cast_start, cast_end = bench.cast(ids, args.per_message)
        reporting.progress('in-flight %d: cast in %.1f s, waiting for every '
                           'backup to start', count, cast_end - cast_start)

        def all_started():
            counts = worker_bench.status_counts(db)
            running = counts.get('RUNNING', (0, 0))[1]
            if running == count:
                return True
            return '%d of %d running with a backup; %s' % (
                running, count, sorted(counts.items()))
        started = bench.wait(all_started, 'start', args.timeout)
        ramp = time.time() - cast_start
        if args.wait_idle:
            machine.wait_for_idle(args.wait_idle)

        requests_before = trove.snapshot()
        profilers = bench.profile('inflight-%d' % count)
        sampler.take()
        before = machine.snapshot()
        window_start = time.time()
        reporting.progress('in-flight %d: measuring for %d s', count,
                           args.seconds)
        time.sleep(args.seconds)
        window_end = time.time()
        sampler.take()
        after = machine.snapshot()
        requests = trove.snapshot() - requests_before
        for profiler in profilers:
            profiler.stop()
        samples = sampler.between(0, window_start, window_end)
        sampler.stop()
        counts = worker_bench.status_counts(db)
        log = worker.log()
        stopped = bench.stop_workers()[0]
        window = {'start': window_start, 'end': window_end,
                  'samples': samples, 'idle': idle, 'requests': requests,
                  'usage': (before, after), 'profilers': profilers,
                  'startup': startup, 'cast': cast_end - cast_start,
                  'ramp': ramp, 'started': started, 'counts': counts,
                  'log': log, 'stopped': stopped}
    finally:
        trove.cleanUp()
    bench.drop_database()
    return report_window(bench, count, window)


def report_window(bench, count, window):
    """The in-flight section of the report; the figures to compare."""
    args, report = bench.args, bench.report
    samples, idle = window['samples'], window['idle']
    requests, ramp = window['requests'], window['ramp']
    first, last = samples[0], samples[-1]
    elapsed = window['end'] - window['start']
    cpu = last['cpu'] - first['cpu']
    passes = [p for p in poll_passes(window['log'])
              if window['start'] <= p[0] <= window['end']]
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
    report.item('worker start-up (launch -> listening)',
                '%.1f s' % window['startup'])
    report.item('cast', '%d executions in %d messages of %d in %.2f s' % (
        count, math.ceil(count / args.per_message), args.per_message,
        window['cast']))
    report.item('first cast -> all RUNNING with a backup',
                '%.1f s (%.0f backups started /s; 3 Trove requests each)%s'
                % (ramp, count / ramp, '' if window['started']
                   else ' TIMEOUT'))
    report.item('statuses at the end of the window', ', '.join(
        '%s %d' % (status, number)
        for status, (number, _) in sorted(window['counts'].items())))
    report.item('worker CPU over the window', '%.2f s in %.0f s = %.1f%% '
                'of one core' % (cpu, elapsed, result['cpu']))
    report.item('worker threads', 'idle before the casts %d; window start '
                '%d, end %d (min %d, max %d over %d samples)' % (
                    idle['threads'], first['threads'], last['threads'],
                    min(threads), max(threads), len(samples)))
    report.item('worker RSS', 'idle %s; window start %s, end %s' % (
        reporting.mib(idle['rss']), reporting.mib(first['rss']),
        reporting.mib(last['rss'])))
    report.item('poll passes ending in the window', '%d (%d checked all '
                '%d; checked: %s)' % (
                    len(passes), len(full), count,
                    ', '.join(str(p[1]) for p in passes) or '-'))
    report.item('poll pass duration p50 / p99 / max',
                reporting.spread([p[2] for p in full]))
    report.item('time between pass ends', reporting.spread(gaps, digits=2))
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
                machine.usage(*window['usage'], 'workers', cpu))
    for profiler in window['profilers']:
        pyspy.report_profile(report, profiler, elapsed, args.profile_top)
    report.item('worker stop', window['stopped'])
    report.item('worker log', worker_bench.log_levels(window['log']))
    return result


def report_in_flight(report, results):
    report.section('In-flight monitoring compared')
    for result in results:
        report.item('%d backups' % result['count'],
                    'CPU %.1f%% of a core; threads start %d / end %d '
                    '(min %d, max %d; idle %d); RSS %s; pass p50 %.2f s; '
                    'show backup %.1f /s' % (
                        result['cpu'], *result['threads'],
                        result['idle_threads'],
                        reporting.mib(result['rss']),
                        reporting.percentile(sorted(result['passes']), 0.5),
                        result['rate']))
