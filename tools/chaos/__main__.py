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
"""Chaos run: is every due backup retained exactly once, whatever happens?

Real engines and workers on a private RabbitMQ node and a private database
server (both started by the tool in its work directory, on ports of their
own, and really restarted during the run), against a Trove-compatible fake
served by this process.  Policies are due every minute; while they run,
the tool SIGKILLs and SIGSTOPs engines and workers at random, makes
backend creates slow or land late, and restarts the broker and the
database.  Then it stops the load, waits for everything to finish and be
reconciled, and counts per slot: executions, backend creates, backups
retained.  Exit status 0 if the guarantee held::

    python -m tools.chaos --database mysql --policies 2000 --minutes 8
    python -m tools.chaos --database postgresql --policies 2000 \\
        --minutes 8 --timing default --faults all \\
        --slow-create-share 1 --slow-create-seconds 450

doc/source/contributor/chaos.rst explains the faults and every figure.
"""

import argparse
import sys

from tools.benchmarks import common
from tools.chaos import clustered
from tools.chaos import faults
from tools.chaos import run

LIBRARIES = ('oslo.messaging', 'oslo.db', 'SQLAlchemy', 'psycopg2-binary',
             'PyMySQL', 'kombu', 'keystoneauth1')


def _faults(text):
    if text == 'all':
        return set(faults.KINDS)
    if text == 'none':
        return set()
    chosen = {kind for kind in text.split(',') if kind}
    unknown = chosen - set(faults.KINDS)
    if unknown:
        raise ValueError('unknown faults: %s' % ', '.join(sorted(unknown)))
    return chosen


def _option(args, group, name, default):
    """The value of an option the services get (timing, then --option)."""
    value = run.TIMING[args.timing].get(group, {}).get(name, default)
    for option in args.option:
        key, _, given = option.partition('=')
        option_group, _, option_name = key.rpartition('.')
        if ((option_group or 'worker'), option_name) == (group, name):
            value = given
    return float(value)


def parse_args(argv):
    parser = common.parser(__doc__, __package__)
    parser.epilog = 'See doc/source/contributor/chaos.rst.'
    parser.add_argument('--database', choices=('postgresql', 'mysql'),
                        default='postgresql',
                        help='Database server (default: postgresql; mysql '
                             'means MariaDB).')
    parser.add_argument('--admin-url',
                        help='Use this database server instead of a '
                             'private one (then it is not restarted).')
    parser.add_argument('--transport-url',
                        help='Use this RabbitMQ instead of a private node '
                             '(then it is not restarted).')
    parser.add_argument('--cluster', choices=clustered.MODES,
                        help='Run on a Galera cluster and a RabbitMQ '
                             'cluster of 3 nodes each (quorum queues): '
                             'services on different nodes (multi-writer) '
                             'or behind one writer address that moves '
                             '(single-writer); implies --database mysql.')
    parser.add_argument('--writer-move-at', type=float, default=0.5,
                        help='With --cluster single-writer: when to move '
                             'the writer, as a share of the run.')
    parser.add_argument('--policies', type=int, default=2000)
    parser.add_argument('--minutes', type=float, default=8)
    parser.add_argument('--engines', type=int, default=3)
    parser.add_argument('--workers', type=int, default=2)
    parser.add_argument('--timing', choices=sorted(run.TIMING),
                        default='short',
                        help='Timing options of the services: short (a 30 s '
                             'lease, ...; the default) or default (no '
                             'configuration).')
    parser.add_argument('--option', action='append', default=[],
                        metavar='[GROUP.]NAME=VALUE',
                        help='Any service option (repeatable; GROUP '
                             'defaults to worker).')
    parser.add_argument('--faults', type=_faults, default='all',
                        help='Comma-separated among %s, or all (default) '
                             'or none.' % ', '.join(faults.KINDS))
    parser.add_argument('--seed', type=int, default=None,
                        help='Seed of the random fault schedule.')
    parser.add_argument('--kill-every', type=float, default=45,
                        help='Mean seconds between two SIGKILLs.')
    parser.add_argument('--restart-after', type=float, default=5,
                        help='Seconds a killed process stays down.')
    parser.add_argument('--stop-every', type=float, default=60,
                        help='Mean seconds between two SIGSTOPs.')
    parser.add_argument('--stop-seconds', type=float,
                        help='Seconds a process stays stopped (default: '
                             '1.5 leases).')
    parser.add_argument('--slow-create-share', type=float, default=0.05)
    parser.add_argument('--slow-create-seconds', type=float,
                        help='Seconds a slow create waits for its answer '
                             '(default: 1.5 leases).')
    parser.add_argument('--late-create-share', type=float, default=0.01)
    parser.add_argument('--late-create-seconds', type=float,
                        help='Seconds before a late create lands (default: '
                             '3 client timeouts).')
    parser.add_argument('--broker-restart-at', type=float, default=0.35,
                        help='When to restart RabbitMQ, as a share of the '
                             'run.')
    parser.add_argument('--database-restart-at', type=float, default=0.65)
    parser.add_argument('--restart-down', type=float, default=15,
                        help='Seconds the broker or database stays down.')
    parser.add_argument('--short-window-share', type=float, default=0.2,
                        help='Share of the policies with a short start '
                             'window (--short-window-seconds), so that '
                             'slots expire while processes are killed and '
                             'stopped; the others have the default (a '
                             'minute for a schedule of every minute).')
    parser.add_argument('--short-window-seconds', type=int, default=15,
                        help='Their start window, in seconds (written to '
                             'the database directly: below the API\'s '
                             'minimum of 60, to make expiry frequent).')
    parser.add_argument('--build-seconds', type=float, default=10,
                        help='Seconds a backup takes at the fake Trove.')
    parser.add_argument('--retention-share', type=float, default=0.5,
                        help='Share of the policies with retention '
                             '(keep_last 1 under a floor min_keep 3; every '
                             'other one with a twin policy on its instance, '
                             'keep_last 2, min_keep 2).')
    parser.add_argument('--incremental-twins',
                        action=argparse.BooleanOptionalAction,
                        default=False,
                        help='The twin policies make incremental backups, '
                             'built on the instance\'s latest backup '
                             'whichever policy made it: retention and the '
                             'expiry sweep work over chains. Off by '
                             'default: a duplicate backup (the late fault) '
                             'that an incremental one is built on is kept '
                             'while its children exist, so the drain waits '
                             'for it and the run reports it retained.')
    parser.add_argument('--retention-grace', type=int, default=20,
                        help='[worker] retention_grace of the run, seconds.')
    parser.add_argument('--hold-every', type=float, default=5,
                        help='Seconds between two holds of a backup of a '
                             'retention policy (expiring ones first); 0: '
                             'no holds. A hold puts every expiring backup '
                             'of its instance back: holds much more '
                             'frequent than backups expire (0.5 s for 125 '
                             'policies) leave retention nothing to '
                             'delete.')
    parser.add_argument('--verify-every', type=int, default=None,
                        metavar='N',
                        help='Scheduled verification on the policies: '
                             'every Nth successful backup is restored into '
                             'a scratch target and checked (verify_every). '
                             'Off by default.')
    parser.add_argument('--verify-share', type=float, default=1.0,
                        help='With --verify-every: the share of the '
                             'policies (and their twins) that verify.')
    parser.add_argument('--drain-timeout', type=float,
                        help='Longest wait, after the load, for every '
                             'execution to end and every extra backup to be '
                             'deleted (default: from the timing).')
    common.add_run_options(parser, 'Keep the database at the end.')
    args = parser.parse_args(argv)
    if args.cluster:
        args.database = 'mysql'
        if args.admin_url:
            parser.error('--cluster starts its own database cluster')
    if args.verify_every:
        # The service's default of one verification at a time per project
        # serializes a run whose policies are all in one project: a Trove
        # verification takes ~16 s (a scratch instance made and deleted),
        # so the drain would end with verifications still pending.  Given
        # first, so that an --option of the user's wins.
        args.option[:0] = ['verify.max_concurrent=4',
                           'verify.max_concurrent_per_project=4']
    lease = _option(args, 'worker', 'lease_duration', 300)
    timeout = _option(args, 'service_credentials', 'timeout', 60)
    interval = _option(args, 'worker', 'reconcile_interval', 300)
    if args.stop_seconds is None:
        args.stop_seconds = 1.5 * lease
    if args.slow_create_seconds is None:
        args.slow_create_seconds = 1.5 * lease
    if args.late_create_seconds is None:
        args.late_create_seconds = 3 * timeout
    if args.drain_timeout is None:
        args.drain_timeout = (3 * interval + 2 * lease
                              + args.slow_create_seconds + 300)
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    chaos = run.ChaosRun(args)
    outcome = {}

    def measure(bench):
        outcome['holds'] = chaos.measure(bench)
    chaos.run('dbaas-scheduler chaos run', measure, LIBRARIES)
    return 0 if outcome.get('holds') else 1


if __name__ == '__main__':
    sys.exit(main())
