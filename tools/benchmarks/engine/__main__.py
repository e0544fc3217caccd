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

    python -m tools.benchmarks.engine --database postgresql \\
        --policies 100000 --engines 1 --baseline
    python -m tools.benchmarks.engine --database postgresql \\
        --policies 100000 --engines 3 --kill 4

Steady state: 'H H * * *' policies, one engine for M minutes::

    python -m tools.benchmarks.engine --database postgresql --steady \\
        --compare-rss 10000,1000000 --minutes 3 --reuse

The benchmark creates a database of its own (dropped at the end unless
``--keep`` or ``--reuse``), RabbitMQ topics unique to the run (their queues
are deleted at the end), and a work directory with the engines' configs and
logs.  ``doc/source/contributor/benchmarks.rst`` explains every figure.
"""

import datetime
import os
import random
import sys
import time

from oslo_utils import timeutils
from tools.benchmarks import common
from tools.benchmarks import database
from tools.benchmarks.engine import bench as engine_bench
from tools.benchmarks.engine import burst
from tools.benchmarks.engine import mistral_baseline
from tools.benchmarks.engine import seeding
from tools.benchmarks.engine import steady
from tools.benchmarks import reporting

LIBRARIES = ('oslo.messaging', 'oslo.db', 'SQLAlchemy', 'psycopg2-binary',
             'PyMySQL', 'kombu')


def parse_args(argv):
    parser = common.parser(__doc__, __package__)
    common.add_server_options(
        parser, 'dbaas_bench', 'Name of the database to create (steady '
        'state appends _steady_<policies>).')
    parser.add_argument('--database-url',
                        help='Use this database instead of creating one; '
                             'its dbaas-scheduler tables are emptied.')
    parser.add_argument('--policies', type=int, default=100000)
    parser.add_argument('--engines', type=int, default=1,
                        help='Engine processes in a burst (default 1).')
    parser.add_argument('--engine-nodes', default='', metavar='HOST:PORT,...',
                        help='Connect engine i to node i modulo the list '
                             '(the same database on each node): the '
                             'multi-writer case of a Galera cluster (see '
                             'python -m tools.clusters).  Default: every '
                             'engine on the database URL.')
    parser.add_argument('--kill', type=int, default=0, metavar='N',
                        help='SIGKILL a random engine N times during the '
                             'burst and restart it.')
    parser.add_argument('--runs', type=int, default=1, metavar='N',
                        help='Repeat the burst N times in a row on the same '
                             'database (each run re-arms every policy and '
                             'starts the engines anew), and sum them up.')
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
    parser.add_argument('--seed', type=int, help='Random seed for --kill.')
    common.add_run_options(parser, 'Keep the database at the end.')
    args = parser.parse_args(argv)
    if args.engines < 1:
        parser.error('--engines must be at least 1')
    if args.runs < 1:
        parser.error('--runs must be at least 1')
    if args.reuse:
        args.keep = True
    return args


def run_burst(bench):
    args = bench.args
    db = database.Database(args.database, name=args.database_name,
                           url=args.database_url, admin_url=args.admin_url)
    bench.use_database(db)
    reporting.progress('seeding %d policies into %s', args.policies, db.name)
    db.create()
    bench.upgrade_schema()
    started = time.time()
    # Not due (tomorrow) until reset_burst() arms them all at one instant.
    seeding.seed_burst(db, args.policies,
                       timeutils.utcnow() + datetime.timedelta(days=1))
    db.vacuum('backup_policy')
    reporting.progress('seeded in %.1f s', time.time() - started)
    bench.start_consumer()
    results = [burst.run_engine_burst(bench, run)
               for run in range(1, args.runs + 1)]
    if args.runs > 1:
        burst.report_runs(bench.report, results)
    ours = sorted(result.rate for result in results)[len(results) // 2]
    if args.baseline:
        baseline = mistral_baseline.run_baseline(bench)
        bench.report.item(
            'engine rate / baseline rate',
            '%.1fx  (%.0f /s vs %.0f /s; engine rate from its first tick%s)'
            % (ours / baseline, ours, baseline,
               ', median of the runs' if args.runs > 1 else ''))


def run_steady(bench):
    args = bench.args
    sizes = ([int(size) for size in args.compare_rss.split(',')]
             if args.compare_rss else [args.policies])
    results = []
    for size in sizes:
        results.append(steady.run_steady(bench, size))
        if not args.keep:
            bench.db.drop()
    if len(results) > 1:
        steady.report_rss(bench.report, results)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    bench = engine_bench.Bench(args, random.Random(args.seed))
    return bench.run('dbaas-scheduler engine benchmark',
                     run_steady if args.steady or args.compare_rss
                     else run_burst, LIBRARIES)


if __name__ == '__main__':
    sys.exit(main())
