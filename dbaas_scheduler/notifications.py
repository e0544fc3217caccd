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
    VERSION = '1.0'
    FIELDS = (
        'id', 'name', 'description', 'project_id', 'user_id',
        'instance_id', 'backend', 'backup_params', 'schedule_type',
        'schedule', 'timezone', 'start_at', 'end_at', 'remaining_runs',
        'enabled', 'paused_reason', 'overlap_policy', 'catchup_window',
        'keep_last', 'keep_daily', 'keep_weekly', 'keep_monthly',
        'max_age_days', 'next_execution_time', 'last_execution_id',
        'created_at', 'updated_at')


class BackupExecutionPayload(Payload):
    """An execution: one run of a policy, and its outcome so far."""

    NAME = 'BackupExecutionPayload'
    VERSION = '1.0'
    FIELDS = (
        'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
        'trigger', 'status', 'status_reason', 'attempts', 'backup_id',
        'started_at', 'finished_at', 'fault')


# Every versioned event: its type -> (priority, payload schema).
POLICY_ACTIONS = ('create', 'update', 'delete', 'pause', 'resume')
EXECUTION_EVENTS = ('succeeded', 'failed', 'skipped')
EVENTS = dict(
    [('backup_policy.%s.end' % action, BackupPolicyPayload)
     for action in POLICY_ACTIONS]
    + [('backup_policy.run.end', BackupExecutionPayload)]
    + [('backup_execution.%s' % event, BackupExecutionPayload)
       for event in EXECUTION_EVENTS])

# The unversioned (legacy) events, with the bare fields as payload.
LEGACY_EVENTS = tuple('dbaas_scheduler.execution.%s' % event
                      for event in EXECUTION_EVENTS)


def _format(conf):
    try:
        return conf.notifications.notification_format
    except Exception:
        return BOTH


def _send(conf, context, event_type, payload, what):
    try:
        notifier = _notifier(conf)
        if not notifier.is_enabled():
            return
        # oslo.messaging sends a redacted copy of the context: no token.
        notifier.info(context, event_type, payload)
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


def execution_payload(execution, **changes):
    """The fields of an execution, with ``changes``, JSON-ready."""
    payload = {name: getattr(execution, name)
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
