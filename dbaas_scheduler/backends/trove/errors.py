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
"""Trove's answers as our backend exceptions, with what a person can do.

Which HTTP status is transient, permanent, a busy or a missing instance;
a success whose body is unusable; an instance whose status forbids a backup.
"""

import re

from dbaas_scheduler.backends import base

# The backend's name, in every error it raises.
NAME = 'trove'

# Trove instance statuses (trove/instance/models.py) in which a backup can
# start, and those a person has to repair; any other status (BUILD, BACKUP,
# REBOOT, RESIZE, UPGRADE, ...) passes by itself: try again later.
READY_STATUSES = frozenset(['ACTIVE', 'HEALTHY', 'RESTART_REQUIRED'])
BROKEN_STATUSES = frozenset(['ERROR', 'FAILED', 'SHUTDOWN'])
# Trove 26 reports the database itself in ``operating_status`` (the guest
# agent's view), while ``status`` stays ACTIVE; these mean it is down, and
# Trove answers a backup request with 422 as if the instance were busy.
UNHEALTHY_OPERATING_STATUSES = frozenset([
    'FAILED', 'ERROR', 'SHUTDOWN', 'CRASHED', 'FAILED_TIMEOUT_GUESTAGENT'])

_MARKUP = re.compile(r'<[^>]*>')
_SPACES = re.compile(r'\s+')

# What a person can do about a permanent Trove error, by HTTP status.
_ADVICE = {
    401: ' Check [service_credentials] and the Keystone settings of Trove.',
    403: ' The credentials acting for project %(project)s lack a role '
         'Trove\'s policy requires, or their token is scoped to another '
         'project.',
    413: ' A quota of project %(project)s is used up: delete backups or '
         'raise the quota.',
    501: ' Trove cannot back up instances of this datastore.',
}


# The metrics' kind of a transient answer (backends.base.error_kind); any
# other 5xx is "unavailable".
_TRANSIENT_KINDS = {429: 'rate_limited', 503: 'rate_limited', 504: 'timeout'}


def _decoded(response):
    """The JSON of a response; None if it is not JSON."""
    try:
        return response.json()
    except ValueError:
        return None


def trove_message(response):
    """Trove's own explanation in an error response."""
    body = _decoded(response)
    if isinstance(body, dict):
        # {"unprocessableEntity": {"code": 422, "message": "..."}}, or a
        # flat {"message": "..."} from other WebOb versions.
        for fault in [body] + list(body.values()):
            message = isinstance(fault, dict) and fault.get('message')
            if message and isinstance(message, str):
                return _sentence(message)
    if (response.headers.get('Content-Type', '').startswith('text/plain')
            and response.text.strip()):
        return _sentence(response.text[:300])
    return _sentence(response.reason or 'no explanation given')


def _sentence(text):
    # Trove's 403 comes from WebOb's HTML template: "...<br /><br />...".
    text = _SPACES.sub(' ', _MARKUP.sub(' ', text)).strip()
    return text if text.endswith(('.', '!', '?')) else text + '.'


def request_id(response):
    """Trove's id of the request, for its logs: " (Trove request id ...)"."""
    value = response.headers.get('X-Openstack-Request-Id')
    return ' (Trove request id %s)' % value if value else ''


def rate_limit_delay(response):
    """Seconds Trove asks to wait when it rate-limited; None otherwise.

    Trove answers both a used-up quota ("Quota exceeded for resources")
    and its rate limiting ("This request was rate-limited") with 413
    ``overLimit``; only the second carries ``Retry-After``.
    """
    if response.status_code not in (413, 429):
        return None
    body = _decoded(response)
    fault = body.get('overLimit') if isinstance(body, dict) else None
    value = response.headers.get('Retry-After')
    if value is None and isinstance(fault, dict):
        value = fault.get('retryAfter')
    if value is None:
        return None
    try:
        return max(float(value), 0.1)
    except (TypeError, ValueError):
        # An HTTP date; Trove sends seconds.  Wait a little.
        return 1.0


def error_from_response(response, policy, action):
    """The classified exception for a Trove error answer other than 404."""
    code = response.status_code
    what = 'Trove answered HTTP %d when asked to %s: %s' % (
        code, action, trove_message(response))
    what += _ADVICE.get(code, '') % {'project': policy.project_id}
    what += request_id(response)
    if code in (409, 422):
        return base.InstanceBusy(backend=NAME, instance_id=policy.instance_id,
                                 reason=what)
    if code == 403:
        return base.BackendForbidden(
            backend=NAME, instance_id=policy.instance_id, reason=what)
    if code == 429 or (code >= 500 and code != 501):
        return base.TransientBackendError(
            backend=NAME, kind=_TRANSIENT_KINDS.get(code, 'unavailable'),
            reason=what + ' Trove or a service behind it is failing.')
    if code == 413:
        # Rate limiting (with Retry-After) was waited out by the client:
        # this is a quota.
        return base.ProjectQuotaExceeded(backend=NAME, reason=what)
    # 400, 401, 501 and anything unexpected: the same request would fail
    # the same way.
    return base.PermanentBackendError(
        backend=NAME, kind='auth' if code == 401 else None, reason=what)


def not_found_error(response, policy, action):
    """The exception for a 404: the instance is gone, or the URL is wrong.

    Trove's 404 for an instance names it ("Resource <id> cannot be found.");
    another 404 (a wrong endpoint) must not disable the policy.
    """
    message = trove_message(response)
    what = 'Trove answered HTTP 404 when asked to %s in project %s: %s%s' % (
        action, policy.project_id, message, request_id(response))
    if policy.instance_id in message:
        return base.InstanceNotFound(
            backend=NAME, instance_id=policy.instance_id, reason=what)
    return base.PermanentBackendError(
        backend=NAME, reason=what + ' Check [trove] endpoint_override and '
                                    'the parent_id of the backup parameters.')


def instance_check_error(policy, instance, trove_request=''):
    """Why Trove's ``instance`` cannot be backed up now; None if it can.

    ``trove_request`` (`request_id`) ends the message.
    """
    status = str(instance.get('status') or 'UNKNOWN').upper()
    operating = str(instance.get('operating_status') or '').upper()
    if operating in UNHEALTHY_OPERATING_STATUSES:
        return base.PermanentBackendError(
            backend=NAME, reason='the database of instance %s is unhealthy: '
                                 'Trove reports its operating status %s '
                                 '(instance status %s); it cannot be backed '
                                 'up until it is repaired or restarted%s'
                                 % (policy.instance_id, operating, status,
                                    trove_request))
    if status in READY_STATUSES:
        return None
    fault = instance.get('fault')
    fault = fault.get('message') if isinstance(fault, dict) else fault
    detail = status + (' (%s)' % fault if fault else '')
    if status in BROKEN_STATUSES:
        return base.PermanentBackendError(
            backend=NAME, reason='instance %s is %s in Trove; it cannot be '
                                 'backed up until it is repaired%s'
                                 % (policy.instance_id, detail,
                                    trove_request))
    return base.InstanceBusy(
        backend=NAME, instance_id=policy.instance_id,
        reason='its Trove status is %s%s' % (detail, trove_request))


def json_body(response, key, action):
    """The decoded body of a success; it must hold ``key``."""
    body = _decoded(response)
    if not isinstance(body, dict) or key not in body:
        # A proxy's page or a cut answer: worth another try.
        raise base.TransientBackendError(
            backend=NAME,
            reason='Trove answered HTTP %d without a "%s" object when asked '
                   'to %s' % (response.status_code, key, action))
    return body
