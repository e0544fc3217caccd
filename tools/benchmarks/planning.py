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
"""Micro-benchmark of the tick's planning (engine.tick.plan_batch), no I/O.

Plans N due policies on 'H H * * *' the way one engine tick does, in
batches, and prints the CPU time per policy::

    python -m tools.benchmarks.planning --policies 100000
    python -m tools.benchmarks.planning --policies 100000 --unresolved

``--unresolved`` leaves resolved_schedule empty, as rows stored before it
existed (and the engine benchmark's seeding before this change) have it:
each policy's hashed schedule is then parsed on its own.  Run with
PYTHONPATH pointing at another checkout to measure that one.
"""

import argparse
import datetime
import random
import time
import types
import uuid

from tools.benchmarks import reporting

from dbaas_scheduler.engine import tick
from dbaas_scheduler import schedule
from dbaas_scheduler import windows

UTC = datetime.timezone.utc
SCHEDULE = 'H H * * *'


# How late the slots are: the start window a daily schedule has by
# default (8 hours).  The engine claims a slot once it is due, so a tick
# finds one later than that only after the engines were down for longer;
# such a slot is recorded EXPIRED, not run -- another path, and not the
# one measured here.
LATENESS = datetime.timedelta(seconds=windows.default_start_window(86400))


def make_rows(count, now, resolved, seed):
    """Policy rows due within LATENESS before ``now``, at their real slot.

    The policy ids are drawn until ``count`` of them have their hashed
    slot in that span: a day's policies spread over the day, and about a
    third of them are due in the last 8 hours.
    """
    rng = random.Random(seed)
    earliest = now - LATENESS
    rows = []
    while len(rows) < count:
        policy_id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        text = schedule.resolve_hashed_fields('cron', SCHEDULE, policy_id)
        due = schedule.parse_schedule('cron', text, 'UTC').next_time(
            earliest)
        if due > now:
            continue
        rows.append(types.SimpleNamespace(
            id=policy_id, project_id='project', instance_id='instance',
            schedule_type='cron', schedule=SCHEDULE,
            resolved_schedule=text if resolved else None, timezone='UTC',
            start_at=None, end_at=None, next_execution_time=due,
            catchup_window=None, remaining_runs=None))
    rows.sort(key=lambda row: row.next_execution_time)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--policies', type=int, default=100000)
    parser.add_argument('--batch-size', type=int, default=1000,
                        help='Rows per plan_batch call, as [engine] '
                             'batch_size (default: 1000).')
    parser.add_argument('--unresolved', action='store_true')
    parser.add_argument('--seed', type=int, default=14)
    args = parser.parse_args(argv)
    now = datetime.datetime(2026, 11, 23, 12, 0, tzinfo=UTC)
    reporting.progress('making %d rows', args.policies)
    rows = make_rows(args.policies, now, not args.unresolved, args.seed)
    tick._parse.cache_clear()
    reporting.progress('planning')
    started_cpu, started = time.process_time(), time.perf_counter()
    runs = 0
    for start in range(0, len(rows), args.batch_size):
        plan = tick.plan_batch(rows[start:start + args.batch_size], now,
                               default_catchup_window=2 * 86400)
        runs += len(plan.runs)
    cpu = time.process_time() - started_cpu
    wall = time.perf_counter() - started
    # Every slot is within its start window: each policy runs.
    assert runs == len(rows), (runs, len(rows))
    info = tick._parse.cache_info()
    print('planning %d policies on %r (%s), batches of %d'
          % (len(rows), SCHEDULE,
             'unresolved' if args.unresolved else 'resolved',
             args.batch_size))
    print('  CPU %.3f s, wall %.3f s: %.1f us CPU per policy'
          % (cpu, wall, cpu / len(rows) * 1e6))
    print('  parsed schedules: %d (cache hits %d)'
          % (info.misses, info.hits))


if __name__ == '__main__':
    main()
