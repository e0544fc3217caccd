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
"""The coverage report: every instance of a project and its protection.

The instances are those the enabled backends list for the project (Trove
lists them with the asking user's own token, or a trust of one of the
project's policies) and those the project's policies name (the only ones
known of a backend that cannot list, such as local); the rules are
:mod:`dbaas_scheduler.coverage`.  Each report stores the project's counts
per state, which the metrics serve (dbaas_scheduler/db/metrics.py).
"""

from concurrent import futures
import contextlib
import gc
import threading
import typing

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler import coverage
from dbaas_scheduler.db import coverage as db_coverage
from dbaas_scheduler import keystone
from dbaas_scheduler.objects import access

LOG = logging.getLogger(__name__)

# Projects listed at once for an all-projects report.
LISTING_THREADS = 8

_GC_LOCK = threading.Lock()
_GC_PAUSES = [0, False]   # reports under way, whether gc was enabled


@contextlib.contextmanager
def no_collection():
    """No cyclic garbage collection while a report is built.

    A report of 100,000 instances makes some 600,000 small objects (the
    rows, their datetimes, the verdicts, the items), none of them in a
    cycle: each burst of allocations set off a collection over
    everything alive, a third of the report's CPU.  Reference counting
    still frees them.  Reports under way at once count: the collector
    is enabled again when the last one ends, if it was when the first
    began (it is process-wide).
    """
    with _GC_LOCK:
        if _GC_PAUSES[0] == 0:
            _GC_PAUSES[1] = gc.isenabled()
            gc.disable()
        _GC_PAUSES[0] += 1
    try:
        yield
    finally:
        with _GC_LOCK:
            _GC_PAUSES[0] -= 1
            if _GC_PAUSES[0] == 0 and _GC_PAUSES[1]:
                gc.enable()


class Actor(typing.NamedTuple):
    """Who lists a project's instances (a backend reads it as a policy)."""

    project_id: str
    trust_id: typing.Optional[str] = None
    user_auth: object = None
    instance_id: typing.Optional[str] = None


def _actors(context, conf, backend, project_ids):
    """An :class:`Actor` per project: the user's token, else a trust."""
    trusts = db_coverage.listing_trusts(context, backend, project_ids)
    own = (keystone.user_auth(conf, context)
           if conf.auth_strategy == 'keystone' and context.auth_token
           and context.project_id in project_ids else None)
    return {project_id: Actor(
        project_id, trust_id=trusts.get(project_id),
        user_auth=own if project_id == context.project_id else None)
        for project_id in project_ids}


def _list(backend, actor):
    try:
        return backend.list_instances(actor), None
    except Exception as exc:
        # Whatever the cause, the rest of the report stands: the project
        # is named as incomplete, with the reason.
        LOG.warning('Coverage: could not list the %s instances of project '
                    '%s: %s', backend.name, actor.project_id, exc)
        return None, str(exc)


def _listed(context, conf, project_ids):
    """``({(backend, project, instance): name}, [incomplete])``."""
    names, incomplete = {}, []
    for name in access.enabled_backends(conf):
        backend = loader.get_backend(conf, name)
        if not backend.lists_instances:
            continue
        actors = _actors(context, conf, name, sorted(project_ids))
        threads = max(1, min(LISTING_THREADS, len(actors)))
        with futures.ThreadPoolExecutor(threads) as pool:
            answers = pool.map(lambda actor: (actor, _list(backend, actor)),
                               actors.values())
            for actor, (found, error) in answers:
                if error is not None:
                    incomplete.append({'backend': name,
                                       'project_id': actor.project_id,
                                       'reason': error})
                    continue
                for instance_id, instance_name in (found or {}).items():
                    names[(name, actor.project_id, instance_id)] = (
                        instance_name)
    return names, incomplete


def report(context, conf, project_id=None, state=None, now=None):
    """The coverage of ``project_id`` (None: every project with policies).

    ``{'instances': [...], 'counts': {state: n}, 'incomplete': [...]}``,
    the instances in the order of ``(backend, project_id, instance_id)``,
    their ``last_success_at`` as RFC 3339 UTC text (as the API shows
    it); ``state`` keeps the instances in that state only (the counts are
    of all).  Every project completely listed has its counts stored.
    """
    now = now or timeutils.utcnow(True)
    thresholds = coverage.Thresholds.from_conf(conf)
    with no_collection():
        rows = db_coverage.policy_rows(context, project_id)
    projects = ({project_id} if project_id is not None
                else {row[1] for row in rows})
    names, incomplete = _listed(context, conf, projects)
    with no_collection():
        return _report(context, thresholds, rows, projects, names,
                       incomplete, state, now)


# An instance no policy names (the rest of a row of policy_rows).
_NO_POLICY = (0, 0, None, None, None, None, None, 0, 0)
_UNKNOWN = object()


def api_time(text):
    """A :func:`coverage.time_text` as RFC 3339 UTC, as ``util.isotime``.

    ``2026-11-22T02:30:00Z``; the microseconds only when there are some
    (``isoformat``'s rule).
    """
    if text is None:
        return None
    if text.endswith('.000000'):
        return text[:19] + 'Z'
    return text + 'Z'


def _report(context, thresholds, rows, projects, names, incomplete,
            state, now):
    by_key = {row[:3]: row for row in rows}
    for key in names:
        if key not in by_key:
            by_key[key] = key + _NO_POLICY
    items = []
    per_project = {p: dict.fromkeys(coverage.PRECEDENCE, 0)
                   for p in projects}
    classify = coverage.row_classifier(thresholds, now)
    max_age = thresholds.max_age
    for key in sorted(by_key):
        row = by_key[key]
        verdict = classify(row)
        per_project[key[1]][verdict.state] += 1
        if state is not None and verdict.state != state:
            continue
        name = names.get(key, _UNKNOWN)
        policies, rpo = row[3], row[7]
        # The keys in the order the API has always shown them.
        items.append({
            'backend': key[0], 'project_id': key[1],
            'instance_id': key[2],
            'name': None if name is _UNKNOWN else name,
            'state': verdict.state, 'reasons': verdict.reasons,
            'source': 'policies' if name is _UNKNOWN else 'backend',
            'policies': policies,
            'enabled_policies': row[4],
            'last_success_at': api_time(row[5]),
            'stale_after': ((rpo if rpo is not None else max_age)
                            if policies else None),
            'daily_runs': row[8],
        })
    _store(context, per_project, incomplete, now)
    counts = dict.fromkeys(coverage.PRECEDENCE, 0)
    for numbers in per_project.values():
        for name, number in numbers.items():
            counts[name] += number
    return {'instances': items, 'counts': counts, 'incomplete': incomplete}


def _store(context, per_project, incomplete, now):
    failed = {entry['project_id'] for entry in incomplete}
    counts = {project_id: numbers
              for project_id, numbers in per_project.items()
              if project_id not in failed}
    if counts:
        db_coverage.store_counts(context, counts, now)
