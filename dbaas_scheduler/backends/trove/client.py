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
"""Trove's REST API over keystoneauth1: sessions, adapters, endpoints.

One :class:`TroveClient` per backend, shared by the worker's threads: one
session (its connection pool sized for them), one adapter per Keystone
trust, and :meth:`TroveClient.request`, which returns Trove's answer or
raises our backend exceptions.
"""

import collections
import re
import threading
import time
import urllib.parse

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from oslo_context import context as oslo_context

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.trove import errors
from dbaas_scheduler.backends.trove import pacing
from dbaas_scheduler.conf import service_credentials
from dbaas_scheduler import keystone
from dbaas_scheduler import version

# Used when [service_credentials] timeout is unset: without a timeout a
# Trove that stops answering holds a worker thread forever.
DEFAULT_TIMEOUT = 60

_PROJECT_PLACEHOLDER = re.compile(r'%\((?:project|tenant)_id\)s')


def trove_endpoint(template, project_id):
    """``[trove] endpoint_override`` for one project, ready for keystoneauth.

    ``%(project_id)s`` (or ``%(tenant_id)s``) becomes ``project_id``.
    keystoneauth %-formats an endpoint override itself (with the token's
    project), so every other ``%`` is escaped.
    """
    parsed = urllib.parse.urlsplit(template)
    if parsed.scheme not in ('http', 'https') or not parsed.netloc:
        raise ValueError('[trove] endpoint_override %r is not an http(s) '
                         'URL such as http://trove.example.com:8779/v1.0/'
                         '%%(project_id)s' % template)
    parts = _PROJECT_PLACEHOLDER.split(template.rstrip('/'))
    return project_id.replace('%', '%%').join(
        part.replace('%', '%%') for part in parts)


def catalog_endpoint(endpoint, token_project_id, project_id):
    """The catalog's Trove URL, moved to the policy's project.

    It ends in the token's project; with the policy's project instead,
    Trove refuses (403) a token of another project rather than act there.
    """
    endpoint = endpoint.rstrip('/')
    if token_project_id and endpoint.endswith('/' + token_project_id):
        endpoint = endpoint[:-len(token_project_id)] + project_id
    return endpoint.replace('%', '%%')


def request_timeout(conf):
    """Seconds one request may wait: ``[service_credentials] timeout``."""
    return conf[service_credentials.GROUP].timeout or DEFAULT_TIMEOUT


def _mount_pools(session, size):
    """Let the keystoneauth ``session`` keep ``size`` connections per host.

    keystoneauth mounts its own adapter (TCP keep-alive, and its TLS
    settings in versions that have them) with requests' 10 connections;
    one of the same class, with the same TLS settings and a larger pool,
    replaces it.  Only public constructors: no pool attribute is touched.
    """
    tls = {name: getattr(session, name) for name in (
        'tls_ciphers', 'tls_min_version') if getattr(session, name, None)}
    for scheme in ('https://', 'http://'):
        session.session.mount(scheme, ks_session.TCPKeepAliveAdapter(
            pool_maxsize=size, **tls))


class TroveClient:
    """Requests to Trove, each acting for one policy."""

    # Trust-scoped adapters kept (each caches its token until it expires).
    MAX_TRUST_ADAPTERS = 1024

    def __init__(self, conf):
        self.conf = conf
        self._lock = threading.Lock()
        self._session = None
        self._service_adapter = None
        self._trust_adapters = collections.OrderedDict()
        self._pacer = pacing.ProjectPacer()

    def _get_session(self):
        if self._session is None:
            group = service_credentials.GROUP
            session = ks_loading.load_session_from_conf_options(
                self.conf, group,
                timeout=request_timeout(self.conf))
            # requests keeps 10 connections per host: more worker threads
            # would open and discard connections, with a warning each time.
            _mount_pools(session, self.conf.worker.pool_size
                         + self.conf.worker.poll_concurrency)
            self._session = session
        return self._session

    def adapter(self, policy):
        """The keystoneauth Adapter that acts for ``policy``.

        A user's request (the coverage report's listing) acts with the
        user's own token (``user_auth``); a policy with a trust acts as
        the service user scoped to it, in the user's project; one without
        (noauth deployments, policies made by dbaas-scheduler-manage) as
        the service user itself, which :meth:`_endpoint` allows in the
        service user's own project only.
        """
        user_auth = getattr(policy, 'user_auth', None)
        if user_auth is not None:
            # A user's own token, for one request of theirs: not kept.
            return self._new_adapter(user_auth)
        trust_id = getattr(policy, 'trust_id', None)
        with self._lock:
            if trust_id:
                adapter = self._trust_adapters.get(trust_id)
                if adapter is None:
                    adapter = self._new_adapter(keystone.trust_auth(
                        self.conf, trust_id))
                    self._trust_adapters[trust_id] = adapter
                    while len(self._trust_adapters) > self.MAX_TRUST_ADAPTERS:
                        self._trust_adapters.popitem(last=False)
                self._trust_adapters.move_to_end(trust_id)
                return adapter
            if self._service_adapter is None:
                self._service_adapter = self._new_adapter(
                    ks_loading.load_auth_from_conf_options(
                        self.conf, service_credentials.GROUP))
            return self._service_adapter

    def _new_adapter(self, auth):
        if auth is None:
            raise base.PermanentBackendError(
                backend=errors.NAME,
                reason='[service_credentials] has no auth_type; set it (e.g. '
                       'password) with the credentials of the '
                       'dbaas-scheduler service user')
        return ks_adapter.Adapter(
            self._get_session(), auth=auth,
            service_type=self.conf.trove.service_type,
            interface=self.conf.trove.interface,
            region_name=self.conf.trove.region_name,
            client_name='dbaas-scheduler',
            client_version=version.version_string())

    def _endpoint(self, adapter, policy):
        """The Trove URL of the policy's project (``.../v1.0/<project>``)."""
        if self.conf.trove.endpoint_override:
            try:
                return trove_endpoint(self.conf.trove.endpoint_override,
                                      policy.project_id)
            except ValueError as exc:
                raise base.PermanentBackendError(backend=errors.NAME,
                                                 reason=str(exc))
        endpoint = adapter.get_endpoint()
        if not endpoint:
            raise ks_exc.EndpointNotFound()
        return catalog_endpoint(endpoint, adapter.get_project_id(),
                                policy.project_id)

    def _check_acts_for(self, adapter, policy):
        """Refuse the service user's own token in another project.

        A policy without a trust (made without a user's token) would have
        the service act in the policy's project with its own rights: the
        service acts in a project only through a trust a user of it
        delegated.  Credentials without a project (a static token the
        operator configured, e.g. ``admin_token`` for a Trove without
        Keystone) are the operator's choice and are used as they are.
        """
        if (getattr(policy, 'trust_id', None)
                or getattr(policy, 'user_auth', None) is not None):
            return
        own_project = adapter.get_project_id()
        if own_project is not None and policy.project_id != own_project:
            raise base.PermanentBackendError(
                backend=errors.NAME, kind='auth',
                reason='the policy has no Keystone trust, and the service '
                       'acts in project %s only through a trust that a user '
                       'of that project delegated; it never uses its own '
                       'token there. Delete the policy and create it again '
                       'through the API as a member of the project'
                       % policy.project_id)

    def request(self, policy, method, path, action, **kwargs):
        """One Trove request: a success or a 404, else a backend error.

        A 413 that is Trove's rate limiting (not a quota) is waited out, up
        to ``[trove] rate_limit_max_wait`` seconds.
        """
        project_id = policy.project_id
        give_up_at = time.monotonic() + self.conf.trove.rate_limit_max_wait
        while True:
            self._pacer.wait(project_id)
            response = self._send(policy, method, path, action, **kwargs)
            retry_after = errors.rate_limit_delay(response)
            if retry_after is None:
                self._pacer.accepted(project_id)
                break
            if time.monotonic() + retry_after > give_up_at:
                raise base.ProjectRateLimited(
                    backend=errors.NAME,
                    reason='Trove kept rate-limiting project %s for more '
                           'than [trove] rate_limit_max_wait (%d s) when '
                           'asked to %s; %s' % (
                               project_id, self.conf.trove.rate_limit_max_wait,
                               action, errors.trove_message(response)))
            self._pacer.limited(project_id, retry_after)
        if response.status_code < 400 or response.status_code == 404:
            return response
        raise errors.error_from_response(response, policy, action)

    def _send(self, policy, method, path, action, **kwargs):
        try:
            adapter = self.adapter(policy)
            self._check_acts_for(adapter, policy)
            return adapter.request(
                path, method, endpoint_override=self._endpoint(adapter,
                                                               policy),
                raise_exc=False, headers={'Accept': 'application/json'},
                global_request_id=_global_request_id(), **kwargs)
        except ks_exc.EndpointNotFound:
            raise base.PermanentBackendError(
                backend=errors.NAME,
                reason='no Trove endpoint (service type %s, interface %s, '
                       'region %s) in the service catalog to %s: set '
                       '[trove] endpoint_override or fix the catalog' % (
                           self.conf.trove.service_type,
                           self.conf.trove.interface,
                           self.conf.trove.region_name or 'any', action))
        except ks_exc.ConnectionError as exc:
            raise base.TransientBackendError(
                backend=errors.NAME,
                kind=('timeout' if isinstance(exc, ks_exc.ConnectTimeout)
                      else 'unavailable'),
                reason='could not reach Trove (or Keystone) to %s: %s'
                       % (action, exc))
        except ks_exc.HttpError as exc:
            # Raised by authentication only: Trove's answers come back.
            trust_id = getattr(policy, 'trust_id', None)
            if trust_id and (exc.http_status or 0) in (401, 403, 404):
                # Keystone answers 401 both to a deleted trust and to a
                # wrong service password: only the first is the policy's.
                if keystone.service_credentials_work(self.conf):
                    raise base.TrustBroken(
                        backend=errors.NAME, trust_id=trust_id,
                        reason='Keystone answered %s when asked for a token '
                               'to %s' % (exc.http_status, action))
                raise base.PermanentBackendError(
                    backend=errors.NAME, kind='auth',
                    reason='Keystone rejects the service user of '
                           '[service_credentials] (answer %s when asked for '
                           'a token to %s): fix its credentials' % (
                               exc.http_status, action))
            error = (base.TransientBackendError
                     if (exc.http_status or 0) >= 500
                     else base.PermanentBackendError)
            raise error(backend=errors.NAME,
                        kind=('unavailable'
                              if error is base.TransientBackendError
                              else 'auth'),
                        reason='Keystone did not authenticate the service '
                               'user of [service_credentials] to %s: %s'
                               % (action, exc))
        except ks_exc.ClientException as exc:
            raise base.PermanentBackendError(
                backend=errors.NAME,
                reason='could not %s: %s' % (action, exc))


def _global_request_id():
    """The id of the request this work is for, sent to Trove.

    The current oslo.context of the thread: the worker's RPC message's,
    whose global request id is that of the API request that caused it.
    Trove logs it next to its own, so one id finds both sides.
    """
    current = oslo_context.get_current()
    if current is None:
        return None
    return current.global_request_id or current.request_id
