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
"""The engine benchmark's baseline: Mistral's cron trigger algorithm.

Mistral's ``process_cron_triggers_v2`` selects every due trigger, then,
one row at a time, moves its next time with a compare-and-set UPDATE in a
transaction of its own and casts; it is run here against the same
database and broker as the engines.
"""

import datetime
import time
import uuid

from oslo_utils import timeutils
import sqlalchemy as sa
from tools.benchmarks.engine import burst
from tools.benchmarks.engine import seeding
from tools.benchmarks import machine
from tools.benchmarks import reporting

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import schedule


def run_baseline(bench):
    """Mistral's loop: select every due row, then one row at a time.

    Per row: a compare-and-set UPDATE in its own transaction, then one
    cast, then the next row.  It inserts no execution rows (Mistral
    creates the workflow execution in the engine it casts to).
    """
    args, db, report = bench.args, bench.db, bench.report
    bench.consumer.ask('reset')
    if args.wait_idle:
        machine.wait_for_idle(args.wait_idle)
    due = timeutils.utcnow() - datetime.timedelta(seconds=1)
    burst.reset_burst(db, due)
    worker_api = bench.worker_api(bench.config_file)
    context = dbaas_context.get_admin_context()
    # Parsed once, as the engine's cache does; Mistral builds a croniter
    # per trigger, which would only make the baseline slower.
    sched = schedule.parse_schedule('cron', seeding.BURST_SCHEDULE, 'UTC')
    update = sa.text('UPDATE backup_policy SET next_execution_time = :next, '
                     'updated_at = :now WHERE id = :id '
                     'AND next_execution_time = :due')
    reporting.progress('baseline: %d policies due at %s', args.policies,
                       due.time())
    started = time.time()
    before = bench.snapshot()
    cast_at = []
    sent = []
    with db.engine.connect() as connection:
        due_rows = connection.execute(sa.text(
            'SELECT id, next_execution_time FROM backup_policy '
            'WHERE enabled = :enabled AND next_execution_time <= :now '
            'ORDER BY next_execution_time'),
            {'enabled': True, 'now': timeutils.utcnow()}).all()
        connection.commit()
        selected = time.time()
        for row in due_rows:
            now = timeutils.utcnow()
            after = max(now, row.next_execution_time).replace(
                tzinfo=datetime.timezone.utc)
            following = sched.next_time(after).replace(tzinfo=None)
            matched = connection.execute(update, {
                'next': following, 'now': now, 'id': row.id,
                'due': row.next_execution_time}).rowcount
            connection.commit()
            if matched:
                execution_id = str(uuid.uuid4())
                worker_api.backup_database_instance(context, execution_id)
                sent.append(execution_id)
                cast_at.append(time.time())
    finished = time.time()
    usage = machine.usage(before, bench.snapshot(), 'engines', 0.0)
    status = bench.consumer.wait_for(len(sent))
    received = bench.consumer.ask('ids')
    rate = len(sent) / (finished - started)
    report.section('Baseline (Mistral algorithm), same database and broker')
    report.item('definition', 'SELECT all due; per row: CAS UPDATE in its '
                'own transaction, one cast')
    report.item('casts', '%d of %d due rows' % (len(sent), len(due_rows)))
    report.item('rate', '%.0f /s  (%d in %.2f s; the SELECT took %.2f s)'
                % (rate, len(sent), finished - started, selected - started))
    report.item('lateness cast - scheduled_at', reporting.spread(
        [at - seeding.epoch(due) for at in cast_at]))
    report.item('missing: casts never received', sum(
        1 for execution_id in sent if execution_id not in received))
    report.item('received more than once',
                sum(1 for seen in received.values() if seen[0] > 1))
    report.item('messages received', status['deliveries'])
    report.item('machine, during the baseline', usage)
    return rate
