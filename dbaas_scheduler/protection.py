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
"""The protection state of a policy: pure maths, no I/O.

A policy is protected while its newest successful backup is younger than
its RPO: until ``protected_until = last_success_at + rpo`` (before the
first success, counted from when the policy was created).  Its state:

* ``breached`` from ``protected_until`` on;
* ``at_risk`` before that when its last outcome failed, when no slot is
  to come (paused, finished), or when the next slot that could renew the
  protection -- started as late as this policy's backups usually start
  (p95) and taking as long as they usually take (p95), with a headroom of
  :data:`HEADROOM_FRACTION` of the RPO -- would end after
  ``protected_until``;
* ``ok`` otherwise.

With nothing new recorded, time only moves a state forward (``ok`` ->
``at_risk`` -> ``breached``); :func:`evaluate` says when it next would,
so that the engine looks at a policy again at that moment only.  Every
datetime is an aware UTC datetime; durations are seconds.
"""

import collections
import datetime
import math

from dbaas_scheduler import enums

OK = enums.Protection.OK
AT_RISK = enums.Protection.AT_RISK
BREACHED = enums.Protection.BREACHED

# At the latest this share of the RPO before a breach, a policy that has
# not been renewed is at risk: an early warning even for a policy with no
# history of lateness and duration yet.
HEADROOM_FRACTION = 0.1

# Successful executions whose lateness and duration make the p95.
SAMPLE_SIZE = 20

# (state, check_at): the state now and when time alone changes it next
# (None: it does not).
Evaluation = collections.namedtuple('Evaluation', 'state check_at')


def protected_until(last_success_at, baseline, rpo):
    """When the RPO is breached if nothing more succeeds (None: no RPO).

    ``baseline`` (the policy's creation) stands in for a first success.
    """
    if rpo is None:
        return None
    start = last_success_at or baseline
    if start is None:
        return None
    return start + datetime.timedelta(seconds=rpo)


def percentile(values, fraction=0.95):
    """The nearest-rank percentile of ``values`` (0.0 when empty)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    rank = max(1, math.ceil(fraction * len(ordered)))
    return float(ordered[rank - 1])


def lateness_and_duration(samples):
    """p95 ``(lateness, duration)`` in seconds of successful runs.

    ``samples`` are ``(scheduled_at, started_at, finished_at)``; a run
    that started before its slot (a manual run) was 0 s late.
    """
    lateness, duration = [], []
    for scheduled_at, started_at, finished_at in samples:
        if started_at is None or finished_at is None:
            continue
        lateness.append(max(0.0, (started_at - scheduled_at).total_seconds()))
        duration.append(max(0.0, (finished_at - started_at).total_seconds()))
    return percentile(lateness), percentile(duration)


def headroom(rpo):
    return datetime.timedelta(seconds=(rpo or 0) * HEADROOM_FRACTION)


def evaluate(now, until, rpo, renewal_slot, lateness=0.0, duration=0.0,
             failing=False):
    """The :class:`Evaluation` of a policy at ``now``.

    ``until`` is its ``protected_until`` (None: it has no RPO, and no
    state), ``renewal_slot`` the earliest slot that could still renew it
    (an execution not finished yet, or the next run time; None if there
    is none), ``lateness`` and ``duration`` its p95 in seconds, and
    ``failing`` whether its last outcome failed.
    """
    if until is None:
        return Evaluation(None, None)
    if now >= until:
        return Evaluation(BREACHED, None)
    if failing or renewal_slot is None:
        return Evaluation(AT_RISK, until)
    margin = datetime.timedelta(seconds=duration) + headroom(rpo)
    expected = max(renewal_slot + datetime.timedelta(seconds=lateness),
                   now) + margin
    if expected >= until:
        return Evaluation(AT_RISK, until)
    # From then on, even a backup starting at once would end too late.
    return Evaluation(OK, until - margin)
