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
"""The coverage report for 100,000 instances: how long it takes to answer.

Seeds one project with N policies (one per instance, in mixed states)
on PostgreSQL or MariaDB, has the fake backend list those instances and
5% more that no policy names, and times GET /v1/coverage through the
real WSGI application (noauth), several times::

    python -m tools.benchmarks.coverage --database postgresql
    python -m tools.benchmarks.coverage --database mysql --instances 100000

It prints the wall time of each request and the API process's CPU time
for it (the figure to read on a loaded machine), the wall time of the
aggregate query alone (read typed, and read as the report reads it:
through the driver, times as text), and the states counted.  The
budget (issue 29) is 2 s for 100,000 instances.  The fake backend's
listing costs nothing: listing Trove's instances is Trove's own time
(one request per page of instances), on top of this.
"""

import datetime
import json
import random
import time
import uuid

from oslo_config import cfg
from oslo_utils import timeutils
from tools.benchmarks import common
from tools.benchmarks import database
from tools.benchmarks import reporting
import webob

from dbaas_scheduler.api import service as api_service
from dbaas_scheduler.backends import fake
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import coverage as db_coverage
from dbaas_scheduler.db import migration

PROJECT = 'coverage-bench'
COLUMNS = ('id', 'name', 'project_id', 'instance_id', 'backend',
           'schedule_type', 'schedule', 'timezone', 'enabled',
           'overlap_policy', 'next_execution_time', 'created_at',
           'last_success_at', 'daily_runs', 'keep_daily', 'rpo',
           'consecutive_failures')


def make_rows(count, now, seed):
    """Policy tuples in COLUMNS order: most protected, some not."""
    rng = random.Random(seed)
    rows = []
    for index in range(count):
        policy_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        draw = rng.random()
        enabled = draw >= 0.05                          # 5% paused
        success = now - datetime.timedelta(
            hours=(rng.uniform(40, 200) if draw < 0.10  # 5% stale
                   else rng.uniform(0, 24)))
        daily_runs = 1 / 7.0 if 0.10 <= draw < 0.15 else 1.0
        rows.append((
            policy_id, 'p-%d' % index, PROJECT, 'instance-%06d' % index,
            'fake', 'cron', 'H H * * *', 'UTC', enabled, 'skip',
            now + datetime.timedelta(hours=1) if enabled else None,
            now - datetime.timedelta(days=30), success, daily_runs, 7,
            None, 0))
    return rows


def _literal(value, backend):
    if isinstance(value, bool):
        return ('t' if value else 'f') if backend == 'postgresql' else int(
            value)
    if isinstance(value, datetime.datetime):
        return value.strftime('%Y-%m-%d %H:%M:%S.%f')
    return value


def main(argv=None):
    parser = common.parser(__doc__, 'tools.benchmarks.coverage')
    common.add_server_options(parser, 'coverage_bench',
                              'Database created (and dropped) for the run.')
    parser.add_argument('--instances', type=int, default=100000)
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--seed', type=int, default=29)
    parser.add_argument('--keep', action='store_true',
                        help='Leave the database in place.')
    args = parser.parse_args(argv)
    bench = database.Database(args.database, args.database_name,
                              admin_url=args.admin_url)
    bench.create()
    try:
        run(args, bench)
    finally:
        if not args.keep:
            bench.drop()


def run(args, bench):
    conf = cfg.ConfigOpts()
    dbaas_conf.register_opts(conf)
    conf([], project='dbaas-scheduler', default_config_files=[])
    conf.set_override('connection', bench.url_string, group='database')
    conf.set_override('auth_strategy', 'noauth')
    conf.set_override('rpc_transport', 'none')
    conf.set_override('enabled_backends', ['fake'], group='api')
    db_api.configure(conf)
    migration.upgrade('head')
    now = timeutils.utcnow(True)
    reporting.progress('seeding %d policies', args.instances)
    rows = make_rows(args.instances, now, args.seed)
    bench.copy('backup_policy', COLUMNS,
               [tuple(_literal(v, bench.backend) for v in row)
                for row in rows])
    bench.vacuum('backup_policy')
    listed = {row[3]: row[1] for row in rows}
    for index in range(args.instances // 20):
        listed['unlisted-%06d' % index] = None
    fake.FakeBackend.instances = {PROJECT: listed}

    app = api_service.make_application(conf)
    context = dbaas_context.get_admin_context()
    aggregate, rows, requests, cpu = [], [], [], []
    counts = None
    for _ in range(args.runs):
        started = time.perf_counter()
        db_coverage.policy_instances(context, PROJECT)
        aggregate.append(time.perf_counter() - started)
        started = time.perf_counter()
        db_coverage.policy_rows(context, PROJECT)
        rows.append(time.perf_counter() - started)
        request = webob.Request.blank('/v1/coverage', headers={
            'X-Project-Id': PROJECT, 'X-User-Id': 'bench',
            'X-Roles': 'reader', 'OpenStack-API-Version':
                'backup-scheduler latest'})
        started, started_cpu = time.perf_counter(), time.process_time()
        response = request.get_response(app)
        requests.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
        assert response.status_int == 200, response.text
        body = json.loads(response.body)['coverage']
        counts = body['counts']
        size = len(response.body)
    print('coverage report of %d instances (%d with a policy) on %s'
          % (len(listed), args.instances, ', '.join(
              sorted(database.SERVER_VERSIONS))))
    print('  GET /v1/coverage: %s (%.1f MiB of JSON)'
          % (reporting.spread(requests), size / 2 ** 20))
    print('  CPU of the API process per request: %s'
          % reporting.spread(cpu))
    print('  the aggregate query alone, typed (policy_instances): %s'
          % reporting.spread(aggregate))
    print('  the aggregate as the report reads it (policy_rows): %s'
          % reporting.spread(rows))
    print('  states: %s' % ', '.join('%s %d' % item
                                     for item in counts.items()))


if __name__ == '__main__':
    main()
