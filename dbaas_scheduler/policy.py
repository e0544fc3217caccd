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
"""Authorizing API requests with oslo.policy: the enforcer and one check."""

import threading

from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

from dbaas_scheduler import exception
from dbaas_scheduler import policies

_ENFORCER = None
_LOCK = threading.Lock()


def get_enforcer(conf=None):
    """The process's enforcer (also the ``oslo.policy.enforcer`` hook)."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is None:
            conf = conf or cfg.CONF
            policy_opts.set_defaults(conf)
            _ENFORCER = oslo_policy.Enforcer(conf)
            _ENFORCER.register_defaults(policies.list_rules())
        return _ENFORCER


def reset():
    global _ENFORCER
    with _LOCK:
        _ENFORCER = None


def authorize(context, rule, target):
    """Raise Forbidden unless ``context`` may do ``rule`` on ``target``."""
    try:
        get_enforcer().authorize(rule, target, context, do_raise=True)
    except oslo_policy.PolicyNotAuthorized:
        raise exception.Forbidden(action=rule)
    except oslo_policy.InvalidScope:
        raise exception.Forbidden(action=rule)


def authorize_list(context, rule, all_projects_rule, all_projects):
    """Authorize a list request; return the project it lists.

    ``None`` means every project: ``all_projects`` was asked for and
    ``all_projects_rule`` allows it.
    """
    target = {'project_id': context.project_id}
    authorize(context, rule, target)
    if all_projects:
        authorize(context, all_projects_rule, target)
        return None
    return context.project_id


def authorize_owned(context, rule, resource, not_found):
    """Authorize ``rule`` on a resource of a project, or hide it.

    ``resource`` has a ``project_id``.  When the rule refuses a resource
    of another project, ``not_found`` (the NotFound the resource's
    absence raises) is raised instead of Forbidden: the API does not say
    what other projects have.  In the caller's own project, Forbidden.
    """
    try:
        authorize(context, rule, {'project_id': resource.project_id})
    except exception.Forbidden:
        if resource.project_id != context.project_id:
            raise not_found
        raise
