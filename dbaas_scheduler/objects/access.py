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
"""Whether and how the service may act on a policy's instance.

A policy names a backend and an instance; before a policy is stored (or
changed to another instance or backend) the backend must be one the cloud
offers (``[api] enabled_backends``) and the caller may use (its policy
rule), the instance id one the backend could name and, for ``local``, an
instance of the policy's project; then the backend is asked whether the
instance can be backed up, and behind Keystone the request's user delegates
to the service with a trust, which is deleted with the policy -- or queued
for the engines to delete when Keystone cannot be asked.
"""

from oslo_log import log as logging

from dbaas_scheduler.backends import base as backends_base
from dbaas_scheduler.backends import loader
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import trusts as db_trusts
from dbaas_scheduler import exception
from dbaas_scheduler import keystone
from dbaas_scheduler.policies import backend as backend_rules
from dbaas_scheduler import policy as policy_rules

LOG = logging.getLogger(__name__)


def default_backend(conf):
    """The backend of a policy created without one.

    ``[api] default_backend``; unset, ``trove`` in a cloud and ``local``
    without Keystone (``auth_strategy = noauth``), where nothing could
    authenticate to Trove.
    """
    if conf.api.default_backend:
        return conf.api.default_backend
    return 'local' if conf.auth_strategy == 'noauth' else 'trove'


def enabled_backends(conf):
    """The backends a policy may be given: ``[api] enabled_backends``.

    Unset, ``trove`` in a cloud and ``local`` without Keystone, like
    :func:`default_backend`: ``local`` and ``fake`` act with the
    operator's databases, not the tenant's.
    """
    if conf.api.enabled_backends is not None:
        return list(conf.api.enabled_backends)
    return ['local'] if conf.auth_strategy == 'noauth' else ['trove']


def _allowed(conf, context, rule, project_id):
    policy_rules.get_enforcer(conf)
    try:
        policy_rules.authorize(context, rule, {'project_id': project_id})
    except exception.Forbidden:
        return False
    return True


def check_backend_allowed(conf, context, backend, project_id):
    """Refuse a backend the caller may not give a policy of a project.

    One the cloud does not offer (400), or whose rule does not allow the
    caller in ``project_id`` (403).
    """
    enabled = enabled_backends(conf)
    if backend not in enabled:
        raise exception.BackendNotEnabled(
            backend=backend, enabled=', '.join(enabled) or 'none')
    rule = backend_rules.rule_name(backend)
    # A backend plugin without a rule of its own is governed by the
    # create rule alone, which the caller passed already.
    if (rule in policy_rules.get_enforcer(conf).registered_rules
            and not _allowed(conf, context, rule, project_id)):
        raise exception.BackendForbidden(backend=backend, action=rule)


def check_backend(conf, context, target):
    """Refuse a backend or instance the caller may not give a policy.

    ``target`` has the policy's ``backend``, ``project_id`` and
    ``instance_id``.  In this order: a backend the cloud does not offer
    (400), one whose rule ``dbaas_scheduler:backup_policy:backend:<name>``
    does not allow the caller (403), an instance id the backend could
    never name (400), and for ``local`` an instance that is not the
    project's (400, the same words whether or not it exists, so that no
    project learns the operator's instance names).
    """
    check_backend_allowed(conf, context, target.backend, target.project_id)
    reason = loader.get_backend(conf, target.backend).instance_id_error(
        target.instance_id)
    if reason:
        raise exception.InvalidInstanceId(backend=target.backend,
                                          reason=reason)
    if target.backend == 'local':
        owner = conf.local_backend.instance_projects.get(target.instance_id)
        if owner != target.project_id and not _allowed(
                conf, context, backend_rules.LOCAL_ANY_INSTANCE,
                target.project_id):
            raise exception.InvalidInstance(
                backend=target.backend, instance_id=target.instance_id,
                reason='it is not a local instance of project %s; the '
                       'service\'s operator gives local instances to '
                       'projects in [local_backend] instance_projects'
                       % target.project_id)


def delegates(conf, context, backend):
    """Whether a policy made by this request needs a Keystone trust.

    Only behind Keystone: a noauth request's token (if any) is nobody's.
    """
    return bool(context.auth_token and conf.auth_strategy != 'noauth'
                and loader.needs_trust(conf, backend))


def check_instance(conf, policy):
    """Ask the policy's backend whether its instance can be backed up.

    ``policy`` has the policy's ``id``, ``instance_id``, ``backend``,
    ``project_id``, ``trust_id`` and ``backup_params``.  An instance the
    backend does not know, or the project may not see, is refused, as is
    a backend that is not configured; the backend being unreachable is no
    verdict, and the policy is kept (the worker retries).
    """
    backend = loader.get_backend(conf, policy.backend)
    try:
        backend.check_instance(policy)
    except (backends_base.InstanceNotFound,
            backends_base.BackendForbidden) as exc:
        raise exception.InvalidInstance(
            backend=policy.backend, instance_id=policy.instance_id,
            reason=exc.kwargs.get('reason', str(exc)))
    except backends_base.BackendError as exc:
        LOG.warning('Could not check instance %(instance)s of policy '
                    '%(policy)s with the %(backend)s backend; keeping the '
                    'policy: %(error)s',
                    {'instance': policy.instance_id, 'policy': policy.id,
                     'backend': policy.backend, 'error': exc})


def delete_trust(conf, context, trust_id, project_id, user_id=None):
    """Delete a trust, or queue it for the engines to delete.

    Only a trust the service made (its trustee the service user, for
    ``project_id`` and from ``user_id`` when given): Keystone is asked
    first.  When Keystone cannot be asked now, the trust is recorded in
    the ``trust_deletion`` queue; engines try again until Keystone
    confirms, so that no trust outlives its policy for long.
    """
    reason = keystone.try_delete_trust(conf, context, trust_id,
                                       project_id=project_id,
                                       trustor_id=user_id)
    if reason is None:
        return True
    try:
        db_trusts.record(dbaas_context.get_admin_context(), trust_id,
                         project_id, reason)
        LOG.warning('Trust %s queued for deletion: the engines will try '
                    'again until Keystone confirms', trust_id)
    except Exception:
        LOG.exception('Could not queue trust %s for deletion; delete it '
                      'in Keystone by hand', trust_id)
    return False
