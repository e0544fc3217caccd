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
sent the request, cut short if it quotes a large input.  A database error
that a request still caused (a value the edge checks let through, a
concurrent change) is answered 400, 409 or 503 here, logged without a
traceback.  An unexpected exception is logged with its traceback and
answered 500 with the request id, never with the traceback.
"""

import re

from oslo_db import exception as db_exc
from oslo_log import log as logging
import sqlalchemy.exc
from sqlalchemy.orm import exc as orm_exc
import webob
import webob.exc

from dbaas_scheduler.api import util
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

# Most specific first.
STATUS_OF = (
    (exception.RequestTooLarge, 413),
    (exception.Invalid, 400),
    (exception.Forbidden, 403),
    (exception.QuotaExceeded, 403),
    (exception.RateLimitExceeded, 429),
    (exception.NotFound, 404),
    (exception.MicroversionNotAcceptable, 406),
    (exception.Conflict, 409),
    (exception.ServiceUnavailable, 503),
)


# The longest ``detail``; a longer one is cut in the middle, keeping the
# start (what is wrong) and the end (what to do).
MAX_DETAIL = 1024

# The column a MariaDB data error names ("... for column `db`.`t`.`c`").
_COLUMN = re.compile(r"for column (?:`[^`]*`\.)*[`']?(\w+)[`']?")


def _database_answer(exc):
    """(status, code, detail) for a database error, or None."""
    if isinstance(exc, (db_exc.DBDuplicateEntry, db_exc.DBReferenceError,
                        db_exc.DBConstraintError,
                        sqlalchemy.exc.IntegrityError)):
        return 409, 'dbaas_scheduler.conflict', (
            'The request conflicts with the current state of the resource '
            '(the database refused it); read it again and retry.')
    if isinstance(exc, (orm_exc.StaleDataError, db_exc.DBDeadlock)):
        return 409, 'dbaas_scheduler.conflict', (
            'Another request changed or deleted the resource at the same '
            'time; read it again and retry.')
    if isinstance(exc, db_exc.DBConnectionError):
        return 503, 'dbaas_scheduler.service_unavailable', (
            'The database is unreachable; try again later.')
    inner = getattr(exc, 'inner_exception', exc)
    if isinstance(exc, db_exc.DBDataError) or isinstance(
            inner, sqlalchemy.exc.DataError) or (
            # A driver refusing a parameter before sending it: psycopg2 a
            # NUL character, sqlite3 an integer beyond 64 bits.
            isinstance(exc, db_exc.DBError)
            and isinstance(inner, (ValueError, UnicodeError,
                                   OverflowError))):
        column = _COLUMN.search(str(inner))
        return 400, 'dbaas_scheduler.invalid', (
            'Invalid input: a value%s does not fit in the database (too '
            'long, out of range, or text it cannot store).' % (
                ' of %s' % column.group(1) if column else ''))
    return None


def shorten_detail(detail):
    if len(detail) <= MAX_DETAIL:
        return detail
    half = MAX_DETAIL // 2
    return '%s [... %d characters left out ...] %s' % (
        detail[:half], len(detail) - 2 * half, detail[-half:])


def _code(exc):
    name = re.sub(r'(?<!^)(?=[A-Z])', '_', type(exc).__name__).lower()
    return 'dbaas_scheduler.%s' % name


def error_response(status, detail, code, request_id, headers=None):
    title = webob.exc.status_map[status].title
    body = {'errors': [{'status': status, 'code': code, 'title': title,
                        'detail': shorten_detail(detail),
                        'request_id': request_id}]}
    return util.json_response(body, status=status, headers=headers)


def _headers(exc):
    """Headers an error answer carries: Retry-After for a rate limit."""
    retry_after = getattr(exc, 'retry_after', None)
    if retry_after is None:
        return None
    return {'Retry-After': str(max(1, int(retry_after)))}


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
                                      request_id, headers=_headers(exc))
        if isinstance(exc, webob.exc.HTTPException):
            return error_response(
                exc.code, exc.detail or exc.explanation,
                'dbaas_scheduler.%s' % exc.title.lower().replace(' ', '_'),
                request_id, headers={k: v for k, v in exc.headers.items()
                                     if k.lower() == 'allow'})
        answer = _database_answer(exc)
        if answer is not None:
            LOG.warning('Request %s: the database refused it: %s: %s',
                        request_id, type(exc).__name__,
                        str(getattr(exc, 'inner_exception', exc))[:300])
            return error_response(answer[0], answer[2], answer[1],
                                  request_id)
        LOG.exception('Unexpected error serving request %s', request_id)
        return error_response(
            500, 'An unexpected error occurred. Report it with the request '
                 'id %s.' % request_id, 'dbaas_scheduler.internal_error',
            request_id)
