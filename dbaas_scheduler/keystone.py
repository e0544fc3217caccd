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
"""Keystone trusts: the worker acts in a user's project on their behalf.

Creating a policy creates a trust from the requesting user (trustor) to
the service user of ``[service_credentials]`` (trustee), for the policy's
project and the roles of ``[api] trust_roles``, with impersonation, so that
Trove sees the user's project (and user).  The worker then authenticates
as the service user scoped to that trust; deleting the policy deletes the
trust.  Tokens and passwords are never logged.

Keystone refusing a trust (a 4xx answer: the user lacks a role to
delegate, say) is a :class:`TrustError`, which the REST API answers 400;
Keystone that cannot be reached or fails (connection errors, timeouts,
5xx) is :class:`~dbaas_scheduler.exception.KeystoneUnavailable`, answered
503: the same request may succeed later.
"""

import datetime
import threading

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1.identity import v3
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from oslo_log import log as logging

from dbaas_scheduler.conf import service_credentials
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

GROUP = service_credentials.GROUP
_IDENTITY = {'service_type': 'identity', 'interface': 'public',
             'version': (3, 0)}
# Scope options of the service user's own credentials, cleared when the
# same credentials are scoped to a trust instead.
_SCOPE_OPTIONS = ('project_id', 'project_name', 'project_domain_id',
                  'project_domain_name', 'domain_id', 'domain_name',
                  'system_scope')

# Keystone being down, overloaded or unreachable, rather than refusing the
# request: the same request may well succeed later.
_UNAVAILABLE = (ks_exc.ConnectionError, ks_exc.HttpServerError,
                ks_exc.RequestTimeout)

_NOT_CREATED = ('The backup policy was not created: the backup service '
                'could not create the Keystone trust it needs to act for '
                'you.')

_service_session = None
_lock = threading.Lock()


# In dbaas_scheduler.exception, so that it crosses the RPC API as itself.
TrustError = exception.TrustError


def who_must_act(conf):
    """Who can fix the service's own configuration, for a user to read.

    Behind Keystone the user is a tenant of a cloud; without it
    (``auth_strategy = noauth``: dbaas-scheduler-all on one machine) the
    user runs the service and is its operator.
    """
    if conf.auth_strategy == 'noauth':
        return ('This service runs without Keystone (auth_strategy = '
                'noauth), so you are its operator: change its configuration '
                'file and restart it, or use the local backend.')
    return ('This is a problem of the cloud, not of your request: tell its '
            'operators.')


def service_session(conf):
    """A session authenticated as the service user (cached)."""
    global _service_session
    with _lock:
        if _service_session is None:
            auth = ks_loading.load_auth_from_conf_options(conf, GROUP)
            _service_session = ks_loading.load_session_from_conf_options(
                conf, GROUP, auth=auth)
        return _service_session


def reset():
    global _service_session
    with _lock:
        _service_session = None


def trust_auth(conf, trust_id):
    """The service user's auth plugin, scoped to ``trust_id``."""
    overrides = {name: None for name in _SCOPE_OPTIONS}
    return ks_loading.load_auth_from_conf_options(
        conf, GROUP, trust_id=trust_id, **overrides)


def user_auth(conf, context):
    """An auth plugin of the request's own token, in its project."""
    return v3.Token(auth_url=conf[GROUP].auth_url, token=context.auth_token,
                    project_id=context.project_id)


def _user_session(conf, context):
    return ks_session.Session(auth=user_auth(conf, context),
                              verify=service_session(conf).verify)


def _keystone_unavailable(context, exc):
    # Nothing was stored yet: no policy is left without its trust.
    LOG.warning('Could not create a trust for user %s in project %s: '
                'Keystone is unavailable: %s', context.user_id,
                context.project_id, _reason(exc))
    return exception.KeystoneUnavailable(consequence=_NOT_CREATED,
                                         reason=_reason(exc))


def create_trust(conf, context, expires_at=None):
    """Create a trust from the requesting user to the service user.

    It expires at ``expires_at`` (an aware datetime: the policy's
    ``end_at``), or never.
    """
    roles = list(conf.api.trust_roles)
    try:
        trustee = service_session(conf).get_user_id()
    except _UNAVAILABLE as exc:
        raise _keystone_unavailable(context, exc)
    except ks_exc.ClientException as exc:
        # A 401 to the service user's own password, say: not the user's
        # doing, and no 400 telling them to change their request.
        LOG.error('Keystone refuses the service user of '
                  '[service_credentials]: %s', _reason(exc))
        raise exception.ServiceCredentialsRefused(
            who=who_must_act(conf), consequence=_NOT_CREATED,
            reason=_reason(exc))
    trust = {'trustor_user_id': context.user_id,
             'trustee_user_id': trustee,
             'project_id': context.project_id,
             # Trove and Swift then see the user who made the policy act,
             # not the service user: their records, notifications and any
             # rule on the user name the user (see doc/source/admin/
             # security.rst, "The service user").
             'impersonation': True,
             'roles': [{'name': role} for role in roles]}
    if expires_at is not None:
        trust['expires_at'] = expires_at.astimezone(
            datetime.timezone.utc).strftime('%Y-%m-%dT%H:%M:%S.%fZ')
    try:
        response = _user_session(conf, context).post(
            '/OS-TRUST/trusts', endpoint_filter=_IDENTITY,
            json={'trust': trust})
    except _UNAVAILABLE as exc:
        raise _keystone_unavailable(context, exc)
    except ks_exc.ClientException as exc:
        raise TrustError(roles=', '.join(roles),
                         project_id=context.project_id,
                         reason=_reason(exc))
    trust_id = response.json()['trust']['id']
    LOG.info('Created trust %s from user %s to the service user in project '
             '%s', trust_id, context.user_id, context.project_id)
    return trust_id


def delete_trust(conf, context, trust_id, project_id=None, trustor_id=None):
    """Delete a trust the service made; one already gone is no error.

    The trustor's token can delete it; without one (another service asked
    over RPC) the service user tries, which Keystone allows to admins.
    Returns True once Keystone confirmed, or the trust is not one the
    service may delete; False if Keystone could not be asked (see
    :func:`try_delete_trust`).
    """
    return try_delete_trust(conf, context, trust_id, project_id,
                            trustor_id) is None


def _not_ours(conf, trust_id, project_id, trustor_id):
    """Why the trust is not one the service made for that policy, or None.

    Asked of Keystone as the service user, which may read the trusts
    delegated to it: a trust that delegates to another user (an id
    planted in a policy) is never deleted by the service, whatever the
    row says.  Raises ``NotFound`` for a trust that is already gone.
    """
    try:
        trust = service_session(conf).get(
            '/OS-TRUST/trusts/%s' % trust_id,
            endpoint_filter=_IDENTITY).json()['trust']
    except ks_exc.Forbidden:
        return 'the service user may not read it, so it is not its trustee'
    if trust.get('trustee_user_id') != service_session(conf).get_user_id():
        return 'its trustee is not the service user'
    if project_id and trust.get('project_id') != project_id:
        return 'it is for project %s, not %s' % (trust.get('project_id'),
                                                 project_id)
    if trustor_id and trust.get('trustor_user_id') != trustor_id:
        return 'its trustor is not the user of the policy'
    return None


def try_delete_trust(conf, context, trust_id, project_id=None,
                     trustor_id=None):
    """Delete a trust: None once Keystone confirmed, else the reason why not.

    As :func:`delete_trust`.  A trust that the service did not make for
    ``project_id`` and ``trustor_id`` (when given) is left as it is, with
    a WARNING, and None is returned: there is nothing the service may do.
    """
    sessions = [service_session(conf)]
    if context.auth_token:
        sessions.insert(0, _user_session(conf, context))
    try:
        refused = _not_ours(conf, trust_id, project_id, trustor_id)
        if refused:
            LOG.warning('Trust %s not deleted: %s; the service deletes only '
                        'the trusts it made', trust_id, refused)
            return None
        for number, session in enumerate(sessions, 1):
            try:
                session.delete('/OS-TRUST/trusts/%s' % trust_id,
                               endpoint_filter=_IDENTITY)
                break
            except ks_exc.Forbidden:
                # Only the trustor (or an admin) may delete a trust: another
                # member of the project deleting the policy falls back to
                # the service user.
                if number == len(sessions):
                    raise
    except ks_exc.NotFound:
        pass
    except ks_exc.ClientException as exc:
        # The policy goes anyway; an unused trust grants nothing to anyone
        # but the service user.  The caller queues it for the engines.
        LOG.warning('Could not delete trust %s: %s', trust_id, _reason(exc))
        return _reason(exc)
    LOG.info('Deleted trust %s', trust_id)
    return None


def service_credentials_work(conf):
    """Whether Keystone accepts ``[service_credentials]`` right now.

    Authenticates afresh (no cached token): told apart from a broken
    trust, a rejected service user is the operator's to fix, and must not
    pause every policy.
    """
    auth = ks_loading.load_auth_from_conf_options(conf, GROUP)
    try:
        auth.get_auth_ref(service_session(conf))
    except (ks_exc.Unauthorized, ks_exc.Forbidden, ks_exc.NotFound):
        return False
    return True


def _reason(exc):
    if isinstance(exc, ks_exc.HttpError):
        return 'Keystone answered %s: %s' % (exc.http_status, exc.message)
    return str(exc)
