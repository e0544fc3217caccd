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
"""Benchmark real dbaas-scheduler-worker processes on a real database.

In-flight monitoring: one worker watching N backups that take an hour at
a fake Trove served by this process, measured for M seconds at each N::

    python -m tools.benchmarks.worker --database postgresql \\
        --in-flight 1000,5000 --seconds 120

Consume + claim throughput: W workers, N executions on the fake backend
cast K to a message::

    python -m tools.benchmarks.worker --database postgresql \\
        --claims 20000 --workers 2 --per-message 20
    python -m tools.benchmarks.worker --database mysql \\
        --claims 5000 --workers 2 --per-message 1

Fairness: project A's N executions and project B's M of one slot, B's
cast last; B's start delay without and with the limits::

    python -m tools.benchmarks.worker --database postgresql \\
        --fairness 10000,10 --fake-build-seconds 60 \\
        --fair-option max_running_per_project=100

The benchmark creates a database of its own (dropped at the end unless
``--keep``), RabbitMQ topics unique to the run (their queues are deleted at
the end), and a work directory with the workers' configs and logs.
``doc/source/contributor/benchmarks.rst`` explains every figure.
"""

import sys

from tools.benchmarks import common
from tools.benchmarks.worker import bench as worker_bench
from tools.benchmarks.worker import claims
from tools.benchmarks.worker import fairness
from tools.benchmarks.worker import inflight

LIBRARIES = ('oslo.messaging', 'oslo.service', 'oslo.db', 'SQLAlchemy',
             'psycopg2-binary', 'PyMySQL', 'kombu', 'keystoneauth1',
             'futurist')


def sizes(text):
    return [int(size) for size in text.split(',') if size]


def parse_args(argv):
    parser = common.parser(__doc__, __package__)
    common.add_server_options(
        parser, 'dbaas_bench_worker', 'Prefix of the databases created (a '
        'suffix names the run).')
    parser.add_argument('--in-flight', type=sizes, metavar='N[,N...]',
                        help='In-flight monitoring, once at each number of '
                             'running backups (e.g. 1000,5000).')
    parser.add_argument('--seconds', type=float, default=120,
                        help='In-flight: length of the measurement window '
                             '(default 120).')
    parser.add_argument('--new-seconds', type=float, default=0.0,
                        help='In-flight: seconds a fake Trove backup stays '
                             'NEW (default 0).')
    parser.add_argument('--build-seconds', type=float, default=3600.0,
                        help='In-flight: seconds it then stays BUILDING; '
                             'must outlast the start and the window '
                             '(default 3600).')
    parser.add_argument('--claims', type=int, metavar='N',
                        help='Consume + claim throughput of N executions.')
    parser.add_argument('--workers', type=int, default=2,
                        help='Claims: worker processes (default 2).')
    parser.add_argument('--fake-build-seconds', type=float, default=0.0,
                        help='Claims: the fake backend\'s backup duration '
                             '(default 0).')
    parser.add_argument('--outcomes', action='store_true',
                        help='Claims: once all started, also wait for '
                             'the workers\' poll passes to record every '
                             'outcome (SUCCEEDED, with retention and the '
                             'protection state) and report their cost.')
    parser.add_argument('--per-message', type=int, default=20,
                        help='Executions per cast (default 20, as the '
                             'engine\'s executions_per_message; 1 uses '
                             'backup_database_instance).')
    parser.add_argument('--fairness', type=sizes, metavar='N,M',
                        help='Fairness: project A\'s N and project B\'s M '
                             'executions of one slot, B\'s cast last; B\'s '
                             'start delay without and with --fair-option.')
    parser.add_argument('--fair-option', action='append', default=[],
                        metavar='[GROUP.]NAME=VALUE',
                        help='Fairness: worker (and engine) options of the '
                             'run with limits (repeatable).')
    parser.add_argument('--fair-cast-order', default='a-first',
                        choices=fairness.CAST_ORDERS,
                        help='Fairness: the order of the burst\'s casts: '
                             'a-first (A\'s, then B\'s: the worst case, '
                             'the default), shuffled (the order of policies '
                             'due at one time that the tick\'s claim '
                             'returns: no order among them), interleaved '
                             '(shuffled, then round-robin by project within '
                             'each --fair-batch of it: what a tick that '
                             'interleaves its casts would do).')
    parser.add_argument('--fair-batch', type=int, default=1000,
                        help='Fairness: the tick\'s batch for '
                             '--fair-cast-order interleaved ([engine] '
                             'batch_size, default 1000).')
    parser.add_argument('--fair-sweep-interval', type=float, default=1.0,
                        help='Fairness: the engine\'s [engine] '
                             'sweep_interval, which offers queued '
                             'executions again (default 1).')
    parser.add_argument('--worker-option', action='append', default=[],
                        metavar='[GROUP.]NAME=VALUE',
                        help='Any worker option (repeatable; GROUP '
                             'defaults to worker).')
    parser.add_argument('--sample-interval', type=float, default=1.0,
                        help='Seconds between samples of the workers\' CPU, '
                             'threads and RSS (default 1).')
    parser.add_argument('--timeout', type=float, default=600,
                        help='Longest wait for the backups to start or the '
                             'executions to be claimed (default 600).')
    parser.add_argument('--py-spy', metavar='PATH',
                        help='Profile each worker child with this py-spy '
                             'binary during the measurement (it costs some '
                             'CPU: compare the figures with a run without).')
    parser.add_argument('--profile-top', type=int, default=12,
                        help='Functions listed from each profile '
                             '(default 12).')
    common.add_run_options(parser, 'Keep the databases at the end.')
    args = parser.parse_args(argv)
    if not args.in_flight and not args.claims and not args.fairness:
        parser.error('give --in-flight N[,N...], --claims N and/or '
                     '--fairness N,M')
    if args.fairness and len(args.fairness) != 2:
        parser.error('--fairness takes two numbers, N,M')
    if args.per_message < 1 or args.workers < 1:
        parser.error('--per-message and --workers must be at least 1')
    return args


def measure(bench):
    if bench.args.in_flight:
        results = [inflight.run_in_flight(bench, count)
                   for count in bench.args.in_flight]
        if len(results) > 1:
            inflight.report_in_flight(bench.report, results)
    if bench.args.claims:
        claims.run_claims(bench)
    if bench.args.fairness:
        fairness.run_fairness(bench)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return worker_bench.Bench(args).run('dbaas-scheduler worker benchmark',
                                        measure, LIBRARIES)


if __name__ == '__main__':
    sys.exit(main())
