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
"""A policy's RPO: its default from the schedule, and its coverage ahead.

The default RPO is :data:`DEFAULT_RPO_FACTOR` times the longest gap
between two consecutive slots among the next :data:`GAP_SLOTS`: a daily
policy is protected for 36 hours after a backup, so that one failed
night is a warning (``at_risk``) half a day before it is a breach.  A
``once`` schedule has no default (no state unless an RPO is given).
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler import exception
from dbaas_scheduler import schedule

LOG = logging.getLogger(__name__)

DEFAULT_RPO_FACTOR = 1.5
# Slots read to find the longest gap (a year of a weekly schedule).
GAP_SLOTS = 53
# Bounds of an RPO a user gives, in seconds: a minute to ten years.
MIN_RPO = 60
MAX_RPO = 10 * 366 * 86400


def check_rpo(value):
    if value is None:
        return
    if (isinstance(value, bool) or not isinstance(value, int)
            or not MIN_RPO <= value <= MAX_RPO):
        raise exception.Invalid(
            reason='rpo is a number of seconds from %d to %d (or null for '
                   'the default, derived from the schedule), not %r.'
                   % (MIN_RPO, MAX_RPO, value))


def _gaps(sched, now):
    """Seconds between the next :data:`GAP_SLOTS` consecutive slots."""
    times = schedule.next_times(sched, now, GAP_SLOTS)
    return [(later - earlier).total_seconds()
            for earlier, later in zip(times, times[1:])]


def _default_rpo(gaps):
    return int(round(max(gaps) * DEFAULT_RPO_FACTOR)) if gaps else None


def _daily_runs(gaps):
    total = sum(gaps)
    return len(gaps) * 86400.0 / total if total > 0 else None


def default_rpo(sched, now):
    """Seconds: the default RPO of a schedule, or None (no two slots)."""
    return _default_rpo(_gaps(sched, now))


def effective_rpo(rpo, sched, now):
    """The RPO that applies: the one given, or the schedule's default."""
    return rpo if rpo is not None else default_rpo(sched, now)


def schedule_figures(rpo, sched, now):
    """``(effective RPO, average slots a day)`` of a schedule.

    The slots a day (None: fewer than two slots to come) are what the
    coverage report's minimum frequency is checked against
    (dbaas_scheduler/coverage.py).
    """
    gaps = _gaps(sched, now)
    return (rpo if rpo is not None else _default_rpo(gaps),
            _daily_runs(gaps))


def rpo_coverage(policy, sched, count, now=None):
    """What the next ``count`` slots do to the policy's protection.

    For each slot: ``protected_until`` after it if it succeeds (started
    as late as the policy's p95 lateness), and whether, if it fails
    instead (and the slots before it succeed), the RPO would be breached
    before the next slot can renew it -- a ``gap`` from the breach to the
    expected end of that next backup.  Also the protection now.  Pure
    reading: nothing is changed.
    """
    now = now or timeutils.utcnow(True)
    rpo = policy.effective_rpo
    result = {'rpo': rpo, 'protection': policy.protection,
              'last_success_at': policy.last_success_at,
              'protected_until': policy.protected_until, 'slots': []}
    if rpo is None or sched is None:
        return result
    lateness = datetime.timedelta(seconds=policy.lateness_p95 or 0.0)
    duration = datetime.timedelta(seconds=policy.duration_p95 or 0.0)
    span = datetime.timedelta(seconds=rpo)
    times = schedule.next_times(sched, now, count + 1)
    until = policy.protected_until
    for index, slot in enumerate(times[:count]):
        start = slot + lateness
        renewed = start + span
        following = times[index + 1] if index + 1 < len(times) else None
        # If this slot fails, the protection of the previous one must
        # last until the following slot's backup ends.
        needed = (following + lateness + duration if following is not None
                  else None)
        gap = None
        if until is not None and (needed is None or needed > until):
            gap = {'from': until, 'to': needed}
        result['slots'].append({
            'scheduled_at': slot, 'expected_end': start + duration,
            'protected_until_if_succeeds': renewed,
            'breach_if_fails': gap})
        until = renewed
    return result
