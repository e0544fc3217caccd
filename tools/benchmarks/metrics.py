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
"""Time a scrape of the metrics endpoint on a large real database.

Seeds ``--policies`` policies (one in ``--due-every`` due and unclaimed,
the rest due later) and ``--days`` days of daily history for each (one
execution per policy and day: mostly SUCCEEDED, 2% FAILED (the newest
run of 2% of the policies, whose streak of failures is then ranked),
missed and coalesced; the newest day partly RUNNING), then serves the API with
``[metrics] enabled`` in this process (cheroot, noauth, ``cache_time``
0 so that every scrape reads the database) and scrapes it ``--scrapes``
times over HTTP.  Prints the response times (median, 95th percentile,
max) and what the endpoint itself reports as its query time.

    python -m tools.benchmarks.metrics --database postgresql
    python -m tools.benchmarks.metrics --database mysql
"""

import collections
import datetime
import os
import statistics
import sys
import threading
import time
import urllib.request
import uuid

from cheroot import wsgi as cheroot_wsgi
from oslo_config import cfg
from prometheus_client import parser as prom_parser
import sqlalchemy as sa
from tools.benchmarks import common
from tools.benchmarks import database

from dbaas_scheduler.api import deploy
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import policy
from dbaas_scheduler.testing import ports

EXECUTION_COLUMNS = (
    'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
    'trigger', 'status', 'status_reason', 'attempts', 'created_at',
    'dispatched_at', 'started_at', 'finished_at', 'fault')
POLICY_COLUMNS = (
    'id', 'name', 'project_id', 'instance_id', 'backend', 'schedule_type',
    'schedule', 'timezone', 'enabled', 'overlap_policy', 'created_at',
    'next_execution_time', 'last_execution_id', 'consecutive_failures',
    'protection', 'last_success_at')


def _columns(db):
    # trigger is a reserved word of MariaDB/MySQL.
    return tuple('`trigger`' if db.backend == 'mysql' and name == 'trigger'
                 else name for name in EXECUTION_COLUMNS)


def text(naive_utc):
    return naive_utc.strftime('%Y-%m-%d %H:%M:%S.%f')


def _progress(message):
    print(message, file=sys.stderr, flush=True)


def _streak(statuses):
    """The consecutive_failures of a history given newest first."""
    failures = 0
    for status in statuses:
        if status == 'SUCCEEDED':
            break
        failures += status == 'FAILED'
    return failures


def seed(db, count, days, due_every, now):
    """Policies and their daily history; returns the executions seeded."""
    second = datetime.timedelta(seconds=1)
    policies, executions = [], []
    created = text(now - datetime.timedelta(days=days + 1))
    seeded = 0
    for number in range(count):
        policy_id = str(uuid.uuid4())
        # A daily slot, spread over the day by the policy's number.
        offset = datetime.timedelta(seconds=(number * 86400) // count)
        today = now.replace(hour=0, minute=0, second=0, microsecond=0)
        slot = today + offset
        if slot > now:
            slot -= datetime.timedelta(days=1)
        due = (now - (number % 600) * second if number % due_every == 0
               else slot + datetime.timedelta(days=1))
        # The newest execution is the policy's last one.
        ids = [str(uuid.uuid4()) for _ in range(days)]
        statuses, last_success = [], None
        for day in range(days):
            scheduled = slot - datetime.timedelta(days=day)
            kind = (number + day) % 50
            dispatched = scheduled + (number % 7) * second
            started = dispatched + (1 + number % 30) * second
            finished = started + 600 * second
            status, reason, fault = 'SUCCEEDED', None, None
            if kind == 0:
                status, fault = 'FAILED', (
                    'the trove backend reports backup x ERROR')
            elif kind == 1:
                status, reason = 'SKIPPED', 'missed'
                dispatched = started = None
                finished = scheduled + 3600 * second
            elif kind == 2:
                reason = 'coalesced 2 missed runs since %s' % (
                    scheduled.isoformat())
            if finished > now:
                status, finished = 'RUNNING', None
            statuses.append(status)
            if status == 'SUCCEEDED' and last_success is None:
                last_success = started
            executions.append((
                ids[day], policy_id, 'project-%d' % (number % 100),
                'instance-%d' % number, text(scheduled), 'schedule',
                status, reason, 1, text(scheduled),
                text(dispatched) if dispatched else None,
                text(started) if started else None,
                text(finished) if finished else None, fault))
        policies.append((policy_id, 'bench-%d' % number,
                         'project-%d' % (number % 100),
                         'instance-%d' % number, 'trove', 'cron',
                         '%d %d * * *' % (offset.seconds // 60 % 60,
                                          offset.seconds // 3600),
                         'UTC', True, 'skip', created, text(due),
                         ids[0] if ids else None, _streak(statuses),
                         'at_risk' if _streak(statuses) else 'ok',
                         text(last_success) if last_success else None))
        if len(executions) >= 100000:
            db.copy('backup_execution', _columns(db), executions)
            seeded += len(executions)
            executions = []
            _progress('  %d executions' % seeded)
    db.copy('backup_policy', POLICY_COLUMNS, policies)
    db.copy('backup_execution', _columns(db), executions)
    return seeded + len(executions)


class StatementTimes:
    """Seconds of each SQL statement run in this process, while enabled.

    Timed from the cursor's execute to its return (both drivers read the
    whole result there), keyed by the statement's text.
    """

    def __init__(self):
        self.times = collections.defaultdict(list)
        self.enabled = False
        sa.event.listen(sa.engine.Engine, 'before_cursor_execute',
                        self._before)
        sa.event.listen(sa.engine.Engine, 'after_cursor_execute',
                        self._after)

    def _before(self, connection, cursor, statement, *args):
        connection.info.setdefault('bench_started', []).append(
            time.monotonic())

    def _after(self, connection, cursor, statement, *args):
        took = time.monotonic() - connection.info['bench_started'].pop()
        if self.enabled:
            self.times[' '.join(statement.split())].append(took)

    def report(self, width=100):
        """One line per statement, slowest first: median and max."""
        lines = []
        for text, times in sorted(self.times.items(),
                                  key=lambda item: -statistics.median(
                                      item[1])):
            times.sort()
            lines.append('    %.3f s  %.3f s  %s' % (
                statistics.median(times), times[-1],
                text if len(text) <= width else text[:width - 3] + '...'))
        return lines


def serve(url, port, options=()):
    conf = cfg.ConfigOpts()
    dbaas_conf.register_opts(conf)
    conf([], project='dbaas-scheduler', default_config_files=[])
    conf.set_override('connection', url, group='database')
    conf.set_override('auth_strategy', 'noauth')
    conf.set_override('rpc_transport', 'none')
    conf.set_override('enabled', True, group='metrics')
    conf.set_override('cache_time', 0, group='metrics')
    for option in options:
        name, _, value = option.partition('=')
        group, _, name = name.rpartition('.')
        conf.set_override(name, value, group=group or 'metrics')
    db_api.configure(conf)
    policy.get_enforcer(conf)
    server = cheroot_wsgi.Server(('127.0.0.1', port), deploy.deploy(conf),
                                 numthreads=2)
    server.prepare()
    threading.Thread(target=server.serve, daemon=True).start()
    return server


def scrape(port):
    started = time.monotonic()
    with urllib.request.urlopen('http://127.0.0.1:%d/metrics' % port,
                                timeout=300) as response:
        text = response.read().decode()
    took = time.monotonic() - started
    values = {sample.name: sample.value
              for family in prom_parser.text_string_to_metric_families(text)
              for sample in family.samples if not sample.labels}
    return took, values


def main():
    parser = common.parser(__doc__, 'tools.benchmarks.metrics')
    parser.add_argument('--database', choices=('postgresql', 'mysql'),
                        default='postgresql')
    parser.add_argument('--admin-url')
    parser.add_argument('--database-name', default='dbaas_bench_metrics')
    parser.add_argument('--policies', type=int, default=100000)
    parser.add_argument('--days', type=int, default=10,
                        help='Days of daily history per policy (default: '
                             '10, a million executions for 100,000 '
                             'policies).')
    parser.add_argument('--due-every', type=int, default=100,
                        help='One policy in this many is due and '
                             'unclaimed (default: 100).')
    parser.add_argument('--scrapes', type=int, default=20)
    parser.add_argument('--keep', action='store_true',
                        help='Keep the database afterwards.')
    parser.add_argument('--set', action='append', default=[],
                        metavar='[GROUP.]NAME=VALUE',
                        help='An option of the API (group metrics unless '
                             'named), e.g. failure_streaks= (repeatable).')
    parser.add_argument('--reuse', action='store_true',
                        help='Scrape the database a --keep run left, '
                             'without seeding it again (its schema '
                             'upgraded first).')
    args = parser.parse_args()

    with common.benchmark_database(args, 'dbaas-bench-metrics-') as (db, _):
        if args.reuse:
            executions = db.scalar('SELECT count(*) FROM backup_execution')
            args.policies = db.scalar('SELECT count(*) FROM backup_policy')
        else:
            now = datetime.datetime.now(datetime.timezone.utc).replace(
                tzinfo=None)
            _progress('Seeding %d policies, %d days of history'
                      % (args.policies, args.days))
            started = time.monotonic()
            executions = seed(db, args.policies, args.days,
                              args.due_every, now)
            db.vacuum('backup_policy', 'backup_execution')
            _progress('Seeded %d executions in %.0f s'
                      % (executions, time.monotonic() - started))
        port = ports.free_port()
        statements = StatementTimes()
        server = serve(db.url_string, port, args.set)
        try:
            scrape(port)  # warm: connections, plans, caches
            times, queries = [], []
            statements.enabled = True
            for _ in range(args.scrapes):
                took, values = scrape(port)
                times.append(took)
                queries.append(values['dbaas_scheduler_metrics_query_seconds'])
            assert values['dbaas_scheduler_database_up'] == 1
        finally:
            server.stop()
        times.sort()
        queries.sort()
        print('Metrics scrape, %s' % sorted(database.SERVER_VERSIONS))
        print('  %d policies (%d due), %d executions, window 3600 s'
              % (args.policies, values['dbaas_scheduler_backlog_policies'],
                 executions))
        print('  %d scrapes over HTTP: median %.3f s, p95 %.3f s, max %.3f s'
              % (len(times), statistics.median(times),
                 times[int(len(times) * 0.95) - 1] if len(times) > 1
                 else times[0], times[-1]))
        print('  database queries per scrape: median %.3f s, max %.3f s'
              % (statistics.median(queries), queries[-1]))
        print('  per statement (median, max, statement):')
        print('\n'.join(statements.report()))
        print('  load average at the end: %.2f %.2f %.2f' % os.getloadavg())
    return 0


if __name__ == '__main__':
    sys.exit(main())
