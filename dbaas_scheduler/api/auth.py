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
"""Who is asking: Keystone tokens, or noauth, into a RequestContext.

With ``auth_strategy = keystone`` keystonemiddleware's auth_token validates
the token and sets the ``X-User-Id``, ``X-Project-Id`` and ``X-Roles``
headers; with ``noauth`` the client sets them itself (or gets the admin of
project ``admin``).  Either way :class:`ContextMiddleware` builds the
request's :class:`~dbaas_scheduler.context.RequestContext` from them.  The
version document at ``/`` needs no authentication.
"""

from keystonemiddleware import auth_token
import webob.dec

from dbaas_scheduler.api import util
from dbaas_scheduler import context as dbaas_context


class NoAuthMiddleware:
    """Trust the identity headers a client sends (noauth only)."""

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        if not req.headers.get('X-Project-Id'):
            req.headers['X-User-Id'] = req.headers.get('X-User-Id', 'admin')
            req.headers['X-Project-Id'] = 'admin'
            req.headers['X-Roles'] = req.headers.get(
                'X-Roles', 'admin,member,reader')
        else:
            req.headers.setdefault('X-User-Id', 'noauth')
            req.headers.setdefault('X-Roles', 'member,reader')
        req.headers['X-Identity-Status'] = 'Confirmed'
        return req.get_response(self.application)


class ContextMiddleware:
    """Put the RequestContext and the configuration in the environ."""

    def __init__(self, application, conf):
        self.application = application
        self.conf = conf

    def __call__(self, environ, start_response):
        environ[util.CONTEXT_KEY] = dbaas_context.RequestContext.from_environ(
            environ)
        environ[util.CONF_KEY] = self.conf
        return self.application(environ, start_response)


class PublicPaths:
    """Serve some paths with other applications, without authentication.

    ``public`` maps exact paths (version discovery, the health check) to
    their application; every other request goes to ``authenticated``.
    """

    def __init__(self, authenticated, public):
        self.authenticated = authenticated
        self.public = public

    def __call__(self, environ, start_response):
        application = self.public.get(environ.get('PATH_INFO', ''),
                                      self.authenticated)
        return application(environ, start_response)


def auth_middleware(conf, application):
    """The authentication middleware ``auth_strategy`` selects."""
    if conf.auth_strategy == 'noauth':
        return NoAuthMiddleware(application)
    return auth_token.AuthProtocol(application, {'oslo_config_config': conf})
