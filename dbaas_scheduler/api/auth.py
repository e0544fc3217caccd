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
headers (``OpenStack-System-Scope: all`` for a system-scoped token); with
``noauth`` the client sets them itself (or gets the admin of project
``admin``).  Either way :class:`ContextMiddleware` builds the
request's :class:`~dbaas_scheduler.context.RequestContext` from them,
after checking that they fit where they are stored.  The version document
at ``/`` needs no authentication.
"""

from keystonemiddleware import auth_token
from oslo_log import log as logging
import webob.dec

from dbaas_scheduler.api import util
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import limits
from dbaas_scheduler.db import models
from dbaas_scheduler import exception
from dbaas_scheduler import policy

LOG = logging.getLogger(__name__)

_POLICY = models.BackupPolicy.__table__.c
_EXECUTION = models.BackupExecution.__table__.c
# The identity headers, and the columns their values are stored in.
IDENTITY_HEADERS = {
    'HTTP_X_PROJECT_ID': ('X-Project-Id', (_POLICY.project_id,
                                           _EXECUTION.project_id)),
    'HTTP_X_USER_ID': ('X-User-Id', (_POLICY.user_id,)),
}


def check_identity(environ):
    """Refuse identity headers that could not be stored (noauth's)."""
    for key, (header, columns) in IDENTITY_HEADERS.items():
        value = environ.get(key)
        if value is None:
            continue
        longest = min(limits.max_length(column) for column in columns)
        if len(value) > longest or any(
                ord(c) < 0x20 or c == '\x7f' for c in value):
            raise exception.Invalid(
                reason='the %s header must be at most %d characters, '
                       'without control characters; it has %d.'
                       % (header, longest, len(value)))


SYSTEM_SCOPE_HEADER = 'OpenStack-System-Scope'


class NoAuthMiddleware:
    """Trust the identity headers a client sends (noauth only)."""

    def __init__(self, application):
        self.application = application

    @webob.dec.wsgify
    def __call__(self, req):
        if req.headers.get(SYSTEM_SCOPE_HEADER):
            # A system-scoped token has no project.
            if req.headers.get('X-Project-Id'):
                raise exception.Invalid(
                    reason='a request is scoped to a project (X-Project-Id) '
                           'or to the system (%s), not both.'
                           % SYSTEM_SCOPE_HEADER)
            req.headers.setdefault('X-User-Id', 'admin')
            req.headers.setdefault('X-Roles', 'admin,member,reader')
        elif not req.headers.get('X-Project-Id'):
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
        check_identity(environ)
        environ[util.CONTEXT_KEY] = dbaas_context.RequestContext.from_environ(
            environ)
        environ[util.CONF_KEY] = self.conf
        return self.application(environ, start_response)


class Authorize:
    """Serve ``application`` to a context the policy ``rule`` allows."""

    def __init__(self, application, rule):
        self.application = application
        self.rule = rule

    def __call__(self, environ, start_response):
        context = environ[util.CONTEXT_KEY]
        policy.authorize(context, self.rule,
                         {'project_id': context.project_id})
        return self.application(environ, start_response)


class PublicPaths:
    """Serve some paths with other applications, without authentication.

    ``public`` maps exact paths (version discovery, the health check) to
    their application; every other request goes to ``authenticated``.
    """

    def __init__(self, authenticated, public, conf):
        self.authenticated = authenticated
        self.public = public
        self.conf = conf

    def __call__(self, environ, start_response):
        # The public ones build links too ([api] public_endpoint).
        environ[util.CONF_KEY] = self.conf
        application = self.public.get(environ.get('PATH_INFO', ''),
                                      self.authenticated)
        return application(environ, start_response)


def auth_middleware(conf, application, warn=True):
    """The authentication middleware ``auth_strategy`` selects."""
    if conf.auth_strategy == 'noauth':
        if warn:
            LOG.warning('The REST API serves WITHOUT AUTHENTICATION '
                        '(auth_strategy = noauth): every request acts as '
                        'the user, project and roles it names. Use it only '
                        'on one machine or a trusted network; set '
                        'auth_strategy = keystone for a cloud.')
        return NoAuthMiddleware(application)
    return auth_token.AuthProtocol(application, {'oslo_config_config': conf})
