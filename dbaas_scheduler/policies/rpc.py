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
"""Policy rules of the engine's RPC API that the REST API has no match for.

Each RPC method is first authorized by the REST rule of the same
operation (``dbaas_scheduler:backup_policy:*``) on the caller's context;
these rules are what only the RPC door offers: acting across projects.
"""

from oslo_policy import policy

from dbaas_scheduler.policies import base

SERVICE_OR_ADMIN = 'rule:service_or_admin'

PREFIX = 'dbaas_scheduler:rpc:%s'
LIST_OTHER_PROJECT = PREFIX % 'list_policies:other_project'
DELETE_FOR_INSTANCE_OTHER_PROJECT = (
    PREFIX % 'delete_policies_for_instance:other_project')

_TOPIC = 'RPC topic [engine] topic'


def _rule(name, description, method):
    # The same under the new defaults: a service calls with the
    # project-scoped token of its service user.
    return base.rule(name, SERVICE_OR_ADMIN, SERVICE_OR_ADMIN, description,
                     [('RPC', '%s: %s' % (_TOPIC, method))], base.PROJECT)


rules = [
    policy.RuleDefault(
        'service_or_admin', 'role:service or role:admin',
        description='Another OpenStack service (its service user holds the '
                    'service role), or an administrator of the cloud.'),
    _rule(LIST_OTHER_PROJECT,
          'List the backup policies of another project than the '
          "caller's, or of every project, over RPC.",
          'list_policies'),
    _rule(DELETE_FOR_INSTANCE_OTHER_PROJECT,
          'Delete the backup policies of an instance in another project '
          "than the caller's, or in every project, over RPC.",
          'delete_policies_for_instance'),
]


def list_rules():
    return rules
