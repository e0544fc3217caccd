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
"""Backup policies: creating, changing, pausing, resuming and previewing.

The domain functions behind every interface that changes policies (the REST
API, the RPC API, dbaas-scheduler-manage).  They validate what the user
asks for -- the schedule with :mod:`dbaas_scheduler.schedule`, the rest
here -- and keep ``next_execution_time`` consistent: set while a policy is
enabled, NULL while it is not.  Each change, once stored, is announced as a
``backup_policy.<action>.end`` notification (:mod:`dbaas_scheduler.
notifications`), whichever interface asked for it.
"""

import re
import types

from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import limits
from dbaas_scheduler.db import models
from dbaas_scheduler import dispatch
from dbaas_scheduler import enums
from dbaas_scheduler import exception
from dbaas_scheduler import keystone
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import access
from dbaas_scheduler.objects import quota
from dbaas_scheduler import schedule
from dbaas_scheduler import timezones

LOG = logging.getLogger(__name__)


def parse_times(values):
    """``values`` with its ``start_at`` and ``end_at`` parsed, if given."""
    values = dict(values)
    for field in ('start_at', 'end_at'):
        if values.get(field) is not None:
            values[field] = timezones.parse_time(values[field], field)
    return values


# What a user may set on a policy.
USER_FIELDS = (
    'name', 'description', 'instance_id', 'backend', 'backup_params',
    'schedule_type', 'schedule', 'timezone', 'start_at', 'end_at',
    'remaining_runs', 'overlap_policy', 'catchup_window', 'keep_last',
    'keep_daily', 'keep_weekly', 'keep_monthly', 'max_age_days')

# What every interface shows of a policy.
VISIBLE_FIELDS = (
    'id', 'name', 'description', 'project_id', 'user_id', 'instance_id',
    'backend', 'backup_params', 'schedule_type', 'schedule', 'timezone',
    'start_at', 'end_at', 'remaining_runs', 'enabled', 'paused_reason',
    'overlap_policy', 'catchup_window', 'keep_last', 'keep_daily',
    'keep_weekly', 'keep_monthly', 'max_age_days', 'next_execution_time',
    'last_execution_id', 'created_at', 'updated_at')

# Changing one of these recomputes the next run time.
SCHEDULE_FIELDS = ('schedule_type', 'schedule', 'timezone', 'start_at',
                   'end_at')

# The backend's default is the deployment's: see default_backend().
DEFAULTS = {
    'schedule_type': schedule.CRON,
    'timezone': 'UTC',
    'overlap_policy': enums.OverlapPolicy.SKIP,
}

# Counts that must be at least 1 when given, and those at least 0.
_POSITIVE = ('remaining_runs', 'keep_last', 'keep_daily', 'keep_weekly',
             'keep_monthly')
_NOT_NEGATIVE = ('catchup_window', 'max_age_days')

# C0 and C1 control characters and DEL: an instance id reaches log lines,
# and the default name built from it; a CR or LF there forges lines.
_CONTROL = re.compile('[\x00-\x1f\x7f-\x9f]')


def _check_fields(values):
    unknown = set(values) - set(USER_FIELDS)
    if unknown:
        raise exception.Invalid(
            reason='unknown field(s): %s; a policy has %s.' % (
                ', '.join(sorted(unknown)), ', '.join(USER_FIELDS)))
    for field in ('name', 'instance_id'):
        if field in values and not str(values[field] or '').strip():
            raise exception.Invalid(reason='%s must not be empty.' % field)
    instance_id = values.get('instance_id')
    if instance_id is not None and (not isinstance(instance_id, str)
                                    or _CONTROL.search(instance_id)):
        raise exception.Invalid(
            reason='instance_id must be a string without control '
                   'characters (such as line breaks or tabs).')
    if values.get('overlap_policy') not in (None,) + enums.OverlapPolicy.ALL:
        raise exception.Invalid(
            reason='overlap_policy must be one of %s, not %r.' % (
                ', '.join(enums.OverlapPolicy.ALL), values['overlap_policy']))
    if 'backend' in values and values['backend'] not in loader.available():
        raise exception.Invalid(
            reason='unknown backend %r; this cloud offers %s.' % (
                values['backend'], ', '.join(loader.available())))
    for field in _POSITIVE + _NOT_NEGATIVE:
        value = values.get(field)
        if value is None:
            continue
        minimum = 1 if field in _POSITIVE else 0
        if isinstance(value, bool) or not isinstance(value, int) \
                or value < minimum:
            raise exception.Invalid(
                reason='%s must be a whole number of at least %d, not %r.'
                       % (field, minimum, value))
    params = values.get('backup_params')
    if params is not None and not isinstance(params, dict):
        raise exception.Invalid(reason='backup_params must be an object.')


def validate_schedule(conf, values, policy_id, now):
    """The policy's Schedule; raises InvalidSchedule with a clear reason."""
    return schedule.validate_schedule(
        values['schedule_type'], values['schedule'], values['timezone'],
        now=now, start_at=values.get('start_at'),
        end_at=values.get('end_at'), hash_key=policy_id,
        min_interval=conf.api.min_schedule_interval)


def _default_name(context, project_id, instance_id, policy_id):
    """``backup-<instance>``; with the policy's id when that is taken.

    Names are unique in a project, and an instance may have several
    policies.
    """
    # Cut to the column: a 255-character instance id makes a longer name.
    length = limits.max_length(models.BackupPolicy.__table__.c.name)
    name = ('backup-%s' % instance_id)[:length]
    if db_api.policy_named(context, project_id, name) is None:
        return name
    suffix = '-%s' % policy_id.split('-')[0]
    return name[:length - len(suffix)] + suffix


def create_policy(context, conf, values, now=None):
    """Validate and store a new policy; returns it.

    ``values`` holds :data:`USER_FIELDS` (``schedule`` and ``instance_id``
    at least), plus ``project_id`` and ``user_id`` when the caller acts
    for someone other than ``context``.  An interval schedule without
    ``start_at`` starts now.
    """
    now = now or timeutils.utcnow(True)
    values = dict(values)
    owner = {'project_id': values.pop('project_id', None)
             or context.project_id,
             'user_id': values.pop('user_id', None) or context.user_id,
             'trust_id': values.pop('trust_id', None)}
    enabled = values.pop('enabled', True)
    policy_id = values.pop('id', None) or uuidutils.generate_uuid()
    _check_fields(values)
    for field in ('schedule', 'instance_id'):
        if values.get(field) is None:
            raise exception.Invalid(reason='%s is required.' % field)
    if not owner['project_id']:
        raise exception.Invalid(reason='a policy belongs to a project; '
                                       'none was given.')
    values = dict(DEFAULTS, **values)
    values.setdefault('backend', access.default_backend(conf))
    _check_fields({'backend': values['backend']})
    access.check_backend(conf, context, types.SimpleNamespace(
        backend=values['backend'], project_id=owner['project_id'],
        instance_id=values['instance_id']))
    if values.get('name') is None:
        values['name'] = _default_name(context, owner['project_id'],
                                       values['instance_id'], policy_id)
    if values['schedule_type'] == schedule.INTERVAL:
        values.setdefault('start_at', now)
    sched = validate_schedule(conf, values, policy_id, now)
    values['resolved_schedule'] = schedule.resolve_hashed_fields(
        values['schedule_type'], values['schedule'], policy_id)
    # Before a trust is made: a refused create leaves nothing behind.
    limit = quota.check_policy_quota(context, conf, owner['project_id'])
    if (owner['trust_id'] is None
            and access.delegates(conf, context, values['backend'])):
        owner['trust_id'] = keystone.create_trust(
            conf, context, expires_at=values.get('end_at'))
    values.update(owner, id=policy_id, enabled=enabled,
                  next_execution_time=(sched.next_time(now) if enabled
                                       else None),
                  paused_reason=None if enabled else 'created paused')
    try:
        access.check_instance(conf, types.SimpleNamespace(**values))
        created = db_api.create_policy(context, values)
        quota.verify_policy_quota(context, owner['project_id'], limit,
                                  policy_id)
    except Exception:
        if owner['trust_id']:
            access.delete_trust(conf, context, owner['trust_id'],
                                values.get('project_id'),
                                values.get('user_id'))
        raise
    notifications.notify_policy(conf, context, 'create', created)
    return created


def next_runs(conf, policy, count, now=None):
    """The next ``count`` run times of a policy (a preview), in UTC."""
    now = now or timeutils.utcnow(True)
    count = max(0, min(count, conf.api.max_next_runs))
    # The resolved form is what the engine runs: a policy stored before
    # the H rule changed keeps the times it was resolved to.
    sched = schedule.parse_schedule(
        policy.schedule_type, policy.resolved_schedule or policy.schedule,
        policy.timezone, policy.start_at, policy.end_at, hash_key=policy.id)
    return schedule.next_times(sched, now, count)


def preview_schedule(conf, values, count, now=None):
    """The next run times a policy with this schedule would have.

    ``values`` holds ``schedule`` and optionally ``schedule_type``,
    ``timezone``, ``start_at`` and ``end_at``, validated as a creation
    would validate them.  Returns ``(times, example)``: ``example`` is
    True when the schedule has ``H`` fields, whose times depend on the id
    the policy will get, so that these are the times of one possible id.
    """
    now = now or timeutils.utcnow(True)
    values = dict(DEFAULTS, **values)
    if values['schedule_type'] == schedule.INTERVAL:
        values.setdefault('start_at', now)
    example = schedule.needs_hash_key(values['schedule_type'],
                                      values['schedule'])
    sched = validate_schedule(conf, values, uuidutils.generate_uuid(), now)
    count = max(0, min(count, conf.api.max_next_runs))
    return schedule.next_times(sched, now, count), example


def as_dict(policy):
    """A policy's visible fields, datetimes as aware datetimes."""
    return {field: getattr(policy, field) for field in VISIBLE_FIELDS}


def get_policy(context, policy_id):
    return db_api.get_policy(context, policy_id)


def list_policies(context, project_id=None, name=None, instance_id=None,
                  enabled=None, limit=None, marker=None):
    """Policies, oldest first, filtered by what is not None.

    ``project_id`` None lists every project's; ``marker`` is the ID of
    the last policy of the previous page.
    """
    return db_api.list_policies(
        context, project_id=project_id, name=name, instance_id=instance_id,
        enabled=enabled, limit=limit, marker=marker)


def delete_policies_for_instance(context, conf, instance_id, *, project_id,
                                 backend=None):
    """Disable, then delete, the policies of an instance; return their ids.

    For an instance that no longer exists (Trove deleted it): those of
    ``project_id`` (None: of every project -- the caller was authorized
    for that), and of ``backend`` only when given, since an instance id
    means nothing to another backend.  Disabling first stops new runs at
    once, even if a delete then fails.
    """
    found = [policy for policy in db_api.list_policies(
        context, project_id=project_id, instance_id=instance_id)
        if backend is None or policy.backend == backend]
    for policy in found:
        try:
            pause_policy(context, conf, policy,
                         'instance %s was deleted' % instance_id)
        except exception.PolicyNotFound:
            pass
    for policy in found:
        try:
            delete_policy(context, conf, policy)
        except exception.PolicyNotFound:
            # Deleted meanwhile, with its trust.
            pass
    if found:
        LOG.info('Deleted %d backup policies of deleted instance %s',
                 len(found), instance_id)
    return [policy.id for policy in found]


def _schedule_values(conf, policy, changes, now):
    """The columns a change of schedule fields sets, from ``policy``.

    ``policy`` is the row as it is now (locked): whether it is enabled,
    and its other schedule fields, decide the next run time.
    """
    if not any(field in changes for field in SCHEDULE_FIELDS):
        return {}
    merged = {field: getattr(policy, field) for field in USER_FIELDS}
    merged.update(changes)
    sched = validate_schedule(conf, merged, policy.id, now)
    values = {'resolved_schedule': schedule.resolve_hashed_fields(
        merged['schedule_type'], merged['schedule'], policy.id)}
    if policy.enabled:
        values['next_execution_time'] = sched.next_time(now)
        if values['next_execution_time'] is None:
            raise exception.Invalid(
                reason='the schedule has no run after now; pause the '
                       'policy or give it a later end_at.')
    return values


def update_policy(context, conf, policy, changes, now=None):
    """Change what a user may change; recompute the next run if needed.

    ``policy`` is an earlier read (what the caller was authorized on).
    What the change sets is decided from the row as it is now, under its
    lock, in one transaction: a concurrent pause, resume or delete is
    never undone by a decision made from a stale read.
    """
    changed = _update_policy(context, conf, policy, changes, now)
    notifications.notify_policy(conf, context, 'update', changed)
    return changed


def _update_policy(context, conf, policy, changes, given_now):
    now = given_now or timeutils.utcnow(True)
    _check_fields(changes)
    for field in ('schedule', 'instance_id', 'name', 'schedule_type',
                  'timezone', 'backend', 'overlap_policy'):
        if field in changes and changes[field] is None:
            raise exception.Invalid(reason='%s cannot be removed.' % field)
    # Fail early, before any trust is made or instance checked.
    _schedule_values(conf, policy, changes, now)
    moved = {field: changes[field] for field in ('instance_id', 'backend')
             if field in changes and changes[field] != getattr(policy, field)}
    new_trust = None
    if moved:
        target = types.SimpleNamespace(**{
            field: getattr(policy, field)
            for field in ('id', 'instance_id', 'backend', 'project_id',
                          'trust_id', 'backup_params')})
        target.__dict__.update(moved)
        access.check_backend(conf, context, target)
        if (target.trust_id is None
                and access.delegates(conf, context, target.backend)):
            # The policy moves to a backend that acts for its user.
            new_trust = target.trust_id = keystone.create_trust(
                conf, context, expires_at=changes.get('end_at',
                                                      policy.end_at))
    unused_trust = new_trust
    try:
        if moved:
            access.check_instance(conf, target)
        with db_api.writer_transaction(context):
            current = db_api.lock_policy(context, policy.id)
            # The time once the row is ours (see resume_policy).
            now = given_now or timeutils.utcnow(True)
            values = dict(changes)
            values.update(_schedule_values(conf, current, changes, now))
            if new_trust and current.trust_id is None:
                # The policy now acts through this user's trust: it is
                # theirs that is checked before the trust is deleted.
                values['trust_id'] = new_trust
                values['user_id'] = context.user_id
                unused_trust = None
            changed = db_api.update_policy(context, current.id, values)
    except Exception:
        if new_trust:
            access.delete_trust(conf, context, new_trust, policy.project_id,
                                context.user_id)
        raise
    if unused_trust:
        # A concurrent change gave the policy a trust already.
        access.delete_trust(conf, context, unused_trust, policy.project_id,
                            context.user_id)
    return changed


def pause_policy(context, conf, policy, reason=None):
    """Stop scheduling a policy; running backups go on.

    Decided from the row as it is now, under its lock.  Pausing a paused
    policy changes nothing, and notifies nothing.
    """
    with db_api.writer_transaction(context):
        current = db_api.lock_policy(context, policy.id)
        if not current.enabled:
            return current
        paused = db_api.update_policy(context, current.id, {
            'enabled': False, 'next_execution_time': None,
            'paused_reason': reason or 'paused by the user'})
    notifications.notify_policy(conf, context, 'pause', paused)
    return paused


def resume_policy(context, conf, policy, now=None):
    """Schedule a paused policy again, from now on (no backlog).

    Decided from the row as it is now, under its lock.  Resuming an
    enabled policy changes nothing, and notifies nothing.
    """
    with db_api.writer_transaction(context):
        current = db_api.lock_policy(context, policy.id)
        # The time is read once the row is ours: taken before a wait for
        # the lock, it could be older than a slot an engine ran meanwhile.
        now = now or timeutils.utcnow(True)
        if current.enabled:
            return current
        if current.remaining_runs == 0:
            raise exception.Invalid(
                reason='the policy has no runs remaining; set '
                       'remaining_runs higher, or to null for no limit, '
                       'before resuming it.')
        merged = {field: getattr(current, field) for field in USER_FIELDS}
        sched = validate_schedule(conf, merged, current.id, now)
        following = sched.next_time(now)
        if following is None:
            raise exception.Invalid(
                reason='the schedule has no run after now; change it '
                       'before resuming the policy.')
        resumed = db_api.update_policy(context, current.id, {
            'enabled': True, 'next_execution_time': following,
            'paused_reason': None})
    notifications.notify_policy(conf, context, 'resume', resumed)
    return resumed


def delete_policy(context, conf, policy):
    """Delete a policy and its trust; its executions stay as history.

    The trust deleted is the one the policy had when it was deleted.
    """
    deleted = db_api.delete_policy(context, policy.id)
    notifications.notify_policy(conf, context, 'delete', deleted)
    if deleted.trust_id:
        access.delete_trust(conf, context, deleted.trust_id,
                            deleted.project_id, deleted.user_id)


def run_policy(context, conf, policy, worker_api, now=None):
    """Take a backup now: a manual execution, subject to overlap rules.

    The execution is recorded DISPATCHED, and made the policy's last one,
    in one transaction; then it is cast to the workers, as the engine does
    with scheduled runs.  If the cast fails it goes back to PENDING and the
    engine's sweep sends it later: failing the request would only make the
    user start a second run.  Returns the execution as it is after the
    cast, which is also the payload of the ``backup_policy.run.end``
    notification.  Over the policy's manual-run rate
    (:mod:`dbaas_scheduler.objects.quota`) it raises RateLimitExceeded
    and records nothing.
    """
    now = now or timeutils.utcnow(True)
    limit = quota.check_manual_run_rate(context, conf, policy, now)
    with db_api.writer_transaction(context):
        execution = db_api.record_manual_run(context, {
            'policy_id': policy.id, 'project_id': policy.project_id,
            'instance_id': policy.instance_id, 'scheduled_at': now,
            'trigger': enums.ExecutionTrigger.MANUAL,
            'status': enums.ExecutionStatus.DISPATCHED, 'created_at': now,
            'dispatched_at': now})
        # Counted under the policy row's lock, which the insert took.
        quota.verify_manual_run_rate(context, policy, limit, execution.id,
                                     now)
    dispatch.dispatch(worker_api, context, [execution.id], 1, now)
    try:
        execution = db_api.get_execution(context, execution.id)
    except Exception as exc:
        LOG.warning('Execution %s of policy %s was recorded but could not '
                    'be read back: %s', execution.id, policy.id, exc)
    notifications.notify_run(conf, context, execution)
    return execution
