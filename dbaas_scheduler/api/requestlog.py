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
"""One INFO line per API request, once its answer has been sent."""

import time

from oslo_log import log as logging
from oslo_middleware import request_id

LOG = logging.getLogger(__name__)


class RequestLog:
    """Log each request: method, path, status, seconds and request id.

    As other OpenStack APIs do, so that an operator can follow a client's
    requests and match a client's error to the log by its request id
    (``X-OpenStack-Request-ID``).  Placed inside oslo.middleware's
    RequestId, which sets the id.  The line is written when the server
    closes the answer, so the time includes sending the body.

    The query string is left out: the path and the request id find a
    request, and a query string is where a mistaken client could put
    anything.  This API's paths carry ids and names, never a secret;
    tokens travel in headers, which are never logged.
    """

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        started = time.monotonic()
        answered = []

        def logged_start_response(status, headers, exc_info=None):
            answered.append(status.split(' ', 1)[0])
            return start_response(status, headers, exc_info)

        def log():
            LOG.info('%(method)s %(path)s %(status)s %(seconds).3f s '
                     '%(request_id)s',
                     {'method': environ.get('REQUEST_METHOD'),
                      'path': (environ.get('SCRIPT_NAME', '')
                               + environ.get('PATH_INFO', '')) or '/',
                      'status': answered[-1] if answered else '-',
                      'seconds': time.monotonic() - started,
                      'request_id': environ.get(request_id.ENV_REQUEST_ID,
                                                '-')})

        try:
            body = self.application(environ, logged_start_response)
        except BaseException:
            log()
            raise
        return _ClosingBody(body, log)


class _ClosingBody:
    """A WSGI body that calls ``on_close`` when the server closes it."""

    def __init__(self, body, on_close):
        self.body = body
        self.on_close = on_close

    def __iter__(self):
        return iter(self.body)

    def close(self):
        try:
            close = getattr(self.body, 'close', None)
            if close is not None:
                close()
        finally:
            self.on_close()
