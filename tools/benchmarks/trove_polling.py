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
"""Many concurrent backups of one project against the real Trove API.

Run inside the Trove environment (Trove 26.0.0 in fake mode, with its
default rate limits: 200 GETs and 200 POSTs a minute per project)::

    python -m tools.trove.environment --venv .tox/trove/trove -- \\
        python -m tools.benchmarks.trove_polling --backups 1000

It creates ``--backups`` instances in one project through Trove's API,
one policy and one execution for each in a MariaDB database of its own,
has one worker (this process: an ExecutionRunner on ``[worker]
pool_size`` threads and the BackupPoller) start and watch all the
backups, and prints how long that took, how many requests went to Trove
(by method and path) and how many executions did not succeed.  Nothing
may fail: Trove's 413 rate limiting is waited out.
"""

import argparse
import collections
import concurrent.futures
import datetime
import os
import signal
import sys
import threading
import time
import uuid

from oslo_config import cfg
from oslo_utils import timeutils
import sqlalchemy as sa
from tools.benchmarks import database

from dbaas_scheduler.backends.trove import client as trove_client
from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.testing import trove_api
from dbaas_scheduler.worker import service as worker_service


def _retrying(call, *args):
    """A fixture request, waiting out Trove's rate limiting."""
    while True:
        try:
            return call(*args)
        except trove_api.TroveError as exc:
            if exc.status != 413:
                raise
            time.sleep(float(exc.headers.get('Retry-After') or 1))


def create_instances(trove, count):
    """``count`` instances of the project, built; their ids.

    Whether they are built is read from Trove's database: asking its API
    would spend the project's GET budget the benchmark is about.
    """
    started = time.monotonic()
    ids = [_retrying(trove.start_instance, 'bench%d' % n)
           for n in range(count)]
    engine = sa.create_engine(os.environ[trove_api.DB_ENV])
    ready = sa.text(
        'SELECT COUNT(*) FROM instances i JOIN service_statuses s '
        'ON s.instance_id = i.id WHERE i.deleted = 0 AND i.task_id = 1 '
        'AND s.status_id = :healthy AND i.tenant_id = :project')
    values = {'healthy': trove_api.SERVICE_STATUS['HEALTHY'],
              'project': trove.project_id}
    with engine.connect() as connection:
        while connection.execute(ready, values).scalar() < count:
            connection.rollback()
            time.sleep(2)
    engine.dispose()
    print('%d instances ACTIVE after %.0f s' % (count,
                                                time.monotonic() - started))
    return ids


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--backups', type=int, default=1000)
    parser.add_argument('--timeout', type=int, default=3600)
    args = parser.parse_args()

    base_url = os.environ[trove_api.URL_ENV]
    trove = trove_api.RealTrove(base_url)
    trove.project_id = uuid.uuid4().hex

    bench_db = database.Database('mysql', name='bench_trove_polling')
    bench_db.create()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return run(args, trove, bench_db)
    finally:
        bench_db.drop()


def run(args, trove, bench_db):
    conf = cfg.ConfigOpts()
    dbaas_conf.register_opts(conf)
    conf([], project='dbaas-scheduler', default_config_files=[])
    trove_api.register_admin_token(conf)
    conf.set_override('auth_type', 'admin_token', 'service_credentials')
    conf.set_override('token', trove.project_id, 'service_credentials')
    conf.set_override('endpoint_override', trove.endpoint_override, 'trove')
    conf.set_override('connection', bench_db.url_string, 'database')
    conf.set_override('poll_interval', 5, 'worker')
    db_api.configure(conf)
    migration.upgrade('head', engine=db_api.get_engine())

    instances = create_instances(trove, args.backups)
    context = dbaas_context.get_admin_context()
    ids = []
    for instance_id in instances:
        policy = db_api.create_policy(context, dict(
            name='bench-%s' % instance_id, project_id=trove.project_id,
            instance_id=instance_id, schedule_type='cron',
            schedule='30 2 * * *', timezone='UTC',
            next_execution_time=timeutils.utcnow(True)
            + datetime.timedelta(days=1)))
        ids.append(db_api.create_execution(context, dict(
            policy_id=policy.id, project_id=trove.project_id,
            instance_id=instance_id, scheduled_at=timeutils.utcnow(True),
            status='DISPATCHED')).id)

    sent = collections.Counter()
    lock = threading.Lock()
    send = trove_client.TroveClient._send

    def counted(client, policy, method, path, *rest, **kwargs):
        response = send(client, policy, method, path, *rest, **kwargs)
        kind = path.split('/')[0] + ('/<id>' if '/' in path else '')
        with lock:
            sent[(method, kind, response.status_code)] += 1
        return response

    trove_client.TroveClient._send = counted
    parts = worker_service.build_parts(conf, 'bench-worker')
    runner, watcher = parts.runner, parts.poller
    started = time.monotonic()
    # As the engine casts them: a message per execution, on the pool.
    with concurrent.futures.ThreadPoolExecutor(
            conf.worker.pool_size) as pool:
        list(pool.map(lambda i: runner.run(context, [i]), ids))
    all_started = time.monotonic() - started
    passes = 0
    while watcher.run_pass(context):
        passes += 1
        if time.monotonic() - started > args.timeout:
            break
        time.sleep(conf.worker.poll_interval)
    elapsed = time.monotonic() - started
    parts.close()
    statuses = collections.Counter(
        db_api.get_execution(context, i).status for i in ids)
    print('%d backups of one project: all started after %.0f s, all '
          'finished after %.0f s, %d poll passes' % (
              len(ids), all_started, elapsed, passes))
    print('executions: %s' % dict(statuses))
    for (method, kind, status), count in sorted(sent.items()):
        print('  %-6s %-14s -> %d: %d' % (method, kind, status, count))
    failed = [db_api.get_execution(context, i) for i in ids
              if db_api.get_execution(context, i).status != 'SUCCEEDED']
    for execution in failed[:5]:
        print('not succeeded: %s %s %s' % (execution.id, execution.status,
                                           execution.fault))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
