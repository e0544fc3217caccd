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
"""Micro-benchmark of ``Schedule.next_time`` alone, no I/O.

Parses a mix of cron schedules (hashed, plain, day-of-week, the last day
of the month, in UTC and in zones with daylight saving) once, then calls
``next_time`` on each, each time from a different instant, and prints the
microseconds per call (the best and the median of ``--repeat`` rounds)::

    python -m tools.benchmarks.next_time
    python -m tools.benchmarks.next_time --cron-engine croniter

``--cron-engine`` picks the engine behind :mod:`dbaas_scheduler.cron`
(an older checkout without the switch has only its own engine).  Run with
PYTHONPATH pointing at another checkout to measure that one.
"""

import argparse
import datetime
import random
import statistics
import time
import uuid

from dbaas_scheduler import cron
from dbaas_scheduler import schedule

UTC = datetime.timezone.utc

EXPRESSIONS = ('H H * * *', '30 2 * * *', '*/15 * * * *', '0 3 * * 1-5',
               '0 4 L * *', '0 1 1,15 * 5', 'H 2 * * 0', '0 0 1 1 *')
ZONES = ('UTC', 'Europe/Paris', 'America/New_York', 'Australia/Sydney')


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--schedules', type=int, default=200,
                        help='schedules parsed (default 200)')
    parser.add_argument('--calls', type=int, default=20000,
                        help='next_time calls per round (default 20000)')
    parser.add_argument('--repeat', type=int, default=5,
                        help='rounds (default 5)')
    parser.add_argument('--cron-engine', default=None,
                        help='engine behind dbaas_scheduler.cron '
                             '(native or croniter)')
    parser.add_argument('--seed', type=int, default=1)
    args = parser.parse_args(argv)
    if args.cron_engine:
        cron.use_engine(args.cron_engine)
    engine = getattr(cron, 'engine_name', lambda: 'native (only)')()
    rng = random.Random(args.seed)
    schedules = [
        schedule.parse_schedule(
            'cron', EXPRESSIONS[i % len(EXPRESSIONS)],
            ZONES[(i // len(EXPRESSIONS)) % len(ZONES)],
            hash_key=str(uuid.UUID(int=rng.getrandbits(128))))
        for i in range(args.schedules)]
    base = datetime.datetime(2026, 1, 1, tzinfo=UTC)
    # Instants over two years, so that daylight saving changes are met.
    afters = [base + datetime.timedelta(seconds=rng.randrange(2 * 366 * 86400))
              for _ in range(args.calls)]
    pairs = [(schedules[i % len(schedules)], after)
             for i, after in enumerate(afters)]
    rounds = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        for sched, after in pairs:
            sched.next_time(after)
        rounds.append((time.perf_counter() - started) / len(pairs) * 1e6)
    print('next_time engine=%s calls=%d: best %.1f us, median %.1f us, '
          'worst %.1f us per call' % (engine, len(pairs), min(rounds),
                                      statistics.median(rounds),
                                      max(rounds)))


if __name__ == '__main__':
    main()
