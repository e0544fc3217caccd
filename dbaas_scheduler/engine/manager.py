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
Endpoints are thin: each checks what it is sent with the REST API's JSON
schemas, authorizes the caller's context with the REST API's policy rules
(:mod:`dbaas_scheduler.policies`), calls one domain function of
:mod:`dbaas_scheduler.objects.backup_policy` and returns plain dicts.

The context is what the caller declares: oslo.messaging authenticates
nobody, so only services may be able to write to the topic (see the
admin guide's "Security model").  A service acting for a user passes that
user's context; the policy's project and user are the context's.
"""

import oslo_messaging as messaging

from dbaas_scheduler.api.schemas import backup_policy as schema
from dbaas_scheduler.api.schemas import validation
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.policies import backup_policy as rules
from dbaas_scheduler.policies import rpc as rpc_rules
from dbaas_scheduler import policy

# The arguments that name an instance or a project, checked as the REST
# API checks its query parameters.
_FILTERS = {'type': 'object', 'properties': {
    'instance_id': dict(schema.LIST_QUERY['instance_id'],
                        type=['string', 'null']),
    'project_id': {'type': ['string', 'null'], 'minLength': 1,
                   'maxLength': 255},
    'all_projects': {'type': 'boolean'}}}


def _as_message(policy):
    body = backup_policy_obj.as_dict(policy)
    return {name: value.isoformat() if hasattr(value, 'isoformat') else value
            for name, value in body.items()}


def _authorize(context, rule, project_id):
    """Authorize ``rule`` on ``project_id``.

    A caller without a project (an empty context) is refused whatever the
    rule says.
    """
    if not context.project_id:
        raise exception.Forbidden(action=rule)
    policy.authorize(context, rule, {'project_id': project_id})


def _project(context, rule, other_rule, project_id, all_projects):
    """The project a call on many policies covers (None: every project).

    The caller's own by default; another one, or every one, needs
    ``other_rule`` (a service or an administrator).
    """
    validation.validate({'project_id': project_id,
                         'all_projects': all_projects}, _FILTERS)
    if all_projects:
        _authorize(context, other_rule, None)
        return None
    project_id = project_id or context.project_id
    if project_id != context.project_id:
        _authorize(context, other_rule, project_id)
    else:
        _authorize(context, rule, project_id)
    return project_id


def _load(context, policy_id, rule):
    """The policy, if the caller may ``rule`` it.

    Another project's policy is a PolicyNotFound, as over REST.
    """
    if not isinstance(policy_id, str):
        raise exception.PolicyNotFound(policy_id=policy_id)
    found = backup_policy_obj.get_policy(context, policy_id)
    try:
        _authorize(context, rule, found.project_id)
    except exception.Forbidden:
        if found.project_id != context.project_id:
            raise exception.PolicyNotFound(policy_id=policy_id)
        raise
    return found


class EngineManager:
    """Version history: see ``rpcapi.EngineAPI``."""

    RPC_API_VERSION = '1.1'

    target = messaging.Target(version=RPC_API_VERSION)

    def __init__(self, conf):
        self.conf = conf
        # The rules of the engine's configuration (its policy file).
        policy.get_enforcer(conf)

    @messaging.expected_exceptions(exception.Invalid, exception.Forbidden,
                                   exception.ServiceUnavailable)
    def create_policy(self, context, values):
        validation.validate({'backup_policy': values}, schema.CREATE)
        _authorize(context, rules.CREATE, context.project_id)
        return _as_message(backup_policy_obj.create_policy(
            context, self.conf, backup_policy_obj.parse_times(values)))

    @messaging.expected_exceptions(exception.Invalid, exception.NotFound,
                                   exception.Forbidden,
                                   exception.ServiceUnavailable)
    def update_policy(self, context, policy_id, changes):
        validation.validate({'backup_policy': changes}, schema.UPDATE)
        policy = _load(context, policy_id, rules.UPDATE)
        return _as_message(backup_policy_obj.update_policy(
            context, self.conf, policy,
            backup_policy_obj.parse_times(changes)))

    @messaging.expected_exceptions(exception.NotFound, exception.Forbidden)
    def delete_policy(self, context, policy_id):
        backup_policy_obj.delete_policy(
            context, self.conf, _load(context, policy_id, rules.DELETE))

    @messaging.expected_exceptions(exception.Invalid, exception.Forbidden)
    def list_policies(self, context, project_id=None, instance_id=None,
                      all_projects=False):
        validation.validate({'instance_id': instance_id}, _FILTERS)
        project_id = _project(context, rules.LIST,
                              rpc_rules.LIST_OTHER_PROJECT, project_id,
                              all_projects)
        return [_as_message(policy) for policy in db_api.list_policies(
            context, project_id=project_id, instance_id=instance_id)]

    @messaging.expected_exceptions(exception.Invalid, exception.Forbidden)
    def delete_policies_for_instance(self, context, instance_id,
                                     project_id=None, all_projects=False):
        validation.validate({'instance_id': instance_id}, _FILTERS)
        if instance_id is None:
            raise exception.Invalid(reason='instance_id is required.')
        project_id = _project(
            context, rules.DELETE,
            rpc_rules.DELETE_FOR_INSTANCE_OTHER_PROJECT, project_id,
            all_projects)
        return backup_policy_obj.delete_policies_for_instance(
            context, self.conf, instance_id, project_id=project_id)
