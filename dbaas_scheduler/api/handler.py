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
"""The API's routes: ROUTE_DECLARATIONS maps each path to its handlers.

Each path maps HTTP methods to a handler, a small WSGI application in
``dbaas_scheduler/api/handlers/``.  Every path also takes ``OPTIONS``
(204 with an ``Allow`` header), and a path served with ``GET`` takes
``HEAD`` (the same answer without its body).  A path served with another
method gets 405 with an ``Allow`` header; an unknown path 404.

A handler decorated with ``microversion.since('1.N')`` serves requests of
version 1.N and later only: below it, its method is not in ``Allow``
(405), and a path none of whose methods is served at the requested
version is unknown (404), as placement does.
"""

import routes
import webob.exc

from dbaas_scheduler.api.handlers import backup_policy
from dbaas_scheduler.api.handlers import coverage
from dbaas_scheduler.api.handlers import execution
from dbaas_scheduler.api.handlers import lifecycle
from dbaas_scheduler.api.handlers import restore
from dbaas_scheduler.api.handlers import root
from dbaas_scheduler.api.handlers import schedule
from dbaas_scheduler.api.handlers import service
from dbaas_scheduler.api.handlers import template
from dbaas_scheduler.api import microversion
from dbaas_scheduler.api import util

_POLICY = '/v1/backup-policies/{policy_id}'

ROUTE_DECLARATIONS = {
    '': {'GET': root.versions},
    '/': {'GET': root.versions},
    '/v1': {'GET': root.version_v1},
    '/v1/': {'GET': root.version_v1},
    '/v1/openapi.json': {'GET': root.openapi_document},
    '/v1/backup-policies': {
        'GET': backup_policy.list_policies,
        'POST': backup_policy.create_policy,
    },
    _POLICY: {
        'GET': backup_policy.show_policy,
        'PATCH': backup_policy.update_policy,
        'DELETE': backup_policy.delete_policy,
    },
    _POLICY + '/pause': {'POST': backup_policy.pause_policy},
    _POLICY + '/resume': {'POST': backup_policy.resume_policy},
    _POLICY + '/run': {'POST': backup_policy.run_policy},
    _POLICY + '/next-runs': {'GET': backup_policy.next_runs},
    _POLICY + '/lifecycle': {'GET': lifecycle.show_lifecycle},
    '/v1/coverage': {'GET': coverage.show_coverage},
    '/v1/executions': {'GET': execution.list_executions},
    '/v1/executions/{execution_id}': {'GET': execution.show_execution},
    '/v1/executions/{execution_id}/hold': {'POST': execution.hold_backup},
    '/v1/executions/{execution_id}/release': {
        'POST': execution.release_backup},
    '/v1/executions/{execution_id}/restore': {
        'POST': restore.create_restore},
    '/v1/restores': {'GET': restore.list_restores},
    '/v1/restores/{restore_id}': {'GET': restore.show_restore},
    '/v1/schedule-preview': {'GET': schedule.preview_schedule},
    '/v1/services': {'GET': service.list_services},
    '/v1/policy-templates': {
        'GET': template.list_templates,
        'POST': template.create_template,
    },
    '/v1/policy-templates/{template_id}': {
        'GET': template.show_template,
        'DELETE': template.delete_template,
    },
    '/v1/policy-templates/{template_id}/apply': {
        'POST': template.apply_template},
}


def _method_not_allowed(allowed):
    def handle(environ, start_response):
        raise webob.exc.HTTPMethodNotAllowed(
            'The method %s is not served here; this path takes %s.' % (
                util.shorten(environ['REQUEST_METHOD']), allowed),
            headers={'Allow': allowed})
    return handle


def _options(allowed):
    def handle(environ, start_response):
        return util.json_response(None, status=204, headers={
            'Allow': allowed})(environ, start_response)
    return handle


def with_implied_methods(targets):
    """``targets`` with HEAD (where GET is) and OPTIONS added."""
    targets = dict(targets)
    if 'GET' in targets:
        targets.setdefault('HEAD', targets['GET'])
    allowed = ', '.join(sorted(set(targets) | {'OPTIONS'}))
    targets.setdefault('OPTIONS', _options(allowed))
    return targets


def targets_at(targets, version):
    """The methods of a route served at ``version``, with their handlers.

    Empty when the route itself is newer than ``version``.
    """
    served = {method: target for method, target in targets.items()
              if microversion.min_version_of(target) <= version}
    return with_implied_methods(served) if served else {}


def make_map(declarations):
    """A Mapper of the paths: a match names the path it was declared as."""
    mapper = routes.Mapper()
    for path in declarations:
        mapper.connect(path, declared_path=path)
    return mapper


def _text(path):
    """A PEP 3333 path (UTF-8 bytes as latin-1) as the text it is."""
    return path.encode('latin-1').decode('utf-8')


def _is_text(path):
    """True if a PEP 3333 path is UTF-8 without control characters."""
    try:
        text = _text(path)
    except UnicodeError:
        return False
    return not any(ord(c) < 0x20 or c == '\x7f' for c in text)


class APIHandler:
    """Dispatch a request to the handler its path and method name.

    ``worker_api`` is the RPC client manual runs are cast with
    (:class:`dbaas_scheduler.rpcapi.WorkerAPI`), one per application; the
    handlers find it with ``util.worker_api_of``.
    """

    def __init__(self, worker_api=None):
        self._declarations = ROUTE_DECLARATIONS
        self._map = make_map(self._declarations)
        self.worker_api = worker_api

    def __call__(self, environ, start_response):
        environ[util.WORKER_API_KEY] = self.worker_api
        path = environ.get('PATH_INFO', '')
        # No resource has a path that is not text: refuse it here rather
        # than look it up (PostgreSQL refuses a NUL even in a query).
        match = self._map.match(environ=environ) if _is_text(path) else None
        if match is None:
            raise webob.exc.HTTPNotFound(
                'No resource at %s; see the version document at / for the '
                'API.' % util.shorten(
                    path.encode('unicode_escape').decode('ascii')))
        version = microversion.version_in(environ)
        targets = targets_at(
            self._declarations[match.pop('declared_path')], version)
        if not targets:
            raise webob.exc.HTTPNotFound(
                'No resource at %s in version %s of the API; see the '
                'version document at / for the versions this server '
                'serves.' % (util.shorten(_text(path)), version))
        environ['wsgiorg.routing_args'] = ((), match)
        target = targets.get(environ['REQUEST_METHOD'])
        if target is None:
            target = _method_not_allowed(', '.join(sorted(targets)))
        return target(environ, start_response)


class MethodFilter:
    """An application for some methods only (and OPTIONS); 405 for others.

    For what is mounted outside the routes, such as the health check.
    """

    def __init__(self, application, methods):
        targets = with_implied_methods(
            {method: application for method in methods})
        self.targets = targets
        self.refuse = _method_not_allowed(', '.join(sorted(targets)))

    def __call__(self, environ, start_response):
        target = self.targets.get(environ['REQUEST_METHOD'], self.refuse)
        return target(environ, start_response)
