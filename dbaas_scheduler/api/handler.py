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
``dbaas_scheduler/api/handlers/``.  A path served with another method gets
405 with an ``Allow`` header; an unknown path 404.
"""

import routes
import webob.exc

from dbaas_scheduler.api.handlers import backup_policy
from dbaas_scheduler.api.handlers import execution
from dbaas_scheduler.api.handlers import root
from dbaas_scheduler.api.handlers import service

_POLICY = '/v1/backup-policies/{policy_id}'

ROUTE_DECLARATIONS = {
    '': {'GET': root.versions},
    '/': {'GET': root.versions},
    '/v1': {'GET': root.version_v1},
    '/v1/': {'GET': root.version_v1},
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
    '/v1/executions': {'GET': execution.list_executions},
    '/v1/executions/{execution_id}': {'GET': execution.show_execution},
    '/v1/services': {'GET': service.list_services},
}


def _method_not_allowed(allowed):
    def handle(environ, start_response):
        raise webob.exc.HTTPMethodNotAllowed(
            'The method %s is not served here; this path takes %s.' % (
                environ['REQUEST_METHOD'], allowed),
            headers={'Allow': allowed})
    return handle


def make_map(declarations):
    mapper = routes.Mapper()
    for path, targets in declarations.items():
        for method, target in targets.items():
            mapper.connect(path, action=target,
                           conditions={'method': [method]})
        mapper.connect(path, action=_method_not_allowed(
            ', '.join(sorted(targets))))
    return mapper


class APIHandler:
    """Dispatch a request to the handler its path and method name."""

    def __init__(self):
        self._map = make_map(ROUTE_DECLARATIONS)

    def __call__(self, environ, start_response):
        match = self._map.match(environ=environ)
        if match is None:
            raise webob.exc.HTTPNotFound(
                'No resource at %s; see the version document at / for the '
                'API.' % environ.get('PATH_INFO'))
        target = match.pop('action')
        environ['wsgiorg.routing_args'] = ((), match)
        return target(environ, start_response)
