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
"""The engine's RPC endpoint: the RPC API for other services.

Other OpenStack services (Trove above all) manage backup policies over
oslo.messaging on the topic ``[engine] topic``.  The client side is
``dbaas_scheduler.rpcapi.EngineAPI``; the versions must stay equal.
Endpoints are thin: each calls one domain function of
:mod:`dbaas_scheduler.objects.backup_policy` and returns plain dicts.
"""

import oslo_messaging as messaging

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj


def _as_message(policy):
    body = backup_policy_obj.as_dict(policy)
    return {name: value.isoformat() if hasattr(value, 'isoformat') else value
            for name, value in body.items()}


class EngineManager:
    """Version history: see ``rpcapi.EngineAPI``."""

    RPC_API_VERSION = '1.0'

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, conf):
        self.conf = conf

    @messaging.expected_exceptions(exception.Invalid,
                                   exception.ServiceUnavailable)
    def create_policy(self, context, values):
        return _as_message(backup_policy_obj.create_policy(
            context, self.conf, backup_policy_obj.parse_times(values)))

    @messaging.expected_exceptions(exception.Invalid, exception.NotFound)
    def update_policy(self, context, policy_id, changes):
        policy = backup_policy_obj.get_policy(context, policy_id)
        return _as_message(backup_policy_obj.update_policy(
            context, self.conf, policy,
            backup_policy_obj.parse_times(changes)))

    @messaging.expected_exceptions(exception.NotFound)
    def delete_policy(self, context, policy_id):
        backup_policy_obj.delete_policy(
            context, self.conf,
            backup_policy_obj.get_policy(context, policy_id))

    def list_policies(self, context, project_id=None, instance_id=None):
        return [_as_message(policy) for policy in db_api.list_policies(
            context, project_id=project_id, instance_id=instance_id)]

    def delete_policies_for_instance(self, context, instance_id):
        return backup_policy_obj.delete_policies_for_instance(
            context, self.conf, instance_id)
