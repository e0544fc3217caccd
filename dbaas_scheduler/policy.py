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
"""Authorizing API requests with oslo.policy: the enforcer and one check.

The rules (:mod:`dbaas_scheduler.policies`) carry new secure-RBAC defaults
and their legacy ones as deprecated rules.  ``[oslo_policy]
enforce_new_defaults`` defaults to False here (oslo.policy's own default
is True): a deployment keeps the behaviour it had until its operator
flips it, as nova and placement did.
"""

import threading

from oslo_config import cfg
from oslo_policy import opts as policy_opts
from oslo_policy import policy as oslo_policy

from dbaas_scheduler import exception
from dbaas_scheduler import policies

_ENFORCER = None
_LOCK = threading.Lock()


def set_defaults(conf):
    """Register ``[oslo_policy]`` with this service's defaults."""
    policy_opts.set_defaults(conf, enforce_new_defaults=False)


def get_enforcer(conf=None):
    """The process's enforcer (also the ``oslo.policy.enforcer`` hook)."""
    global _ENFORCER
    with _LOCK:
        if _ENFORCER is None:
            conf = conf or cfg.CONF
            set_defaults(conf)
            _ENFORCER = oslo_policy.Enforcer(conf)
            _ENFORCER.register_defaults(policies.list_rules())
        return _ENFORCER


def reset():
    global _ENFORCER
    with _LOCK:
        _ENFORCER = None


def authorize(context, rule, target):
    """Raise Forbidden unless ``context`` may do ``rule`` on ``target``."""
    if target.get('project_id', '') is None:
        # oslo.policy compares text: "project_id:%(project_id)s" would
        # match a system-scoped token (no project) to "None".
        target = dict(target, project_id='')
    try:
        get_enforcer().authorize(rule, target, context, do_raise=True)
    except oslo_policy.PolicyNotAuthorized:
        raise exception.Forbidden(action=rule)
    except oslo_policy.InvalidScope:
        raise exception.Forbidden(action=rule)


def authorize_list(context, rule, all_projects_rule, all_projects):
    """Authorize a list request; return the project it lists.

    ``None`` means every project: ``all_projects`` was asked for, or the
    token is system-scoped (it has no project), and ``all_projects_rule``
    allows it.
    """
    target = {'project_id': context.project_id}
    authorize(context, rule, target)
    if all_projects or context.system_scope:
        authorize(context, all_projects_rule, target)
        return None
    return context.project_id


def authorize_owned(context, rule, resource, not_found, show_rule=None):
    """Authorize ``rule`` on a resource of a project, or hide it.

    ``resource`` has a ``project_id``.  When the rule refuses a resource
    of another project, ``not_found`` (the NotFound the resource's
    absence raises) is raised instead of Forbidden: the API does not say
    what other projects have -- unless ``show_rule`` lets the caller see
    it (a system reader): then Forbidden, as in the caller's own project.
    """
    target = {'project_id': resource.project_id}
    try:
        authorize(context, rule, target)
    except exception.Forbidden:
        if (resource.project_id != context.project_id
                and not (show_rule and _allows(context, show_rule,
                                               target))):
            raise not_found
        raise


def _allows(context, rule, target):
    try:
        authorize(context, rule, target)
    except exception.Forbidden:
        return False
    return True
