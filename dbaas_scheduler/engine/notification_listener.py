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
"""Listening to Trove: new instances are enrolled, deleted ones let go.

When ``[engine] trove_notifications`` is on, engines consume Trove's
notifications (exchange ``[engine] trove_notification_exchange``, topics
``[engine] trove_notification_topics``, one pool shared by the engines,
so that each notification is handled by one engine).  From a publisher
of ``[engine] trove_notification_publishers``:

- ``trove.instance.create`` (what Trove's taskmanager sends once the
  instance is ACTIVE; ``trove.instance.create.end`` is taken too): the
  project's ``trove`` policy
  templates enrol the instance (:mod:`dbaas_scheduler.objects.template`),
  once, however often the notification comes;
- ``trove.instance.delete``: the ``trove`` policies of that instance in
  the payload's project (``tenant_id``) are disabled, then deleted.
  Their executions stay as history.

Nothing authenticates a publisher: only Trove may write to the exchange
(the admin guide's "Security model"); these checks keep a mistake or a
forged message to one project's Trove policies of one instance -- and a
forged creation makes paused policies without credentials.
"""

import fnmatch
import time

from oslo_log import log as logging
import oslo_messaging as messaging

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import template as template_obj

LOG = logging.getLogger(__name__)

# The backend whose instances Trove's notifications are about.
BACKEND = 'trove'


def pool_name(conf):
    """The engines' notification pool, which names its queue on the broker.

    Never the engine's RPC topic: the RPC server's queue is named after the
    topic, and a listener whose pool had the same name would share that
    queue, each consumer receiving some of the other's messages.
    """
    return '%s-trove-notifications' % conf.engine.topic


def trusted_publisher(conf, publisher_id):
    """Whether a publisher is one of trove_notification_publishers."""
    return isinstance(publisher_id, str) and any(
        fnmatch.fnmatchcase(publisher_id, pattern)
        for pattern in conf.engine.trove_notification_publishers)


# Trove 26 sends trove.instance.create (TroveInstanceCreate, once the
# instance is ACTIVE), never trove.instance.create.end.
CREATED = ('trove.instance.create', 'trove.instance.create.end')

# Seconds a notification waits before it goes back to its queue while the
# database is unreachable: redelivered, not lost, and not in a tight loop.
REQUEUE_DELAY = 2


class TroveNotificationEndpoint:
    """Handles ``trove.instance.create[.end]`` and ``trove.instance.delete``.

    Other notifications are ignored.
    """

    filter_rule = messaging.NotificationFilter(
        event_type=r'^trove\.instance\.(delete|create)(\.end)?$')

    def __init__(self, conf):
        self.conf = conf

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        try:
            return self._handle(publisher_id, event_type, payload)
        except db_api.UNREACHABLE as exc:
            # Enrolment and deletion are idempotent: the notification comes
            # again once the database answers.
            LOG.warning('%s from %s put back in its queue: the database is '
                        'unreachable (%s)', event_type, publisher_id, exc)
            time.sleep(REQUEUE_DELAY)
            return messaging.NotificationResult.REQUEUE
        # Anything else would fail again: oslo.messaging logs it and drops
        # the notification.

    def _handle(self, publisher_id, event_type, payload):
        if not trusted_publisher(self.conf, publisher_id):
            LOG.warning('%s from publisher %r ignored: not one of [engine] '
                        'trove_notification_publishers (%s)', event_type,
                        publisher_id, ', '.join(
                            self.conf.engine.trove_notification_publishers))
            return messaging.NotificationResult.HANDLED
        payload = payload if isinstance(payload, dict) else {}
        instance_id = payload.get('instance_id')
        project_id = payload.get('tenant_id')
        for name, value in (('instance_id', instance_id),
                            ('tenant_id', project_id)):
            if not value or not isinstance(value, str):
                LOG.warning('%s from %s without a %s: ignored', event_type,
                            publisher_id, name)
                return messaging.NotificationResult.HANDLED
        if event_type in CREATED:
            made = template_obj.enrol_new_instance(
                dbaas_context.get_admin_context(), self.conf, project_id,
                instance_id, BACKEND)
            LOG.info('Trove created instance %s of project %s: %d backup '
                     'policies made from its templates', instance_id,
                     project_id, len(made))
            return messaging.NotificationResult.HANDLED
        deleted = backup_policy_obj.delete_policies_for_instance(
            dbaas_context.get_admin_context(), self.conf, instance_id,
            project_id=project_id, backend=BACKEND)
        LOG.info('Trove deleted instance %s of project %s: %d backup '
                 'policies deleted', instance_id, project_id, len(deleted))
        return messaging.NotificationResult.HANDLED


def get_listener(conf):
    """A started-on-demand notification listener, or None if disabled."""
    if not conf.engine.trove_notifications:
        return None
    transport = messaging.get_notification_transport(conf)
    exchange = conf.engine.trove_notification_exchange
    targets = [messaging.Target(topic=topic, exchange=exchange)
               for topic in conf.engine.trove_notification_topics]
    return messaging.get_notification_listener(
        transport, targets, [TroveNotificationEndpoint(conf)],
        executor='threading', pool=pool_name(conf), allow_requeue=True)
