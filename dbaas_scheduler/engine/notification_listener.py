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
"""Listening to Trove: policies of deleted instances go too.

When ``[engine] trove_notifications`` is on, engines consume Trove's
notifications (exchange ``[engine] trove_notification_exchange``, topics
``[engine] trove_notification_topics``, one pool shared by the engines,
so that each notification is handled by one engine) and, on
``trove.instance.delete``, disable and then delete the instance's backup
policies.  Their executions stay as history.
"""

from oslo_log import log as logging
import oslo_messaging as messaging

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.objects import backup_policy as backup_policy_obj

LOG = logging.getLogger(__name__)


def pool_name(conf):
    """The engines' notification pool, which names its queue on the broker.

    Never the engine's RPC topic: the RPC server's queue is named after the
    topic, and a listener whose pool had the same name would share that
    queue, each consumer receiving some of the other's messages.
    """
    return '%s-trove-notifications' % conf.engine.topic


class TroveNotificationEndpoint:
    """Handles ``trove.instance.delete``; other notifications are ignored."""

    filter_rule = messaging.NotificationFilter(
        event_type=r'^trove\.instance\.delete(\.end)?$')

    def __init__(self, conf):
        self.conf = conf

    def info(self, ctxt, publisher_id, event_type, payload, metadata):
        instance_id = (payload or {}).get('instance_id')
        if not instance_id:
            LOG.warning('%s from %s without an instance_id: ignored',
                        event_type, publisher_id)
            return messaging.NotificationResult.HANDLED
        deleted = backup_policy_obj.delete_policies_for_instance(
            dbaas_context.get_admin_context(), self.conf, instance_id)
        LOG.info('Trove deleted instance %s: %d backup policies deleted',
                 instance_id, len(deleted))
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
        executor='threading', pool=pool_name(conf))
