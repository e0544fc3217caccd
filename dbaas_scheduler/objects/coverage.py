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
    the instances in the order of ``(backend, project_id, instance_id)``;
    ``state`` keeps the instances in that state only (the counts are of
    all).  Every project completely listed has its counts stored.
    """
    now = now or timeutils.utcnow(True)
    thresholds = coverage.Thresholds.from_conf(conf)
    with no_collection():
        instances = db_coverage.policy_instances(context, project_id)
    projects = ({project_id} if project_id is not None
                else {i.project_id for i in instances})
    names, incomplete = _listed(context, conf, projects)
    with no_collection():
        return _report(context, thresholds, instances, projects, names,
                       incomplete, state, now)


def _report(context, thresholds, instances, projects, names, incomplete,
            state, now):
    known = {i[:3] for i in instances}
    instances.extend(coverage.Instance(*key) for key in names
                     if key not in known)
    instances.sort()
    items, per_project = [], {p: [] for p in projects}
    classify = coverage.classify
    for instance in instances:
        verdict = classify(instance, thresholds, now)
        per_project[instance.project_id].append(verdict.state)
        if state is None or verdict.state == state:
            items.append(_item(instance, verdict, thresholds, names))
    _store(context, per_project, incomplete, now)
    counts = coverage.count(s for states in per_project.values()
                            for s in states)
    return {'instances': items, 'counts': counts, 'incomplete': incomplete}


def _item(instance, verdict, thresholds, names):
    key = instance[:3]
    return {
        'backend': instance.backend, 'project_id': instance.project_id,
        'instance_id': instance.instance_id, 'name': names.get(key),
        'state': verdict.state, 'reasons': verdict.reasons,
        'source': 'backend' if key in names else 'policies',
        'policies': instance.policies,
        'enabled_policies': instance.enabled_policies,
        'last_success_at': instance.last_success_at,
        'stale_after': (coverage.stale_after(instance, thresholds)
                        if instance.policies else None),
        'daily_runs': instance.daily_runs,
    }


def _store(context, per_project, incomplete, now):
    failed = {entry['project_id'] for entry in incomplete}
    counts = {project_id: coverage.count(states)
              for project_id, states in per_project.items()
              if project_id not in failed}
    if counts:
        db_coverage.store_counts(context, counts, now)
