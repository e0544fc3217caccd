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
"""Policy rules of the backends: who may give a policy which backend.

Checked when a policy is created with a backend, or changed to one, on top
of ``[api] enabled_backends`` (what the cloud offers at all).  ``local``
backs up databases the service host reaches with the operator's
credentials, and ``fake`` backs up nothing: both are the operator's, and
admin-only by default; ``trove`` acts in the user's own project, through
the user's own trust, so whoever may create a policy may use it.
"""

from dbaas_scheduler.policies import backup_policy
from dbaas_scheduler.policies import base

PREFIX = 'dbaas_scheduler:backup_policy:backend:%s'
# Any local instance, not only those [local_backend] instance_projects
# gives the policy's project.
LOCAL_ANY_INSTANCE = PREFIX % 'local:any_instance'

_OPERATIONS = [('POST', '/v1/backup-policies'),
               ('PATCH', '/v1/backup-policies/{policy_id}')]


def rule_name(backend):
    """The rule that says who may use ``backend``."""
    return PREFIX % backend


def _rule(backend, check_str, description):
    # The same under the new defaults: a policy is made in a project, and
    # which backends the cloud offers at all is [api] enabled_backends.
    return base.rule(rule_name(backend), check_str, check_str, description,
                     _OPERATIONS, base.PROJECT)


rules = [
    _rule('trove', 'rule:%s' % backup_policy.CREATE,
          'Give a backup policy the trove backend (backups of the '
          'project\'s own Trove instances, made with the user\'s trust).'),
    _rule('local', base.ADMIN,
          'Give a backup policy the local backend: dumps, made on the '
          'service host, of the databases the operator lists in '
          '[local_backend] instances. A project that owns a local instance '
          '(name:url:project in that option) still needs this rule.'),
    base.rule(LOCAL_ANY_INSTANCE, base.ADMIN, base.ADMIN,
              'Give a backup policy any local instance, not only those '
              '[local_backend] instance_projects gives its project.',
              _OPERATIONS, base.PROJECT),
    _rule('fake', base.ADMIN,
          'Give a backup policy the fake backend (no backup at all: for '
          'tests and benchmarks of the service).'),
]


def list_rules():
    return rules
