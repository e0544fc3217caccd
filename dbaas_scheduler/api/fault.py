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
"""Errors as JSON: the one place that maps exceptions to HTTP statuses.

Every error answer has the API-SIG shape::

    {"errors": [{"status": 400, "code": "dbaas_scheduler.invalid_schedule",
                 "title": "Bad Request", "detail": "...",
                 "request_id": "req-..."}]}

``detail`` is the domain exception's message, written for the person who
sent the request.  An unexpected exception is logged with its traceback
and answered 500 with the request id, never with the traceback.
"""

import re

from oslo_log import log as logging
import webob
import webob.exc

from dbaas_scheduler.api import util
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

# Most specific first.
STATUS_OF = (
    (exception.Invalid, 400),
    (exception.Forbidden, 403),
    (exception.NotFound, 404),
    (exception.Conflict, 409),
    (exception.ServiceUnavailable, 503),
)


def _code(exc):
    name = re.sub(r'(?<!^)(?=[A-Z])', '_', type(exc).__name__).lower()
    return 'dbaas_scheduler.%s' % name


def error_response(status, detail, code, request_id, headers=None):
    title = webob.exc.status_map[status].title
    body = {'errors': [{'status': status, 'code': code, 'title': title,
                        'detail': detail, 'request_id': request_id}]}
    return util.json_response(body, status=status, headers=headers)


class FaultWrapper:
    """Turn every exception a handler raises into a JSON error answer."""

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            return self.application(environ, start_response)
        except Exception as exc:
            request_id = environ.get('openstack.request_id')
            response = self.response_for(exc, request_id)
            return response(environ, start_response)

    @staticmethod
    def response_for(exc, request_id):
        for cls, status in STATUS_OF:
            if isinstance(exc, cls):
                return error_response(status, str(exc), _code(exc),
                                      request_id)
        if isinstance(exc, webob.exc.HTTPException):
            return error_response(
                exc.code, exc.detail or exc.explanation,
                'dbaas_scheduler.%s' % exc.title.lower().replace(' ', '_'),
                request_id, headers={k: v for k, v in exc.headers.items()
                                     if k.lower() == 'allow'})
        LOG.exception('Unexpected error serving request %s', request_id)
        return error_response(
            500, 'An unexpected error occurred. Report it with the request '
                 'id %s.' % request_id, 'dbaas_scheduler.internal_error',
            request_id)
