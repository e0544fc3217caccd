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
"""Time the pages of GET /v1/backup-policies for a project of many policies.

Seeds ``--policies`` policies in one project (10,000) and ``--others`` in
a hundred other projects (90,000), serves the API in this process
(cheroot, noauth) and, for each of ``--limits``, walks every page of the
big project as the client and the dashboard do (``limit``, then the last
id as ``marker``) ``--rounds`` times.  Prints each page's response time
(median, 95th percentile, max) and the time of a whole walk, and each SQL
statement's time (median, max).

    python -m tools.benchmarks.policy_list --database postgresql
    python -m tools.benchmarks.policy_list --database mysql --keep
    python -m tools.benchmarks.policy_list --database mysql --reuse
"""

import datetime
import json
import os
import statistics
import sys
import time
import urllib.parse
import urllib.request
import uuid

from tools.benchmarks import common
from tools.benchmarks import database
from tools.benchmarks import metrics
from tools.benchmarks import reporting

from dbaas_scheduler.testing import ports

PROJECT = 'project-big'
COLUMNS = (
    'id', 'name', 'project_id', 'instance_id', 'backend', 'schedule_type',
    'schedule', 'timezone', 'enabled', 'overlap_policy', 'created_at',
    'next_execution_time', 'consecutive_failures', 'protection',
    'last_success_at')


def seed(db, count, others, now):
    """``count`` policies in PROJECT, ``others`` in other projects."""
    rows = []
    for number in range(count + others):
        project = (PROJECT if number < count
                   else 'project-%d' % (number % 100))
        # Creation times a second apart, interleaved across projects;
        # every tenth shares its second with the one before (the id
        # breaks the tie).
        created = now - datetime.timedelta(
            seconds=count + others - number + (number % 10 == 0))
        minute = number % 60
        rows.append((str(uuid.uuid4()), 'bench-%d' % number, project,
                     'instance-%d' % number, 'trove', 'cron',
                     '%d %d * * *' % (minute, number % 24), 'UTC', True,
                     'skip', metrics.text(created),
                     metrics.text(now + datetime.timedelta(
                         minutes=number % 1440)),
                     0, 'ok', metrics.text(now - datetime.timedelta(
                         hours=number % 24))))
    db.copy('backup_policy', COLUMNS, rows)


def get(port, limit, marker):
    query = {'limit': limit}
    if marker:
        query['marker'] = marker
    request = urllib.request.Request(
        'http://127.0.0.1:%d/v1/backup-policies?%s'
        % (port, urllib.parse.urlencode(query)),
        headers={'X-Project-Id': PROJECT, 'X-User-Id': 'bench',
                 'X-Roles': 'member,reader'})
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=300) as response:
        body = json.loads(response.read())
    return time.monotonic() - started, body['backup_policies']


def walk(port, limit):
    """Every page of PROJECT; (seconds of each page, policies)."""
    times, seen, marker = [], 0, None
    while True:
        took, page = get(port, limit, marker)
        times.append(took)
        seen += len(page)
        if len(page) < limit:
            return times, seen
        marker = page[-1]['id']


def main():
    parser = common.parser(__doc__, 'tools.benchmarks.policy_list')
    parser.add_argument('--database', choices=('postgresql', 'mysql'),
                        default='postgresql')
    parser.add_argument('--admin-url')
    parser.add_argument('--database-name',
                        default='dbaas_bench_policy_list')
    parser.add_argument('--policies', type=int, default=10000,
                        help='Policies in the project listed (default: '
                             '10,000).')
    parser.add_argument('--others', type=int, default=90000,
                        help='Policies in other projects (default: '
                             '90,000).')
    parser.add_argument('--limits', default='20,100,1000',
                        help='Page sizes, comma-separated (default: '
                             '20,100,1000; 1000 is [api] max_limit).')
    parser.add_argument('--rounds', type=int, default=3,
                        help='Walks of every page, per limit (default: 3).')
    parser.add_argument('--keep', action='store_true',
                        help='Keep the database afterwards.')
    parser.add_argument('--reuse', action='store_true',
                        help='List the database a --keep run left, without '
                             'seeding it again (its schema upgraded '
                             'first).')
    args = parser.parse_args()

    with common.benchmark_database(args, 'dbaas-bench-policy-list-') as (
            db, _):
        if not args.reuse:
            reporting.progress('Seeding %d + %d policies', args.policies,
                               args.others)
            seed(db, args.policies, args.others, datetime.datetime.now(
                datetime.timezone.utc).replace(tzinfo=None))
            db.vacuum('backup_policy')
        port = ports.free_port()
        statements = metrics.StatementTimes()
        server = metrics.serve(db.url_string, port)
        results = []
        try:
            walk(port, 1000)  # warm: connections, plans, caches
            statements.enabled = True
            for limit in [int(value) for value in args.limits.split(',')]:
                pages, walks, seen = [], [], 0
                for _ in range(args.rounds):
                    times, seen = walk(port, limit)
                    pages.extend(times)
                    walks.append(sum(times))
                results.append((limit, sorted(pages), walks, seen))
        finally:
            server.stop()
        print('Policy list pages, %s' % sorted(database.SERVER_VERSIONS))
        print('  %d policies in the project listed, %d in others'
              % (seen, db.scalar('SELECT count(*) FROM backup_policy')
                 - seen))
        for limit, pages, walks, seen in results:
            print('  limit %5d: %4d pages: median %.3f s, p95 %.3f s, '
                  'max %.3f s; a walk of all pages: median %.2f s'
                  % (limit, len(pages), statistics.median(pages),
                     reporting.percentile(pages, 0.95), pages[-1],
                     statistics.median(walks)))
        print('  per statement (median, max, statement):')
        print('\n'.join(statements.report()))
        print('  load average at the end: %.2f %.2f %.2f' % os.getloadavg())
    return 0


if __name__ == '__main__':
    sys.exit(main())
