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
"""The coverage state of an instance: pure rules, no I/O.

An instance is ``(backend, project_id, instance_id)``.  Its state is the
first of these that holds, in this order of precedence (the most urgent
first; :data:`PRECEDENCE`):

1. ``unprotected`` -- no backup policy names it;
2. ``paused`` -- it has policies, none of them enabled: no backup will be
   taken;
3. ``stale`` -- its newest successful backup (before the first, its
   oldest policy's creation) is older than the shortest RPO an enabled
   policy was given, or without one ``[coverage] max_age``: the recovery
   point it has is too old now;
4. ``verification_failed`` -- the newest verification of the backups
   of one of its enabled policies failed (the policy's
   ``verify_failing``, which the next verification that passes, or
   turning verification off, clears);
5. ``below_minimum`` -- its enabled policies take fewer backups a day
   than ``[coverage] min_daily`` or none keeps ``[coverage] min_keep``
   backups: covered today, by less than the operator requires;
6. ``protected`` -- none of the above.

Every rule that holds is listed in ``reasons`` as well, so that fixing
the first one shows what comes next.
"""

import collections
import datetime
import typing

UNPROTECTED = 'unprotected'
PAUSED = 'paused'
STALE = 'stale'
VERIFICATION_FAILED = 'verification_failed'
BELOW_MINIMUM = 'below_minimum'
PROTECTED = 'protected'

# The most urgent first: an instance's state is the first that holds.
PRECEDENCE = (UNPROTECTED, PAUSED, STALE, VERIFICATION_FAILED,
              BELOW_MINIMUM, PROTECTED)

# A shortfall of backups a day tolerated: a daily schedule in a time zone
# with daylight saving time averages slightly under one a day.
DAILY_TOLERANCE = 0.01


class Thresholds(typing.NamedTuple):
    """What the operator demands (the ``[coverage]`` options)."""

    max_age: int
    min_daily: float
    min_keep: int

    @classmethod
    def from_conf(cls, conf):
        group = conf.coverage
        return cls(group.max_age, group.min_daily, group.min_keep)


class Instance(typing.NamedTuple):
    """What the policies of one instance say about it, aggregated.

    The figures count enabled policies only, except ``policies`` and
    ``last_success_at`` (a backup taken by a policy paused since is
    still a recovery point).  An instance no policy names has
    ``policies == 0`` and None elsewhere.
    """

    backend: str
    project_id: str
    instance_id: str
    policies: int = 0
    enabled_policies: int = 0
    last_success_at: typing.Optional[datetime.datetime] = None
    first_created_at: typing.Optional[datetime.datetime] = None
    # The shortest RPO a user gave an enabled policy (seconds).
    rpo: typing.Optional[int] = None
    # Backups a day of the enabled policies together (None: not known).
    daily_runs: typing.Optional[float] = None
    # The most backups an enabled policy's retention keeps (None or 0:
    # none has a count), and how many enabled policies keep every backup
    # (they have no retention rule).
    keeps: typing.Optional[float] = None
    keeps_all: int = 0
    verification_failed: bool = False


Verdict = collections.namedtuple('Verdict', 'state reasons')


def stale_after(instance, thresholds):
    """Seconds after which the instance's recovery point is stale."""
    return instance.rpo if instance.rpo is not None else thresholds.max_age


def _is_stale(instance, thresholds, now):
    since = instance.last_success_at or instance.first_created_at
    if since is None:
        return True
    return (now - since).total_seconds() > stale_after(instance, thresholds)


def _too_rare(instance, thresholds):
    if not thresholds.min_daily or instance.daily_runs is None:
        return False
    return instance.daily_runs < thresholds.min_daily * (1 - DAILY_TOLERANCE)


def _keeps_too_few(instance, thresholds):
    if not thresholds.min_keep or instance.keeps_all:
        return False
    return (instance.keeps or 0) < thresholds.min_keep


def classify(instance, thresholds, now):
    """The :class:`Verdict` of ``instance`` at ``now`` (an aware UTC time).

    ``reasons`` lists every state that holds, in order of precedence
    (``protected`` alone when none does); ``state`` is the first.
    """
    if not instance.policies:
        return Verdict(UNPROTECTED, [UNPROTECTED])
    if not instance.enabled_policies:
        return Verdict(PAUSED, [PAUSED])
    reasons = []
    if _is_stale(instance, thresholds, now):
        reasons.append(STALE)
    if instance.verification_failed:
        reasons.append(VERIFICATION_FAILED)
    if _too_rare(instance, thresholds) or _keeps_too_few(instance,
                                                         thresholds):
        reasons.append(BELOW_MINIMUM)
    reasons = reasons or [PROTECTED]
    return Verdict(reasons[0], reasons)


def time_text(value):
    """An aware time as the fixed-width text rows carry (UTC, to the µs).

    ``YYYY-MM-DDTHH:MM:SS.ffffff``, always the six digits: two such texts
    compare as the times do (db/coverage.py reads the policies' times so).
    """
    return value.astimezone(datetime.timezone.utc).replace(
        tzinfo=None).isoformat(timespec='microseconds')


def row_classifier(thresholds, now):
    """:func:`classify` of the rows of ``db.coverage.policy_rows``.

    A function of such a row (the fields of :class:`Instance`, the times
    as :func:`time_text`, ``verification_failed`` a number)
    returning its :class:`Verdict`, the same as :func:`classify` of the
    instance gives: a time is older than ``now`` less ``stale_after``
    seconds exactly when its text sorts before that time's.  For the
    report of every instance of a project, without a datetime per
    instance; the verdicts (and their lists of reasons) are shared
    between the rows that have the same, so they must not be changed.
    """
    max_age = thresholds.max_age
    rare_below = (thresholds.min_daily * (1 - DAILY_TOLERANCE)
                  if thresholds.min_daily else None)
    min_keep = thresholds.min_keep
    limits = {}
    unprotected = Verdict(UNPROTECTED, [UNPROTECTED])
    paused = Verdict(PAUSED, [PAUSED])
    verdicts = {}
    for stale in (False, True):
        for failed in (False, True):
            for below in (False, True):
                reasons = [name for name, holds in (
                    (STALE, stale), (VERIFICATION_FAILED, failed),
                    (BELOW_MINIMUM, below)) if holds] or [PROTECTED]
                verdicts[stale, failed, below] = Verdict(reasons[0],
                                                         reasons)

    def limit(seconds):
        # The oldest time not stale yet, as text; a few RPOs at most.
        text = limits.get(seconds)
        if text is None:
            text = limits[seconds] = time_text(
                now - datetime.timedelta(seconds=seconds))
        return text

    def classify_row(row):
        (_, _, _, policies, enabled, last_success_at, first_created_at,
         rpo, daily_runs, keeps, keeps_all, failed) = row
        if not policies:
            return unprotected
        if not enabled:
            return paused
        since = last_success_at or first_created_at
        stale = since is None or since < limit(
            rpo if rpo is not None else max_age)
        below = ((rare_below is not None and daily_runs is not None
                  and daily_runs < rare_below)
                 or (bool(min_keep) and not keeps_all
                     and (keeps or 0) < min_keep))
        return verdicts[stale, bool(failed), below]

    return classify_row


def count(states):
    """``{state: number}`` for every state of :data:`PRECEDENCE`."""
    counts = dict.fromkeys(PRECEDENCE, 0)
    for state in states:
        counts[state] += 1
    return counts
