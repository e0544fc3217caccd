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
"""API microversions: which version of the API a request asks for.

A client asks for a version with ``OpenStack-API-Version:
backup-scheduler 1.N`` (or ``latest``); without the header it gets the
oldest, 1.0, the API as it was before microversions.  Every answer of the
API's routes says which version served it, in the same header, with
``Vary: OpenStack-API-Version``.  A header this API cannot read is
answered 400; a version it does not serve, 406.

Handlers ask three things (doc/source/contributor/microversions.rst says
how to add a version):

- a route or method that appears in 1.N: decorate its handler with
  :func:`since`; below 1.N the path answers 404 (no method of it is served
  at that version) or 405 (others are);
- a request field or query parameter that appears in 1.N: give its schema
  ``SINCE: '1.N'`` and validate against :func:`request_schema` /
  :func:`query_schema`; below 1.N it is an unknown field, refused 400 as
  any unknown field is;
- a response field that appears in 1.N: build it only
  ``if is_at_least(req, '1.N')``, or drop it with
  :func:`response_fields`.
"""

import collections
import functools
import re

from dbaas_scheduler.api import fault
from dbaas_scheduler.api import util
from dbaas_scheduler import exception

SERVICE_TYPE = 'backup-scheduler'
HEADER = 'OpenStack-API-Version'
ENVIRON_KEY = 'dbaas_scheduler.microversion'
# The keyword of a JSON schema (a request field or query parameter) that
# appears in a microversion; an OpenAPI extension, so that the OpenAPI
# document says it too.  jsonschema ignores it.
SINCE = 'x-openstack-since'

# Every version this API serves, oldest first, one line each saying what
# it changed.  Adding a microversion is appending a line here (and a
# release note, an entry in doc/source/user/api-versions.rst and a gabbi
# story): the last line is the newest version this server serves.
VERSIONS = (
    '1.0',  # The API as it was before microversions.
    '1.1',  # Windows: start_window, completion_window, exclusions on
            # backup policies; start_deadline, completion_deadline,
            # completion_window_exceeded on executions; slots in
            # /v1/schedule-preview (and its window parameters); GET
            # .../lifecycle with slots.
    '1.2',  # Protection: rpo and pause_after_failures on backup policies;
            # effective_rpo, consecutive_failures, last_success_at,
            # protected_until, protection, protection_changed_at in their
            # answers; ?protection= on the list; GET .../lifecycle with
            # rpo_coverage.
    '1.3',  # Retention: min_keep; holds (POST /v1/executions/{id}/hold,
            # /release; held, held_at, held_by, backup_state,
            # backup_delete_after; ?held=); DELETE policy
            # ?delete_backups=; GET /v1/backup-policies/{id}/lifecycle.
    '1.4',  # Restores: POST /v1/executions/{id}/restore, GET /v1/restores
            # and /v1/restores/{id}; restore_time on a policy's show.
    '1.5',  # Coverage: GET /v1/coverage, every instance of a project and
            # its protection state.
    '1.6',  # Policy templates: /v1/policy-templates (list, create, show,
            # delete) and POST /v1/policy-templates/{id}/apply.
    '1.7',  # Verification: verify_every, verify_check on backup policies;
            # verified_at, verify_result, verify_reason, verify_duration
            # on executions.
    '1.8',  # Verification on a schedule: verify_schedule on backup
            # policies (verify_next_at in their answers); verify_every,
            # verify_check and verify_schedule on policy templates; a
            # verification whose backup was deleted meanwhile ends
            # CANCELLED.
)

_VERSION = re.compile(r'([1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})')


class Version(collections.namedtuple('Version', 'major minor')):
    """An API version: ordered as numbers, 1.10 after 1.9."""

    __slots__ = ()

    @classmethod
    def parse(cls, text):
        """The version ``text`` (``1.2``) names; ValueError otherwise."""
        match = _VERSION.fullmatch(text)
        if match is None:
            raise ValueError('%r is not a version of the form X.Y' % text)
        return cls(int(match.group(1)), int(match.group(2)))

    def __str__(self):
        return '%d.%d' % self


MIN_VERSION = Version.parse(VERSIONS[0])
MAX_VERSION = Version.parse(VERSIONS[-1])


@functools.lru_cache(maxsize=64)
def _parsed(text):
    # The versions the code names (``since``, the fields' versions) are
    # a handful of constants, parsed once rather than for every field of
    # every row of a list.
    return Version.parse(text)


def _version(value):
    return value if isinstance(value, Version) else _parsed(value)


def _similar(service_type):
    """True for a misspelling of ours (``backup_scheduler``)."""
    return (re.sub('[^a-z]', '', service_type.lower())
            == re.sub('[^a-z]', '', SERVICE_TYPE))


def _invalid(header, reason):
    return exception.InvalidMicroversion(
        header=util.excerpt(header), reason=reason, min=MIN_VERSION,
        max=MAX_VERSION)


def parse_header(header):
    """The Version a request's ``OpenStack-API-Version`` header asks for.

    ``header`` is the header's text (several headers joined with commas),
    or None.  It may name versions of other services too (one header for
    several services, as the API-SIG allows): only ours counts.  Raises
    InvalidMicroversion for text this function cannot read and
    MicroversionNotAcceptable for a version this server does not serve.
    """
    if header is None:
        return MIN_VERSION
    util.check_text(header, 'the %s header' % HEADER)
    ours = []
    for entry in header.split(','):
        parts = entry.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise _invalid(header, 'each entry is a service type and a '
                                   'version, separated by a space.')
        service_type, text = parts
        if service_type.lower() == SERVICE_TYPE:
            ours.append(text)
        elif _similar(service_type):
            raise _invalid(header, 'the service type is spelt %s.'
                                   % SERVICE_TYPE)
    if not ours:
        return MIN_VERSION
    if len(ours) > 1:
        raise _invalid(header, 'it names %s more than once.' % SERVICE_TYPE)
    if ours[0].lower() == 'latest':
        return MAX_VERSION
    try:
        version = Version.parse(ours[0])
    except ValueError:
        raise _invalid(header, 'the version must be two whole numbers '
                               'separated by a dot, such as 1.0.')
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise exception.MicroversionNotAcceptable(
            version=version, min=MIN_VERSION, max=MAX_VERSION)
    return version


def header_value(version):
    return '%s %s' % (SERVICE_TYPE, version)


class MicroversionMiddleware:
    """Read the version a request asks for; say it in every answer.

    Wraps the API's routes (not the health check or the metrics): the
    handlers find the version with :func:`requested`.
    """

    def __init__(self, application):
        self.application = application

    def __call__(self, environ, start_response):
        try:
            version = parse_header(environ.get('HTTP_OPENSTACK_API_VERSION'))
        except (exception.Invalid,
                exception.MicroversionNotAcceptable) as exc:
            response = fault.FaultWrapper.response_for(
                exc, environ.get('openstack.request_id'))
            response.headers['Vary'] = HEADER
            return response(environ, start_response)
        environ[ENVIRON_KEY] = version

        def versioned_start_response(status, headers, exc_info=None):
            headers = [(name, value) for name, value in headers
                       if name.lower() not in ('vary', HEADER.lower())]
            headers.append((HEADER, header_value(version)))
            headers.append(('Vary', HEADER))
            return start_response(status, headers, exc_info)

        return self.application(environ, versioned_start_response)


def version_in(environ):
    """The Version a WSGI request asked for (1.0 outside the middleware)."""
    return environ.get(ENVIRON_KEY, MIN_VERSION)


def requested(req):
    """The Version the request (a webob Request) asked for."""
    return version_in(req.environ)


def is_at_least(req, version):
    """True when the request asked for ``version`` (``'1.2'``) or later."""
    return requested(req) >= _version(version)


def since(version):
    """Decorator: the handler serves requests of ``version`` and later.

    Below it, the route answers as if the method (405) or, with no other
    method served at that version, the path (404) did not exist.
    """
    version = _version(version)

    def decorate(handler):
        handler.min_version = version
        return handler
    return decorate


def min_version_of(handler):
    """The oldest version a route's handler serves (see :func:`since`)."""
    return getattr(handler, 'min_version', MIN_VERSION)


def _since(schema):
    value = schema.get(SINCE) if isinstance(schema, dict) else None
    return _version(value) if value is not None else MIN_VERSION


def schema_at(schema, version):
    """``schema`` without the properties newer than ``version``.

    Properties (of any object, at any depth) whose schema says
    ``SINCE: '1.N'`` with 1.N after ``version`` are left out of
    ``properties`` and ``required``, so that an object with
    ``additionalProperties: false`` refuses them as unknown fields.
    """
    if isinstance(schema, list):
        return [schema_at(item, version) for item in schema]
    if not isinstance(schema, dict):
        return schema
    pruned = {}
    for key, value in schema.items():
        if key == 'properties':
            value = {name: schema_at(prop, version)
                     for name, prop in value.items()
                     if _since(prop) <= version}
        elif key == 'required':
            newer = {name for name, prop in schema.get(
                'properties', {}).items() if _since(prop) > version}
            value = [name for name in value if name not in newer]
        elif isinstance(value, (dict, list)):
            value = schema_at(value, version)
        pruned[key] = value
    return pruned


def request_schema(req, schema):
    """The JSON schema of a request body at the version it asked for."""
    version = requested(req)
    if version == MAX_VERSION:
        return schema
    return schema_at(schema, version)


def query_schema(req, parameters):
    """Query parameters ({name: schema}) served at the request's version.

    For ``util.query_params``: a newer parameter is an unknown one.
    """
    version = requested(req)
    return {name: schema for name, schema in parameters.items()
            if _since(schema) <= version}


def response_fields(req, body, since_versions):
    """``body`` (a dict) without the fields newer than the request.

    ``since_versions`` maps a field to the version it appeared in
    (``{'window': '1.1'}``).
    """
    hidden = hidden_fields(req, since_versions)
    return {name: value for name, value in body.items()
            if name not in hidden}


def hidden_fields(req, since_versions):
    """The fields of ``since_versions`` newer than the request, a set.

    What :func:`response_fields` leaves out, for a list to work out once
    rather than for each of its items.
    """
    version = requested(req)
    return {name for name, since in since_versions.items()
            if _version(since) > version}
