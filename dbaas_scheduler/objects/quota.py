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
"""Quotas and rate limits: policies per project, manual runs per hour.

Two resources, each limited per project:

``backup_policies``
    the policies a project has (a quota: one more is refused,
    :class:`~dbaas_scheduler.exception.QuotaExceeded`, 403);
``backup_policy_manual_runs_per_hour``
    the manual runs one policy took in the last hour (a rate: one more is
    refused, :class:`~dbaas_scheduler.exception.RateLimitExceeded`, 429
    with the seconds until the oldest run of the hour leaves the window).

The limit is Keystone's (unified limits, read with oslo.limit's
``Enforcer``, the usage counted from our database by its callback) when
``[oslo_limit]`` names this service's endpoint, requests are
authenticated by Keystone, and Keystone has a registered limit for the
resource; otherwise the ``[quota]`` option.  -1
means no limit, in Keystone as in the options.

Both checks are made by the domain functions that every door calls
(:mod:`dbaas_scheduler.objects.backup_policy`), and both hold under
concurrent requests:

* a manual run is counted in the transaction that inserts it, after the
  insert has locked the policy row: concurrent runs of one policy queue
  on that lock and each counts the ones committed before it;
* a policy has no row to lock before it exists, so creation checks before
  the insert and checks again once the policy is committed, deleting it if
  the project is then over its limit (oslo.limit's check-then-verify).  A
  verification counts every policy committed before it started, so the
  policies that pass their verification are at most the limit: the one
  among them verified last counted all the others.  Two creates racing
  for the last place may both be refused; never both accepted.
"""

import datetime
import math

from keystoneauth1 import exceptions as ksa_exceptions
from oslo_config import cfg
from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import quota as db_quota
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

POLICIES = 'backup_policies'
MANUAL_RUNS = 'backup_policy_manual_runs_per_hour'

# The [quota] option that limits each resource where Keystone does not.
DEFAULT_OPTIONS = {POLICIES: 'policies_per_project',
                   MANUAL_RUNS: 'manual_runs_per_policy_per_hour'}

RATE_WINDOW = datetime.timedelta(hours=1)


class _OverLimit(Exception):
    def __init__(self, limit, usage):
        super().__init__(limit, usage)
        self.limit = limit
        self.usage = usage


def unified_limits_configured(conf):
    """True when ``[oslo_limit]`` names this service's Keystone endpoint.

    And requests are authenticated by Keystone: under noauth a project is
    whatever name a request gives, which Keystone does not know.
    oslo.limit reads its options from the process-wide configuration
    only, so they are read there too.
    """
    if conf.auth_strategy != 'keystone':
        return False
    # Imported here: oslo.limit brings in openstacksdk, which processes
    # that never check a limit (the worker, the tools) need not load.
    from oslo_limit import limit  # noqa: F401 registers [oslo_limit]
    options = cfg.CONF.oslo_limit
    return bool(options.endpoint_id or options.endpoint_service_type
                or options.endpoint_service_name)


def _keystone_limit(project_id, resource, count, delta):
    """Enforce Keystone's limit; the limit, None (none), or False (unset)."""
    from openstack import exceptions as sdk_exceptions
    from oslo_limit import exception as limit_exception
    from oslo_limit import limit as oslo_limit
    try:
        enforcer = oslo_limit.Enforcer(
            lambda project, resources: {name: count() for name in resources})
        if resource not in {name for name, _ in
                            enforcer.get_registered_limits(None)}:
            return False
        (_, limit), = enforcer.get_project_limits(project_id, [resource])
        if limit < 0:
            # Keystone's "unlimited"; oslo.limit before 2.12 would refuse
            # everything against it.
            return None
        enforcer.enforce(project_id, {resource: delta})
    except limit_exception.ProjectOverLimit as exc:
        info = exc.over_limit_info_list[0]
        raise _OverLimit(info.limit, info.current_usage)
    except (limit_exception.SessionInitError, ksa_exceptions.ClientException,
            sdk_exceptions.SDKException, ValueError) as exc:
        # ValueError: oslo.limit's word for an endpoint, service or
        # region [oslo_limit] names and Keystone does not have.
        LOG.error('Could not read the limit of %s for project %s from '
                  'Keystone ([oslo_limit]): %s: %s', resource, project_id,
                  type(exc).__name__, exc)
        raise exception.ServiceUnavailable(
            reason='the limits of this project could not be read from '
                   'Keystone; nothing was changed. The operator finds why '
                   'in the service log.')
    return limit


def _enforce(conf, project_id, resource, count, delta=1):
    """Refuse ``delta`` more of ``resource``; return the limit applied.

    ``count()`` is the project's current usage.  Returns the limit, or
    None when there is none; raises :class:`_OverLimit`.
    """
    if unified_limits_configured(conf):
        limit = _keystone_limit(project_id, resource, count, delta)
        if limit is not False:
            return limit
    limit = getattr(conf.quota, DEFAULT_OPTIONS[resource])
    if limit < 0:
        return None
    usage = count()
    if usage + delta > limit:
        raise _OverLimit(limit, usage)
    return limit


def _policies_exceeded(project_id, over):
    return exception.QuotaExceeded(
        project_id=project_id, limit=over.limit, usage=over.usage,
        what='backup policies',
        advice='Delete a policy you no longer need, or ask the operator '
               'for a higher limit (resource %s).' % POLICIES)


def check_policy_quota(context, conf, project_id):
    """Before a policy is created: raise QuotaExceeded if it is one too many.

    Returns the limit applied (None: no limit), for
    :func:`verify_policy_quota`.
    """
    try:
        return _enforce(conf, project_id, POLICIES,
                        lambda: db_quota.count_policies(context, project_id))
    except _OverLimit as over:
        raise _policies_exceeded(project_id, over)


def verify_policy_quota(context, project_id, limit, policy_id):
    """Once the policy is committed: delete it if the project is over.

    ``limit`` is what :func:`check_policy_quota` returned.  A concurrent
    create may have taken the last place between the check and the
    insert; counting again after the commit catches it (see the module's
    docstring).
    """
    if limit is None:
        return
    usage = db_quota.count_policies(context, project_id)
    if usage <= limit:
        return
    LOG.info('Policy %s of project %s deleted again: a concurrent create '
             'took the last place of the quota (%d policies, limit %d)',
             policy_id, project_id, usage, limit)
    try:
        db_api.delete_policy(context, policy_id)
    except exception.PolicyNotFound:
        pass
    raise _policies_exceeded(project_id, _OverLimit(limit, usage - 1))


def _runs_exceeded(policy, over, times, now):
    if over.limit == 0:
        return exception.QuotaExceeded(
            project_id=policy.project_id, limit=0, usage=over.usage,
            what='manual runs per policy per hour',
            advice='Manual runs are turned off for this project; the '
                   'policy still runs on its schedule.')
    # One more is allowed once usage - limit + 1 runs have left the hour:
    # when the (usage - limit)-th oldest (from 0) is an hour old.
    index = min(max(over.usage - over.limit, 0), len(times) - 1)
    leaves = times[index] + RATE_WINDOW if times else now + RATE_WINDOW
    return exception.RateLimitExceeded(
        what='policy %s was run by hand too often' % policy.id,
        limit=over.limit, usage=over.usage, window='an hour',
        retry_after=min(RATE_WINDOW.total_seconds(), max(
            1, math.ceil((leaves - now).total_seconds()))))


def check_manual_run_rate(context, conf, policy, now=None):
    """Before a manual run: raise if the policy took too many this hour.

    Returns the limit applied (None: no limit), for
    :func:`verify_manual_run_rate`.
    """
    now = now or timeutils.utcnow(True)
    times = []

    def count():
        times[:] = db_quota.manual_run_times(context, policy.id,
                                             now - RATE_WINDOW)
        return len(times)

    try:
        return _enforce(conf, policy.project_id, MANUAL_RUNS, count)
    except _OverLimit as over:
        if not times and over.limit:
            count()
        raise _runs_exceeded(policy, over, times, now)


def verify_manual_run_rate(context, policy, limit, execution_id, now=None):
    """Inside the transaction that inserted ``execution_id``: count again.

    The insert locked the policy row, so concurrent runs of the policy
    wait here, and each counts those committed before it; raising rolls
    the insert back.
    """
    if limit is None:
        return
    now = now or timeutils.utcnow(True)
    times = db_quota.manual_run_times(context, policy.id, now - RATE_WINDOW,
                                      exclude=execution_id)
    if len(times) + 1 > limit:
        # Runs that got in while this one waited for the lock are newer
        # than its ``now``: the wait is counted from the present.
        raise _runs_exceeded(policy, _OverLimit(limit, len(times)), times,
                             max(now, timeutils.utcnow(True)))
