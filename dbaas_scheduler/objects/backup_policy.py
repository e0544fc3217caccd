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

from dbaas_scheduler.backends import base as backends_base
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import limits
from dbaas_scheduler.db import models
from dbaas_scheduler.db import protection as db_protection
from dbaas_scheduler.db import retention as db_retention
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler import dispatch
from dbaas_scheduler import enums
from dbaas_scheduler import exception
from dbaas_scheduler import keystone
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import access
from dbaas_scheduler.objects import protection as protection_obj
from dbaas_scheduler.objects import quota
from dbaas_scheduler import protection
from dbaas_scheduler import retention
from dbaas_scheduler import schedule
from dbaas_scheduler import timezones
from dbaas_scheduler import windows

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
    'keep_daily', 'keep_weekly', 'keep_monthly', 'max_age_days', 'rpo',
    'pause_after_failures', 'min_keep', 'start_window', 'completion_window',
    'exclusions', 'verify_every', 'verify_check', 'verify_schedule')

# What every interface shows of a policy.
VISIBLE_FIELDS = (
    'id', 'name', 'description', 'project_id', 'user_id', 'instance_id',
    'backend', 'backup_params', 'schedule_type', 'schedule', 'timezone',
    'start_at', 'end_at', 'remaining_runs', 'enabled', 'paused_reason',
    'overlap_policy', 'catchup_window', 'keep_last', 'keep_daily',
    'keep_weekly', 'keep_monthly', 'max_age_days', 'min_keep',
    'next_execution_time', 'last_execution_id', 'created_at', 'updated_at',
    'rpo', 'effective_rpo', 'pause_after_failures', 'consecutive_failures',
    'last_success_at', 'protected_until', 'protection',
    'protection_changed_at', 'start_window', 'completion_window',
    'exclusions', 'verify_every', 'verify_check', 'verify_schedule',
    'verify_next_at')

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
             'keep_monthly', 'pause_after_failures', 'verify_every')
_NOT_NEGATIVE = ('catchup_window', 'max_age_days', 'min_keep')

# C0 and C1 control characters and DEL: an instance id reaches log lines,
# and the default name built from it; a CR or LF there forges lines.
_CONTROL = re.compile('[\x00-\x1f\x7f-\x9f]')


def check_fields(values):
    """Refuse what no policy may have; normalizes ``exclusions``."""
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
    protection_obj.check_rpo(values.get('rpo'))
    check = values.get('verify_check')
    if check is not None and (not isinstance(check, dict)
                              or not isinstance(check.get('sql'), str)
                              or not check['sql'].strip()):
        raise exception.Invalid(
            reason='verify_check is {"sql": <a read-only query>, '
                   '"expected": <the first column of its first row>}.')
    params = values.get('backup_params')
    if params is not None and not isinstance(params, dict):
        raise exception.Invalid(reason='backup_params must be an object.')
    try:
        windows.validate_windows(values.get('start_window'),
                                 values.get('completion_window'))
    except ValueError as exc:
        raise exception.Invalid(reason=str(exc))
    if values.get('exclusions') is not None:
        values['exclusions'] = normalize_exclusions(values['exclusions'])


def check_verify_check(conf, backend, check):
    """Refuse a ``verify_check`` that ``backend`` cannot run.

    A Trove verification restores into a new instance the service has no
    database credentials on: a SQL check there would never run.
    """
    if check and not getattr(loader.get_backend(conf, backend),
                             'runs_sql_checks', True):
        raise exception.Invalid(
            reason='verify_check cannot be used with the %s backend: a '
                   'verification restores the backup into a new instance '
                   'whose database the service cannot log in to, so it '
                   'checks that the backup restores and the database '
                   'starts, but runs no SQL. Leave verify_check out (or '
                   'null).' % backend)


def normalize_exclusions(texts):
    """Exclusion texts in their canonical spelling; Invalid if unreadable.

    An empty list is stored as NULL (no exclusions).
    """
    try:
        parsed = windows.parse_exclusions(texts)
    except windows.InvalidExclusion as exc:
        raise exception.Invalid(reason=str(exc))
    return [exclusion.text for exclusion in parsed] or None


def validate_schedule(conf, values, policy_id, now):
    """The policy's Schedule; raises InvalidSchedule with a clear reason."""
    return schedule.validate_schedule(
        values['schedule_type'], values['schedule'], values['timezone'],
        now=now, start_at=values.get('start_at'),
        end_at=values.get('end_at'), hash_key=policy_id,
        min_interval=conf.api.min_schedule_interval)


def verify_values(conf, merged, policy_id, now):
    """The verification columns of a policy whose fields are ``merged``.

    ``verify_every`` and ``verify_schedule`` exclude each other (one
    policy, one rule for when to verify).  ``verify_schedule`` is a cron
    expression in the policy's time zone, no more frequent than a backup
    schedule may be; its next slot is ``verify_next_at``, whether the
    policy is paused or not (a paused policy's backups may still be
    verified).  Raises Invalid (400) with a clear reason.
    """
    expression = merged.get('verify_schedule')
    if expression is None:
        return {'verify_next_at': None}
    if merged.get('verify_every') is not None:
        raise exception.Invalid(
            reason='verify_every and verify_schedule exclude each other: '
                   'verify every Nth successful backup, or on a schedule; '
                   'set the other to null.')
    if not isinstance(expression, str) or not expression.strip():
        raise exception.Invalid(
            reason='verify_schedule must be a cron expression.')
    try:
        sched = schedule.validate_schedule(
            schedule.CRON, expression, merged.get('timezone') or 'UTC',
            now=now, hash_key=policy_id,
            min_interval=conf.api.min_schedule_interval)
    except exception.InvalidSchedule as exc:
        raise exception.Invalid(reason='verify_schedule: %s' % exc)
    return {'verify_next_at': sched.next_time(now)}


def default_name(context, project_id, instance_id, policy_id,
                 prefix='backup'):
    """``<prefix>-<instance>``; with the policy's id when that is taken.

    Names are unique in a project, and an instance may have several
    policies.
    """
    # Cut to the column: a 255-character instance id makes a longer name.
    length = limits.max_length(models.BackupPolicy.__table__.c.name)
    name = ('%s-%s' % (prefix, instance_id))[:length]
    if db_api.policy_named(context, project_id, name) is None:
        return name
    suffix = '-%s' % policy_id.split('-')[0]
    return name[:length - len(suffix)] + suffix


def create_policy(context, conf, values, now=None, enrolled=False):
    """Validate and store a new policy; returns it.

    ``values`` holds :data:`USER_FIELDS` (``schedule`` and ``instance_id``
    at least), plus ``project_id`` and ``user_id`` when the caller acts
    for someone other than ``context``, and ``paused_reason`` for one
    created paused.  An interval schedule without ``start_at`` starts
    now.  ``enrolled``: a policy template enrols the instance
    (:mod:`dbaas_scheduler.objects.template`); no trust is made, and
    neither the backend rule nor the instance is checked again: the
    template's author was allowed the backend, and the instance comes from
    Trove's announcement or the backend's own list.
    """
    now = now or timeutils.utcnow(True)
    values = dict(values)
    owner = {'project_id': values.pop('project_id', None)
             or context.project_id,
             'user_id': values.pop('user_id', None) or context.user_id,
             'trust_id': values.pop('trust_id', None)}
    enabled = values.pop('enabled', True)
    paused_reason = values.pop('paused_reason', None) or 'created paused'
    policy_id = values.pop('id', None) or uuidutils.generate_uuid()
    check_fields(values)
    for field in ('schedule', 'instance_id'):
        if values.get(field) is None:
            raise exception.Invalid(reason='%s is required.' % field)
    if not owner['project_id']:
        raise exception.Invalid(reason='a policy belongs to a project; '
                                       'none was given.')
    values = dict(DEFAULTS, **values)
    values.setdefault('backend', access.default_backend(conf))
    check_fields({'backend': values['backend']})
    if not enrolled:
        access.check_backend(conf, context, types.SimpleNamespace(
            backend=values['backend'], project_id=owner['project_id'],
            instance_id=values['instance_id']))
        check_verify_check(conf, values['backend'],
                           values.get('verify_check'))
    if values.get('name') is None:
        values['name'] = default_name(context, owner['project_id'],
                                      values['instance_id'], policy_id)
    if values['schedule_type'] == schedule.INTERVAL:
        values.setdefault('start_at', now)
    sched = validate_schedule(conf, values, policy_id, now)
    values['resolved_schedule'] = schedule.resolve_hashed_fields(
        values['schedule_type'], values['schedule'], policy_id)
    values.update(verify_values(conf, values, policy_id, now))
    # Before a trust is made: a refused create leaves nothing behind.
    limit = quota.check_policy_quota(context, conf, owner['project_id'])
    if (owner['trust_id'] is None and not enrolled
            and access.delegates(conf, context, values['backend'])):
        owner['trust_id'] = keystone.create_trust(
            conf, context, expires_at=values.get('end_at'))
    values.update(owner, id=policy_id, enabled=enabled,
                  next_execution_time=(sched.next_time(now) if enabled
                                       else None),
                  paused_reason=None if enabled else paused_reason)
    values.update(_initial_protection(values, sched, now))
    try:
        if not enrolled:
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


def _initial_protection(values, sched, now):
    """The protection columns of a new policy: counted from ``now``."""
    rpo, daily_runs = protection_obj.schedule_figures(values.get('rpo'),
                                                      sched, now)
    until = protection.protected_until(None, now, rpo)
    evaluation = protection.evaluate(now, until, rpo,
                                     values['next_execution_time'])
    return {'created_at': now, 'effective_rpo': rpo,
            'daily_runs': daily_runs, 'protected_until': until,
            'protection': evaluation.state,
            'protection_check_at': evaluation.check_at,
            'protection_changed_at': now if evaluation.state else None,
            'consecutive_failures': 0}


def _refreshed(context, conf, policy_id, now):
    """Recompute the effective RPO and the state of a changed policy.

    In the writer transaction that changed it; returns ``(the policy as
    it is now, the protection Transition or None)``.
    """
    current = db_api.lock_policy(context, policy_id)
    merged = {field: getattr(current, field) for field in USER_FIELDS}
    try:
        sched = validate_schedule(conf, merged, current.id, now)
    except exception.InvalidSchedule:
        # A schedule that has run out of slots keeps its RPO.
        sched = None
    if sched is not None:
        rpo, daily_runs = protection_obj.schedule_figures(current.rpo,
                                                          sched, now)
        if (rpo, daily_runs) != (current.effective_rpo, current.daily_runs):
            db_api.update_policy(context, current.id,
                                 {'effective_rpo': rpo,
                                  'daily_runs': daily_runs})
    if (current.verify_every is None and current.verify_schedule is None
            and current.verify_failing):
        # Verification turned off: its last failure holds nothing now.
        db_api.update_policy(context, current.id, {'verify_failing': False})
    transition = db_protection.refresh(context, current.id, now)
    return db_api.lock_policy(context, current.id), transition


def _announce(conf, context, transition):
    if transition is not None:
        LOG.info('Policy %s: protection %s -> %s', transition.id,
                 transition.previous_protection, transition.protection)
        notifications.notify_protection(conf, context, transition)


def _stored_schedule(policy):
    """The schedule the engine runs for a stored policy; None if broken."""
    # The resolved form is what the engine runs: a policy stored before
    # the H rule changed keeps the times it was resolved to.
    try:
        return schedule.parse_schedule(
            policy.schedule_type,
            policy.resolved_schedule or policy.schedule, policy.timezone,
            policy.start_at, policy.end_at, hash_key=policy.id)
    except exception.InvalidSchedule:
        return None


def next_runs(conf, policy, count, now=None):
    """The next ``count`` run times of a policy (a preview), in UTC."""
    now = now or timeutils.utcnow(True)
    count = max(0, min(count, conf.api.max_next_runs))
    sched = schedule.parse_schedule(
        policy.schedule_type, policy.resolved_schedule or policy.schedule,
        policy.timezone, policy.start_at, policy.end_at, hash_key=policy.id)
    return schedule.next_times(sched, now, count)


def rpo_coverage(conf, policy, count, now=None):
    """The RPO coverage of the policy's next ``count`` slots (a preview).

    See :func:`dbaas_scheduler.objects.protection.rpo_coverage`.
    """
    now = now or timeutils.utcnow(True)
    count = max(0, min(count, conf.api.max_next_runs))
    sched = schedule.parse_schedule(
        policy.schedule_type, policy.resolved_schedule or policy.schedule,
        policy.timezone, policy.start_at, policy.end_at, hash_key=policy.id)
    return protection_obj.rpo_coverage(policy, sched, count, now)


def slot_preview(sched, start_window, completion_window, exclusions, now,
                 count):
    """The next ``count`` slots of a schedule, with windows and exclusions.

    One dict per slot: ``scheduled_at``, ``start_window_ends_at``,
    ``completion_window_ends_at`` and ``excluded`` (the exclusion window it
    falls in, as text, or None: it is then recorded SKIPPED with the reason
    ``excluded``, and not moved).  The windows are the policy's, or those
    derived from its schedule (``dbaas_scheduler/windows.py``).
    """
    parsed = windows.parse_exclusions(exclusions)
    slots = []
    times = schedule.next_times(sched, now, count + 1)
    for index, slot in enumerate(times[:count]):
        following = times[index + 1] if index + 1 < len(times) else None
        interval = (None if following is None
                    else (following - slot).total_seconds())
        start, completion = windows.slot_deadlines(
            start_window, completion_window, None, slot, interval=interval)
        excluded = windows.excluded_by(parsed, slot, sched.zone)
        slots.append({
            'scheduled_at': slot,
            'start_window_ends_at': None if excluded else start,
            'completion_window_ends_at': None if excluded else completion,
            'excluded': excluded.text if excluded else None})
    return slots


def lifecycle(conf, policy, count, now=None):
    """What lies ahead of a policy: ``{'slots': [...]}`` (see slot_preview).

    ``count`` is bounded by ``[api] max_next_runs``.
    """
    now = now or timeutils.utcnow(True)
    count = max(0, min(count, conf.api.max_next_runs))
    sched = _stored_schedule(policy)
    if sched is None:
        return {'slots': []}
    try:
        slots = slot_preview(sched, policy.start_window,
                             policy.completion_window, policy.exclusions,
                             now, count)
    except windows.InvalidExclusion as exc:
        LOG.warning('Policy %s: its exclusions are ignored: %s', policy.id,
                    exc)
        slots = slot_preview(sched, policy.start_window,
                             policy.completion_window, None, now, count)
    return {'slots': slots}


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


def preview_lifecycle(conf, values, count, now=None):
    """:func:`preview_schedule` with the draft's windows and exclusions.

    ``values`` may also hold ``start_window``, ``completion_window`` and
    ``exclusions`` (a list of texts), validated as a creation would.
    Returns ``(times, example, slots)``, ``slots`` as
    :func:`slot_preview` gives them.
    """
    now = now or timeutils.utcnow(True)
    values = dict(values)
    drafted = {field: values.pop(field, None)
               for field in ('start_window', 'completion_window',
                             'exclusions')}
    check_fields({field: value for field, value in drafted.items()
                  if value is not None})
    values = dict(DEFAULTS, **values)
    if values['schedule_type'] == schedule.INTERVAL:
        values.setdefault('start_at', now)
    example = schedule.needs_hash_key(values['schedule_type'],
                                      values['schedule'])
    # One id for both: hashed H fields give the same times in each.
    sched = validate_schedule(conf, values, uuidutils.generate_uuid(), now)
    count = max(0, min(count, conf.api.max_next_runs))
    slots = slot_preview(sched, drafted['start_window'],
                         drafted['completion_window'],
                         drafted['exclusions'], now, count)
    return [slot['scheduled_at'] for slot in slots], example, slots


def as_dict(policy):
    """A policy's visible fields, datetimes as aware datetimes."""
    fields = {field: getattr(policy, field, None) for field in VISIBLE_FIELDS}
    fields['consecutive_failures'] = fields['consecutive_failures'] or 0
    # A JSON dict column reads NULL back as {}: no check.
    fields['verify_check'] = fields['verify_check'] or None
    return fields


def get_policy(context, policy_id):
    return db_api.get_policy(context, policy_id)


def list_policies(context, project_id=None, name=None, instance_id=None,
                  enabled=None, limit=None, marker=None, protection=None):
    """Policies, oldest first, filtered by what is not None.

    ``project_id`` None lists every project's; ``marker`` is the ID of
    the last policy of the previous page.
    """
    return db_api.list_policies(
        context, project_id=project_id, name=name, instance_id=instance_id,
        enabled=enabled, limit=limit, marker=marker, protection=protection)


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


def _verify_schedule_values(conf, policy, changes, now):
    """The columns a change of the verification fields sets."""
    if not any(field in changes for field in
               ('verify_schedule', 'verify_every', 'timezone')):
        return {}
    merged = {field: getattr(policy, field, None) for field in
              ('verify_schedule', 'verify_every', 'timezone')}
    merged.update(changes)
    if (merged['verify_schedule'] == getattr(policy, 'verify_schedule', None)
            and 'timezone' not in changes
            and merged['verify_every'] is None):
        # The slot already recorded stays (a change of verify_check, or
        # verify_every set to null again, does not move it).
        return {}
    return verify_values(conf, merged, policy.id, now)


def _check_merged_windows(policy, changes):
    """The windows the policy would have after ``changes`` agree."""
    merged = {field: changes.get(field, getattr(policy, field, None))
              for field in ('start_window', 'completion_window')}
    try:
        windows.validate_windows(merged['start_window'],
                                 merged['completion_window'])
    except ValueError as exc:
        raise exception.Invalid(reason=str(exc))


def update_policy(context, conf, policy, changes, now=None):
    """Change what a user may change; recompute the next run if needed.

    ``policy`` is an earlier read (what the caller was authorized on).
    What the change sets is decided from the row as it is now, under its
    lock, in one transaction: a concurrent pause, resume or delete is
    never undone by a decision made from a stale read.
    """
    changed, transition = _update_policy(context, conf, policy, changes, now)
    notifications.notify_policy(conf, context, 'update', changed)
    _announce(conf, context, transition)
    return changed


def _update_policy(context, conf, policy, changes, given_now):
    now = given_now or timeutils.utcnow(True)
    check_fields(changes)
    for field in ('schedule', 'instance_id', 'name', 'schedule_type',
                  'timezone', 'backend', 'overlap_policy'):
        if field in changes and changes[field] is None:
            raise exception.Invalid(reason='%s cannot be removed.' % field)
    # Fail early, before any trust is made or instance checked.
    _schedule_values(conf, policy, changes, now)
    _verify_schedule_values(conf, policy, changes, now)
    _check_merged_windows(policy, changes)
    if 'verify_check' in changes or 'backend' in changes:
        check_verify_check(
            conf, changes.get('backend') or policy.backend,
            changes.get('verify_check', policy.verify_check))
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
        changed, transition, trust_used = _write_update(
            context, conf, policy.id, changes, new_trust, given_now)
        if trust_used:
            unused_trust = None
    except Exception:
        if new_trust:
            access.delete_trust(conf, context, new_trust, policy.project_id,
                                context.user_id)
        raise
    if unused_trust:
        # A concurrent change gave the policy a trust already.
        access.delete_trust(conf, context, unused_trust, policy.project_id,
                            context.user_id)
    return changed, transition


def pause_policy(context, conf, policy, reason=None):
    """Stop scheduling a policy; running backups go on.

    Decided from the row as it is now, under its lock.  Pausing a paused
    policy changes nothing, and notifies nothing.
    """
    paused, transition = _pause_policy(context, conf, policy.id, reason)
    if transition is False:
        return paused
    notifications.notify_policy(conf, context, 'pause', paused)
    _announce(conf, context, transition)
    return paused


# The policy's writes below change columns the engine's tick writes too,
# under the indexes both use: on MariaDB the two can deadlock.  The loser
# is retried whole (a new transaction, the row read again), as the tick's
# own statements are, rather than answered with a 409.
@db_api.retry_on_deadlock
def _pause_policy(context, conf, policy_id, reason):
    """``(the policy, its Transition or False if it was paused)``."""
    with db_api.writer_transaction(context):
        current = db_api.lock_policy(context, policy_id)
        if not current.enabled:
            return current, False
        db_api.update_policy(context, current.id, {
            'enabled': False, 'next_execution_time': None,
            'paused_reason': reason or 'paused by the user'})
        return _refreshed(context, conf, current.id, timeutils.utcnow(True))


def _adoption_trust(conf, context, policy):
    """The trust a member makes by resuming a policy that has none.

    A policy a template made (:mod:`dbaas_scheduler.objects.template`)
    waits paused without a trust until a member of its project resumes
    it: that member's trust is then made, and the policy acts for them.
    None when the policy has a trust, or the backend needs none.
    """
    if (policy.enabled or policy.trust_id
            or not access.delegates(conf, context, policy.backend)):
        return None
    if context.project_id != policy.project_id:
        raise exception.Invalid(
            reason='the policy has no Keystone trust yet: a member of '
                   'project %s must resume it, with a token of that '
                   'project, so that the service acts with their trust.'
                   % policy.project_id)
    return keystone.create_trust(conf, context, expires_at=policy.end_at)


def resume_policy(context, conf, policy, now=None):
    """Schedule a paused policy again, from now on (no backlog).

    Decided from the row as it is now, under its lock.  Resuming an
    enabled policy changes nothing, and notifies nothing.  A policy
    without a trust whose backend needs one is adopted: the trust of the
    member who resumes it is made (:func:`_adoption_trust`).
    """
    new_trust = _adoption_trust(conf, context, policy)
    try:
        resumed, transition, used = _resume_policy(context, conf, policy,
                                                   new_trust, now)
    except Exception:
        if new_trust:
            access.delete_trust(conf, context, new_trust, policy.project_id,
                                context.user_id)
        raise
    if new_trust and not used:
        access.delete_trust(conf, context, new_trust, policy.project_id,
                            context.user_id)
    if transition is not False:
        notifications.notify_policy(conf, context, 'resume', resumed)
        _announce(conf, context, transition)
    return resumed


@db_api.retry_on_deadlock
def _resume_policy(context, conf, policy, new_trust, now):
    """``(the policy, its Transition or False if unchanged, trust used)``."""
    with db_api.writer_transaction(context):
        current = db_api.lock_policy(context, policy.id)
        # The time is read once the row is ours: taken before a wait for
        # the lock, it could be older than a slot an engine ran meanwhile.
        now = now or timeutils.utcnow(True)
        if current.enabled:
            return current, False, False
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
        # Resuming clears the streak that paused it (pause_after_failures).
        values = {'enabled': True, 'next_execution_time': following,
                  'paused_reason': None, 'consecutive_failures': 0}
        used = bool(new_trust and current.trust_id is None)
        if used:
            values.update(trust_id=new_trust, user_id=context.user_id)
        db_api.update_policy(context, current.id, values)
        resumed, transition = _refreshed(context, conf, current.id, now)
    return resumed, transition, used


@db_api.retry_on_deadlock
def _write_update(context, conf, policy_id, changes, new_trust, given_now):
    """``(the policy, its Transition, whether it took new_trust)``."""
    with db_api.writer_transaction(context):
        current = db_api.lock_policy(context, policy_id)
        # The time once the row is ours (see resume_policy).
        now = given_now or timeutils.utcnow(True)
        values = dict(changes)
        values.update(_schedule_values(conf, current, changes, now))
        values.update(_verify_schedule_values(conf, current, changes, now))
        _check_merged_windows(current, changes)
        used = bool(new_trust and current.trust_id is None)
        if used:
            # The policy now acts through this user's trust: it is
            # theirs that is checked before the trust is deleted.
            values['trust_id'] = new_trust
            values['user_id'] = context.user_id
        db_api.update_policy(context, current.id, values)
        changed, transition = _refreshed(context, conf, current.id, now)
    return changed, transition, used


def delete_policy(context, conf, policy, delete_backups=False):
    """Delete a policy and its trust; its executions stay as history.

    The trust deleted is the one the policy had when it was deleted.  Its
    backups stay too, unless ``delete_backups``: then they are deleted
    first (:func:`delete_policy_backups`), held ones excepted.
    """
    if delete_backups:
        delete_policy_backups(context, conf, policy)
    deleted = db_api.delete_policy(context, policy.id)
    notifications.notify_policy(conf, context, 'delete', deleted)
    if deleted.trust_id:
        access.delete_trust(conf, context, deleted.trust_id,
                            deleted.project_id, deleted.user_id)


def delete_policy_backups(context, conf, policy, now=None):
    """Delete a policy's backups before the policy (and its trust) go.

    Held backups stay, and so does whatever a backup that stays is built
    on (``retention.plan_policy_deletion``).  Each delete is claimed by
    the compare-and-set retention uses (a hold arriving meanwhile wins)
    and recorded once, on the execution that made the backup, with the
    reason ``policy deleted``.  A backend that cannot list or delete
    raises ServiceUnavailable before the policy is deleted: the request
    can be repeated, and deletes only what is left.  Returns the ids
    deleted.
    """
    now = now or timeutils.utcnow(True)
    backend = loader.get_backend(conf, policy.backend)
    try:
        backups = backend.list_backups(policy)
    except backends_base.BackendError as exc:
        raise exception.ServiceUnavailable(
            reason='the %s backend could not list the backups of instance '
                   '%s, so the policy was not deleted: %s' % (
                       policy.backend, policy.instance_id, exc))
    records = db_retention.list_instance_backups(
        context, policy.project_id, policy.instance_id)
    owners = {backup_id: record.policy_id
              for backup_id, record in records.items()}
    held = {backup_id for backup_id, record in records.items()
            if record.held_at is not None}
    delete, cascade = retention.plan_policy_deletion(
        backups, policy.id, owners, held)
    by_id = {backup.id: backup for backup in backups}
    done = []
    for backup in delete:
        db_retention.mark_expiring(context, policy.id, [backup.id], now)
        if not db_retention.claim_deletion(context, policy.id, backup.id,
                                           now):
            continue
        try:
            backend.delete_backup(policy, backup.id)
        except backends_base.BackupNotFound:
            pass
        except backends_base.BackendError as exc:
            db_retention.undo_claim(context, policy.id, backup.id)
            raise exception.ServiceUnavailable(
                reason='the %s backend could not delete backup %s, so the '
                       'policy was not deleted: %s' % (
                           policy.backend, backup.id, exc))
        gone = [backup.id] + sorted(child for child, parent
                                    in cascade.items()
                                    if parent == backup.id)
        recorded = db_retention.record_deletion(
            context, policy.project_id, policy.instance_id, gone)
        for backup_id in recorded:
            created_at = by_id[backup_id].created_at
            entry = {'id': backup_id, 'reason': 'policy deleted',
                     'deleted_at': now.isoformat(),
                     'created_at': created_at and created_at.isoformat()}
            if backup_id != backup.id:
                entry['with'] = backup.id
            db_worker.record_deleted_backups(
                context, records[backup_id].execution_id, [entry])
        done.extend(recorded)
    LOG.info('Policy %s: %d of its backups deleted with it (%d held '
             'backups of the instance stay)', policy.id, len(done),
             len(held))
    return done


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
    start_deadline, completion_deadline = windows.manual_deadlines(
        policy.start_window, policy.completion_window,
        _stored_schedule(policy), now)
    with db_api.writer_transaction(context):
        execution = db_api.record_manual_run(context, {
            'policy_id': policy.id, 'project_id': policy.project_id,
            'instance_id': policy.instance_id, 'scheduled_at': now,
            'trigger': enums.ExecutionTrigger.MANUAL,
            'status': enums.ExecutionStatus.DISPATCHED, 'created_at': now,
            'dispatched_at': now, 'start_deadline': start_deadline,
            'completion_deadline': completion_deadline})
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
