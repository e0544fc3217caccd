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
"""Policies for the engine benchmark, seeded in bulk."""

import datetime
import multiprocessing
import uuid

from oslo_utils import timeutils

from dbaas_scheduler.objects import protection as protection_obj
from dbaas_scheduler import protection
from dbaas_scheduler import schedule

EPOCH = datetime.datetime(1970, 1, 1)
BURST_SCHEDULE = '0 3 * * *'
STEADY_SCHEDULE = 'H H * * *'
POLICY_COLUMNS = ('id', 'name', 'project_id', 'instance_id', 'backend',
                  'schedule_type', 'schedule', 'timezone', 'enabled',
                  'overlap_policy', 'created_at', 'next_execution_time',
                  'resolved_schedule', 'effective_rpo', 'daily_runs',
                  'protected_until', 'protection', 'protection_changed_at',
                  'protection_check_at', 'consecutive_failures')


def epoch(naive_utc):
    return (naive_utc - EPOCH).total_seconds()


def db_time(seconds):
    """A naive UTC datetime, as the database stores it, from epoch time."""
    return EPOCH + datetime.timedelta(seconds=seconds)


def db_string(naive_utc):
    return naive_utc.strftime('%Y-%m-%d %H:%M:%S.%f')


def protection_columns(schedule_text, created, next_time):
    """The protection columns the API stores with a new policy.

    As ``objects.backup_policy`` computes them at create time (the
    schedule's default RPO, counted from the creation): every policy of a
    region has them, and the indexes on them are part of what a tick and
    a worker's writes cost.  Computed once per schedule, not per row.
    """
    now = created.replace(tzinfo=datetime.timezone.utc)
    sched = schedule.parse_schedule('cron', schedule_text, 'UTC')
    rpo, daily_runs = protection_obj.schedule_figures(None, sched, now)
    until = protection.protected_until(None, now, rpo)
    evaluation = protection.evaluate(
        now, until, rpo, next_time.replace(tzinfo=datetime.timezone.utc))
    check_at = evaluation.check_at
    return (rpo, daily_runs, db_string(until.replace(tzinfo=None)),
            evaluation.state, db_string(created),
            check_at and db_string(check_at.replace(tzinfo=None)), 0)


def policy_row(number, policy_id, schedule_text, next_time, created,
               resolved=None, protection_values=(None,) * 6 + (0,)):
    return (policy_id, 'bench-%d' % number, 'project-%d' % (number % 100),
            'instance-%d' % number, 'trove', 'cron', schedule_text, 'UTC',
            True, 'skip', created, next_time, resolved) + protection_values


def _steady_chunk(count, seed_time):
    """Ids, resolved schedules and next runs after seed_time (a job)."""
    after = db_time(seed_time).replace(tzinfo=datetime.timezone.utc)
    next_by_resolved = {}
    result = []
    for _ in range(count):
        policy_id = str(uuid.uuid4())
        # As the API stores a policy: its H fields resolved once.
        resolved = schedule.resolve_hashed_fields('cron', STEADY_SCHEDULE,
                                                  policy_id)
        if resolved not in next_by_resolved:
            sched = schedule.parse_schedule('cron', resolved, 'UTC')
            next_by_resolved[resolved] = db_string(
                sched.next_time(after).replace(tzinfo=None))
        result.append((policy_id, resolved, next_by_resolved[resolved]))
    return result


def seed_burst(db, count, next_time):
    now = timeutils.utcnow()
    created = db_string(now)
    due = db_string(next_time)
    values = protection_columns(BURST_SCHEDULE, now, next_time)
    rows = [policy_row(number, str(uuid.uuid4()), BURST_SCHEDULE, due,
                       created, protection_values=values)
            for number in range(count)]
    db.copy('backup_policy', POLICY_COLUMNS, rows)


def seed_steady(db, count, processes):
    """Policies on 'H H * * *', each at its real next run time.

    Each is stored with its resolved schedule, as the API stores it
    (resolving costs about 20 us a policy, so it is done in a pool); run
    times are computed once per resolved schedule (1,440 of them).
    """
    created = timeutils.utcnow()
    seed_time = epoch(created)
    chunk = 20000
    sizes = [min(chunk, count - start) for start in range(0, count, chunk)]
    context = multiprocessing.get_context('spawn')
    with context.Pool(processes) as pool:
        parts = pool.starmap(_steady_chunk,
                             [(size, seed_time) for size in sizes])
    # A daily schedule's figures, the same for every resolved 'H H'.
    values = protection_columns('0 0 * * *', created,
                                created + datetime.timedelta(hours=12))
    created = db_string(created)
    rows = []
    for part in parts:
        for policy_id, resolved, next_time in part:
            rows.append(policy_row(len(rows), policy_id, STEADY_SCHEDULE,
                                   next_time, created, resolved, values))
    db.copy('backup_policy', POLICY_COLUMNS, rows)
