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
"""Notifications: policy changes and finished executions, for others.

Sent on the oslo.messaging Notifier as ``dbaas-scheduler.<host>``, to the
topics and with the driver of ``[oslo_messaging_notifications]`` (no
driver, the default, sends nothing).  Two formats
(``[notifications] notification_format``):

* versioned: ``backup_policy.<action>.end`` and
  ``backup_execution.<status>``, each payload wrapped with its schema's
  name, namespace and version (:class:`Payload`), the way nova's
  versioned notifications are;
* unversioned (the legacy format of the first release):
  ``dbaas_scheduler.execution.<status>`` with the execution's fields as
  the bare payload.

Every event and its payload is in doc/source/admin/notifications.rst, with
a sample in doc/notification_samples/.  Nothing here raises: a
notification that cannot be sent is logged, and whatever sent it goes on.
"""

import threading

from oslo_log import log as logging
import oslo_messaging as messaging

LOG = logging.getLogger(__name__)

NAMESPACE = 'dbaas_scheduler'

VERSIONED = 'versioned'
UNVERSIONED = 'unversioned'
BOTH = 'both'
FORMATS = (VERSIONED, UNVERSIONED, BOTH)

_NOTIFIER = None
_LOCK = threading.Lock()


def _notifier(conf):
    global _NOTIFIER
    with _LOCK:
        if _NOTIFIER is None:
            transport = messaging.get_notification_transport(conf)
            _NOTIFIER = messaging.Notifier(
                transport, publisher_id='dbaas-scheduler.%s' % conf.host)
        return _NOTIFIER


def reset():
    global _NOTIFIER
    with _LOCK:
        _NOTIFIER = None


def _primitive(value):
    return value.isoformat() if hasattr(value, 'isoformat') else value


class Payload:
    """A payload schema: its name, its version and its fields.

    The version is ``major.minor``: a new field raises the minor version
    (consumers that ignore unknown keys go on working), a removed or
    changed field the major one.  A field the object does not have is
    sent as null, so that every payload of a version has the same keys.
    """

    NAME = None
    VERSION = None
    FIELDS = ()

    def __init__(self, source=None, **changes):
        self.data = {field: getattr(source, field, None)
                     for field in self.FIELDS}
        self.data.update(changes)

    @classmethod
    def from_dict(cls, values):
        payload = cls()
        payload.data.update(
            {field: values.get(field) for field in cls.FIELDS})
        return payload

    def as_primitive(self):
        key = NAMESPACE + '_object.'
        return {key + 'name': self.NAME,
                key + 'namespace': NAMESPACE,
                key + 'version': self.VERSION,
                key + 'data': {field: _primitive(self.data.get(field))
                               for field in self.FIELDS}}


class BackupPolicyPayload(Payload):
    """A policy as every interface shows it (never its trust)."""

    NAME = 'BackupPolicyPayload'
    # 1.1: rpo, effective_rpo, pause_after_failures, consecutive_failures,
    # last_success_at, protected_until, protection, protection_changed_at,
    # min_keep, start_window, completion_window, exclusions.
    # 1.2: verify_every, verify_check.
    # 1.3: verify_schedule, verify_next_at.
    VERSION = '1.3'
    FIELDS = (
        'id', 'name', 'description', 'project_id', 'user_id',
        'instance_id', 'backend', 'backup_params', 'schedule_type',
        'schedule', 'timezone', 'start_at', 'end_at', 'remaining_runs',
        'enabled', 'paused_reason', 'overlap_policy', 'catchup_window',
        'keep_last', 'keep_daily', 'keep_weekly', 'keep_monthly',
        'max_age_days', 'min_keep', 'next_execution_time', 'last_execution_id',
        'created_at', 'updated_at', 'rpo', 'effective_rpo',
        'pause_after_failures', 'consecutive_failures', 'last_success_at',
        'protected_until', 'protection', 'protection_changed_at',
        'start_window', 'completion_window', 'exclusions', 'verify_every',
        'verify_check', 'verify_schedule', 'verify_next_at')


class BackupProtectionPayload(Payload):
    """A policy's protection state changed: from what, to what, why."""

    NAME = 'BackupProtectionPayload'
    VERSION = '1.0'
    FIELDS = (
        'id', 'name', 'project_id', 'instance_id', 'protection',
        'previous_protection', 'changed_at', 'last_success_at',
        'protected_until', 'effective_rpo', 'consecutive_failures',
        'next_execution_time')


class BackupExecutionPayload(Payload):
    """An execution: one run of a policy, and its outcome so far."""

    NAME = 'BackupExecutionPayload'
    # 1.1: start_deadline, completion_deadline (issue 24).
    VERSION = '1.1'
    FIELDS = (
        'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
        'trigger', 'status', 'status_reason', 'attempts', 'backup_id',
        'started_at', 'finished_at', 'fault', 'start_deadline',
        'completion_deadline')


class BackupVerificationPayload(Payload):
    """A scheduled verification of an execution's backup ended."""

    NAME = 'BackupVerificationPayload'
    VERSION = '1.0'
    FIELDS = (
        'id', 'execution_id', 'policy_id', 'project_id', 'instance_id',
        'backend', 'backup_id', 'result', 'reason', 'verified_at',
        'duration')


# Every versioned event: its type -> (priority, payload schema).
POLICY_ACTIONS = ('create', 'update', 'delete', 'pause', 'resume')
EXECUTION_EVENTS = ('succeeded', 'failed', 'skipped', 'expired')
# backup_execution.verify.<result>: how a verification ended.
VERIFY_RESULTS = ('passed', 'failed')
# backup_policy.protection.<state>: the state a policy entered.
PROTECTION_STATES = ('ok', 'at_risk', 'breached')
EVENTS = dict(
    [('backup_policy.%s.end' % action, BackupPolicyPayload)
     for action in POLICY_ACTIONS]
    + [('backup_policy.run.end', BackupExecutionPayload)]
    + [('backup_policy.protection.%s' % state, BackupProtectionPayload)
       for state in PROTECTION_STATES]
    + [('backup_execution.%s' % event, BackupExecutionPayload)
       for event in EXECUTION_EVENTS]
    + [('backup_execution.verify.%s' % result, BackupVerificationPayload)
       for result in VERIFY_RESULTS])

# The unversioned (legacy) events, with the bare fields as payload.
LEGACY_EVENTS = tuple('dbaas_scheduler.execution.%s' % event
                      for event in EXECUTION_EVENTS)


def _format(conf):
    try:
        return conf.notifications.notification_format
    except Exception:
        return BOTH


def _send(conf, context, event_type, payload, what, priority='info'):
    try:
        notifier = _notifier(conf)
        if not notifier.is_enabled():
            return
        # oslo.messaging sends a redacted copy of the context: no token.
        getattr(notifier, priority)(context, event_type, payload)
    except Exception:
        LOG.exception('Could not send the %s notification of %s',
                      event_type, what)


def notify(conf, context, event_type, payload):
    """Send the versioned event ``event_type``; never raises.

    ``payload`` is a :class:`Payload` of the schema :data:`EVENTS` gives
    ``event_type``.
    """
    if _format(conf) == UNVERSIONED:
        return
    if not isinstance(payload, EVENTS.get(event_type, ())):
        LOG.error('Not sent: %s does not carry a %s', event_type,
                  type(payload).__name__)
        return
    _send(conf, context, event_type, payload.as_primitive(),
          payload.data.get('id'))


def notify_policy(conf, context, action, policy):
    """Send ``backup_policy.<action>.end`` for ``policy``; never raises."""
    try:
        payload = BackupPolicyPayload(policy)
    except Exception:
        LOG.exception('Could not describe policy %s for its %s '
                      'notification', getattr(policy, 'id', None), action)
        return
    notify(conf, context, 'backup_policy.%s.end' % action, payload)


def notify_run(conf, context, execution):
    """Send ``backup_policy.run.end`` for a manual run; never raises."""
    try:
        payload = BackupExecutionPayload(execution)
    except Exception:
        LOG.exception('Could not describe execution %s for its '
                      'notification', getattr(execution, 'id', None))
        return
    notify(conf, context, 'backup_policy.run.end', payload)


def notify_protection(conf, context, transition):
    """Send ``backup_policy.protection.<state>``; never raises.

    ``transition`` has the fields of :class:`BackupProtectionPayload`
    (``db_protection.Transition``).  A transition to no state (the
    policy's RPO was removed) is not announced.
    """
    state = getattr(transition, 'protection', None)
    if state not in PROTECTION_STATES or _format(conf) == UNVERSIONED:
        return
    try:
        payload = BackupProtectionPayload(transition)
    except Exception:
        LOG.exception('Could not describe the protection of policy %s',
                      getattr(transition, 'id', None))
        return
    # A warning and a breach have the WARN priority, a recovery INFO.
    _send(conf, context, 'backup_policy.protection.%s' % state,
          payload.as_primitive(), transition.id,
          priority='info' if state == 'ok' else 'warn')


def notify_verification(conf, context, restore, result, reason,
                        verified_at, duration):
    """Send ``backup_execution.verify.<result>``; never raises.

    A failed verification has the WARN priority.
    """
    if _format(conf) == UNVERSIONED:
        return
    try:
        payload = BackupVerificationPayload(
            restore, result=result, reason=reason, verified_at=verified_at,
            duration=duration)
    except Exception:
        LOG.exception('Could not describe verification %s',
                      getattr(restore, 'id', None))
        return
    _send(conf, context, 'backup_execution.verify.%s' % result,
          payload.as_primitive(), restore.id,
          priority='info' if result == 'passed' else 'warn')


def execution_payload(execution, **changes):
    """The fields of an execution, with ``changes``, JSON-ready."""
    payload = {name: changes[name] if name in changes
               else getattr(execution, name)
               for name in BackupExecutionPayload.FIELDS}
    payload.update(changes)
    return {key: _primitive(value) for key, value in payload.items()}


def notify_execution(conf, context, event, payload):
    """Send that an execution finished; never raises.

    ``event`` is one of :data:`EXECUTION_EVENTS`, ``payload`` what
    :func:`execution_payload` returns: sent as
    ``backup_execution.<event>`` (versioned) and/or
    ``dbaas_scheduler.execution.<event>`` (unversioned), as
    ``[notifications] notification_format`` says.
    """
    what = 'execution %s' % payload.get('id')
    notification_format = _format(conf)
    if notification_format in (UNVERSIONED, BOTH):
        _send(conf, context, 'dbaas_scheduler.execution.%s' % event,
              payload, what)
    if notification_format in (VERSIONED, BOTH):
        _send(conf, context, 'backup_execution.%s' % event,
              BackupExecutionPayload.from_dict(payload).as_primitive(),
              what)


def announce_outcome(conf, context, policy_id, outcome, read_policy):
    """What recording an outcome changed on the policy: a pause, a state.

    ``outcome`` is the ``db_protection.Outcome`` its transaction
    returned (it committed): each is announced once, by its recorder.
    ``read_policy(context, policy_id)`` reads the policy a pause names.
    """
    if outcome.paused_reason:
        LOG.warning('Policy %s paused: %s', policy_id, outcome.paused_reason)
        try:
            policy = read_policy(context, policy_id)
        except Exception:
            LOG.exception('Policy %s: could not read it to announce its '
                          'pause', policy_id)
        else:
            notify_policy(conf, context, 'pause', policy)
    if outcome.transition is not None:
        transition = outcome.transition
        LOG.info('Policy %s: protection %s -> %s (protected until %s)',
                 transition.id, transition.previous_protection,
                 transition.protection, transition.protected_until)
        notify_protection(conf, context, transition)
