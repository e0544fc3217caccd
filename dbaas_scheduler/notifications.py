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
"""Notifications: execution state changes on the oslo.messaging Notifier.

Event types ``dbaas_scheduler.execution.{succeeded,failed,skipped}``,
published as ``dbaas-scheduler.<host>`` to the topics and with the driver of
``[oslo_messaging_notifications]`` (no driver, the default, sends nothing).
"""

import threading

from oslo_log import log as logging
import oslo_messaging as messaging

LOG = logging.getLogger(__name__)

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


def execution_payload(execution, **changes):
    payload = {name: getattr(execution, name) for name in (
        'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
        'trigger', 'status', 'status_reason', 'attempts', 'backup_id',
        'started_at', 'finished_at', 'fault')}
    payload.update(changes)
    return {key: value.isoformat() if hasattr(value, 'isoformat') else value
            for key, value in payload.items()}


def notify_execution(conf, context, event, payload):
    """Send ``dbaas_scheduler.execution.<event>``; never raises."""
    try:
        _notifier(conf).info(context, 'dbaas_scheduler.execution.%s' % event,
                             payload)
    except Exception:
        LOG.exception('Could not send the %s notification of execution %s',
                      event, payload.get('id'))
