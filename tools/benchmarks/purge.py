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
"""Purge speed of the execution history on PostgreSQL or MariaDB.

Fills a database of its own with ``--executions`` finished executions
(``--per-policy`` of each policy, spread over a year: 90 % successes whose
backups retention deletes seven successes later -- but for one policy in
ten, which has no retention rule and keeps them all --, 8 % failures, 2 %
skipped slots), then runs what ``dbaas-scheduler-manage execution purge
--older-than DAYS`` runs and prints executions deleted per second and the
longest delete transaction (the longest lock a batch holds)::

    python -m tools.benchmarks.purge --database postgresql \\
        --executions 100000
    python -m tools.benchmarks.purge --database mysql --executions 1000000
"""

import datetime
import json
import sys
import time
import uuid

from oslo_config import cfg
from oslo_utils import timeutils
from tools.benchmarks import common
from tools.benchmarks import database

from dbaas_scheduler import conf as dbaas_conf
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.db import purge as db_purge

EXECUTION_COLUMNS = ('id', 'policy_id', 'project_id', 'instance_id',
                     'scheduled_at', 'trigger', 'status', 'attempts',
                     'backup_id', 'deleted_backups', 'created_at',
                     'finished_at')
POLICY_COLUMNS = ('id', 'name', 'project_id', 'instance_id', 'backend',
                  'schedule_type', 'schedule', 'timezone', 'enabled',
                  'overlap_policy', 'keep_last', 'created_at',
                  'next_execution_time', 'last_execution_id')
KEEP_LAST = 7


def parse_args(argv):
    parser = common.parser(__doc__, 'tools.benchmarks.purge')
    common.add_server_options(parser, 'dbaas_bench_purge',
                              'Name of the database to create.')
    parser.add_argument('--executions', type=int, default=100000)
    parser.add_argument('--per-policy', type=int, default=200,
                        help='Executions of each policy (default 200).')
    parser.add_argument('--older-than', type=int, default=30,
                        metavar='DAYS', help='Purge what finished more '
                                             'than DAYS ago (default 30).')
    parser.add_argument('--batch-size', type=int, default=1000)
    parser.add_argument('--keep', action='store_true',
                        help='Keep the database at the end.')
    return parser.parse_args(argv)


def _text(value):
    return value.strftime('%Y-%m-%d %H:%M:%S.%f')


def seed(db, executions, per_policy, now):
    """Fill the tables; returns how many executions were made."""
    policies = max(1, executions // per_policy)
    step = datetime.timedelta(days=365) / per_policy
    policy_rows = []
    rows = []
    columns = tuple('`trigger`' if db.backend == 'mysql' and name == 'trigger'
                    else name for name in EXECUTION_COLUMNS)
    for number in range(policies):
        # One policy in ten has no retention rule: it keeps every backup,
        # and so every successful execution.
        keep_last = None if number % 10 == 0 else KEEP_LAST
        policy_id = str(uuid.uuid4())
        instance_id = 'instance-%d' % number
        project_id = 'project-%d' % (number % 100)
        successes = []
        last = None
        for slot in range(per_policy):
            when = now - (per_policy - slot) * step
            kind = slot % 50
            status = ('FAILED' if kind < 4 else
                      'SKIPPED' if kind == 4 else 'SUCCEEDED')
            backup_id = deleted = None
            if status == 'SUCCEEDED':
                backup_id = str(uuid.uuid4())
                successes.append(backup_id)
                if keep_last and len(successes) > keep_last:
                    deleted = json.dumps([{
                        'id': successes[-KEEP_LAST - 1],
                        'created_at': when.isoformat()}])
            last = str(uuid.uuid4())
            rows.append((last, policy_id, project_id, instance_id,
                         _text(when), 'schedule', status, 1, backup_id,
                         deleted, _text(when),
                         _text(when + datetime.timedelta(minutes=10))))
        policy_rows.append((policy_id, 'bench-%d' % number, project_id,
                            instance_id, 'trove', 'cron', '0 * * * *',
                            'UTC', True, 'skip', keep_last, _text(now),
                            _text(now + step), last))
        if len(rows) >= 200000:
            db.copy('backup_execution', columns, rows)
            rows = []
    db.copy('backup_execution', columns, rows)
    db.copy('backup_policy', POLICY_COLUMNS, policy_rows)
    return policies * per_policy


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    db = database.Database(args.database, name=args.database_name,
                           admin_url=args.admin_url)
    db.create()
    try:
        conf = cfg.ConfigOpts()
        dbaas_conf.register_opts(conf)
        conf([], project='dbaas-scheduler', default_config_files=[])
        conf.set_override('connection', db.url_string, 'database')
        db_api.configure(conf)
        migration.upgrade('head', engine=db_api.get_engine())
        now = timeutils.utcnow()
        started = time.monotonic()
        total = seed(db, args.executions, args.per_policy, now)
        db.vacuum('backup_execution', 'backup_policy')
        print('%s: %d executions of %d policies seeded in %.0f s' % (
            db.server_version(), total, total // args.per_policy,
            time.monotonic() - started))
        context = dbaas_context.get_admin_context()
        before = (timeutils.utcnow(True)
                  - datetime.timedelta(days=args.older_than))
        started = time.monotonic()
        result = db_purge.purge_executions(
            context, before, batch_size=args.batch_size)
        elapsed = time.monotonic() - started
        left = db.scalar('SELECT count(*) FROM backup_execution')
        print('purge --older-than %d --batch-size %d: %d deleted of %d '
              'old ones in %.1f s = %.0f deleted/s; %d batches, longest '
              'delete transaction %.1f ms; kept %s; %d executions left' % (
                  args.older_than, args.batch_size, result.deleted,
                  result.scanned, elapsed, result.deleted / elapsed,
                  result.batches, result.longest_batch * 1000,
                  result.kept, left))
        return 0
    finally:
        if not args.keep:
            db_api.get_engine().dispose()
            db.drop()


if __name__ == '__main__':
    sys.exit(main())
