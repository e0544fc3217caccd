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
"""The worker benchmark's fairness: one project's burst and another's few.

Project A owns N policies and project B M, all due at the same slot; their
executions are cast as the tick casts a burst, A's first (B's last: the
tail of the burst, the worst case; ``--fair-cast-order`` casts them
shuffled, or shuffled and round-robin by project within each tick's
batch), to W real workers on the fake backend, whose backups take
``--fake-build-seconds``.  A real engine runs beside them for its sweeps
(the policies are due tomorrow: its tick does nothing), which offer
queued executions again.  Measured: B's start delay,
from the slot to the ``started_at`` of each of B's executions -- once
with the worker options as given (no limits by default) and once with
``--fair-option`` added (the limits).
"""

import itertools
import os
import random
import time

import sqlalchemy as sa
from tools.benchmarks import common
from tools.benchmarks import reporting
from tools.benchmarks.worker import bench as worker_bench

ENGINE_BINARY = 'dbaas-scheduler-engine'
PROJECTS = ('bench-a', 'bench-b')
EXECUTIONS = worker_bench.EXECUTIONS
POLICIES = worker_bench.POLICIES
CAST_ORDERS = ('a-first', 'shuffled', 'interleaved')


def cast_order(a_ids, b_ids, order, batch, seed=27):
    """The burst's ids in the order of ``order`` (``CAST_ORDERS``).

    ``shuffled``: the tick claims the policies due at one time in no
    order among them (ORDER BY next_execution_time only), so B's land
    anywhere in the burst; the same seed for every run.  ``interleaved``:
    that order cut in batches of ``batch`` (a tick's), each cast
    round-robin by project.
    """
    if order == 'a-first':
        return a_ids + b_ids
    owner = dict.fromkeys(a_ids, 'a')
    owner.update(dict.fromkeys(b_ids, 'b'))
    ids = a_ids + b_ids
    random.Random(seed).shuffle(ids)
    if order == 'shuffled':
        return ids
    result = []
    for start in range(0, len(ids), batch):
        chunk = ids[start:start + batch]
        by_project = [[i for i in chunk if owner[i] == project]
                      for project in ('a', 'b')]
        for pair in itertools.zip_longest(*by_project):
            result.extend(i for i in pair if i is not None)
    return result


def _seed(db, counts, params):
    """Seed each project's executions, all of one slot; ``[[id]]``."""
    ids = []
    for project_id, count in zip(PROJECTS, counts):
        ids.append(worker_bench.seed(
            db, ['%s-instance-%d' % (project_id, n) for n in range(count)],
            'fake', params, project_id=project_id))
    # One slot for all: the earliest seeded.
    slot = db.scalar(sa.select(sa.func.min(EXECUTIONS.c.scheduled_at)))
    db.execute(EXECUTIONS.update().values(scheduled_at=slot))
    return ids, slot


def _start_engine(bench, label):
    log_file = os.path.join(bench.workdir, label + '.log')
    sections = common.service_config(bench, log_file, 10)
    sections['engine'] = {'sweep_interval': bench.args.fair_sweep_interval,
                          'dispatch_timeout': 60}
    common.set_options(sections, bench.args.worker_option, 'worker')
    config_file = os.path.join(bench.workdir, label + '.conf')
    common.write_config(config_file, sections)
    engine = common.ServiceProcess(99, ENGINE_BINARY, config_file, log_file)
    engine.start()
    return engine


def run_once(bench, counts, options, label):
    """One run; ``{project: [start delay seconds]}`` and the rest."""
    args = bench.args
    saved = list(args.worker_option)
    args.worker_option = saved + options
    try:
        db = bench.new_database(label)
        (a_ids, b_ids), slot = _seed(
            db, counts, {'fake_build_seconds': args.fake_build_seconds})
        bench.start_workers(args.workers, label, False)
        engine = _start_engine(bench, label + '-engine')
        try:
            # The slot is now: the burst is cast as the tick would.
            slot_time = time.time()
            bench.cast(cast_order(a_ids, b_ids, args.fair_cast_order,
                                  args.fair_batch), args.per_message)

            def b_started():
                done = db.scalar(sa.select(sa.func.count()).where(
                    EXECUTIONS.c.project_id == PROJECTS[1],
                    EXECUTIONS.c.started_at.is_not(None)))
                return True if done >= len(b_ids) else (
                    '%d of project B\'s %d started' % (done, len(b_ids)))
            finished = bench.wait(b_started, label, args.timeout)
            seen = time.time()
            rows = db.rows(sa.select(EXECUTIONS.c.project_id,
                                     EXECUTIONS.c.started_at))
        finally:
            engine.stop(30)
            bench.stop_workers()
    finally:
        args.worker_option = saved
    bench.drop_database()
    delays = {project: sorted(row.started_at.timestamp() - slot_time
                              for row in rows
                              if row.project_id == project
                              and row.started_at is not None)
              for project in PROJECTS}
    return {'delays': delays, 'finished': finished,
            'seen': seen - slot_time, 'slot': slot}


def _figures(values):
    if not values:
        return 'none started'
    middle = values[len(values) // 2]
    return 'first %.2f s, median %.2f s, last %.2f s (%d started)' % (
        values[0], middle, values[-1], len(values))


def run_fairness(bench):
    args = bench.args
    counts = args.fairness
    report = bench.report
    results = []
    for label, options in (('without', []), ('with', args.fair_option)):
        reporting.progress('fairness: %s limits (%s)', label,
                           ' '.join(options) or 'worker options as given')
        result = run_once(bench, counts, options, 'fair_%s' % label)
        reporting.progress('fairness: %s limits: B\'s start delay %s',
                           label, _figures(result['delays'][PROJECTS[1]]))
        results.append((label, options, result))
    report.section('Fairness: project A %d executions, project B %d, one '
                   'slot, %d worker(s)'
                   % (counts[0], counts[1], args.workers))
    report.item('backend', 'fake, fake_build_seconds = %g'
                % args.fake_build_seconds)
    report.item('cast order', args.fair_cast_order
                + (' (batches of %d)' % args.fair_batch
                   if args.fair_cast_order == 'interleaved' else ''))
    report.item('worker options', ', '.join(args.worker_option) or
                'defaults')
    for label, options, result in results:
        name = '%s limits%s' % (label, (' (%s)' % ', '.join(options))
                                if options else '')
        report.item(name + ': B\'s start delay',
                    _figures(result['delays'][PROJECTS[1]])
                    + ('' if result['finished'] else ' TIMEOUT'))
        report.item(name + ': A started by then',
                    '%d of %d' % (len(result['delays'][PROJECTS[0]]),
                                  counts[0]))
