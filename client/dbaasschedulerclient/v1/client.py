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
"""Python client of the backup scheduler API v1: one method per API call.

Requests go through a keystoneauth1 Adapter on the session the caller
gives (the OpenStack client's, or one of your own), so tokens, TLS
options, timeouts and ``--debug`` request logging are keystoneauth's.
Bodies are plain dicts, as the API sends them; an error answer raises
:class:`APIError` whose message is the API's ``detail``.  Without Keystone
(the all-in-one service), a session without auth and the endpoint do::

    from keystoneauth1 import session
    from dbaasschedulerclient.v1 import client

    api = client.Client(session.Session(), endpoint='http://127.0.0.1:8798')
    api.find_policy('notes')
"""

import importlib.metadata
import re
import urllib.parse

from keystoneauth1 import adapter

SERVICE_TYPE = 'backup-scheduler'
DISTRIBUTION = 'python-dbaas-schedulerclient'

# A catalog entry may name the root of the service or its /v1 document.
_VERSION_SUFFIX = re.compile(r'/v1(\.\d+)?/*$')


class APIError(Exception):
    """The API refused a request; ``str()`` is what it said, for people."""

    def __init__(self, status, detail, code=None, request_id=None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.code = code
        self.request_id = request_id


class NotFound(APIError):
    """Nothing has the name or id asked for."""

    def __init__(self, detail):
        super().__init__(404, detail)


class NoUniqueMatch(Exception):
    """More than one resource of the project has the name asked for."""


def _version():
    try:
        return importlib.metadata.version(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None


def service_root(endpoint):
    """``endpoint`` without a trailing ``/v1``: the paths below add it."""
    if endpoint is None:
        return None
    return _VERSION_SUFFIX.sub('', endpoint.rstrip('/')) or endpoint


def error_of(response):
    """The APIError an error answer describes, whatever its body is.

    The API answers ``{"errors": [{"detail": ...}]}``; keystonemiddleware
    (a 401 before the API sees the request) ``{"error": {"message": ...}}``;
    a proxy in front of it may send HTML or nothing.
    """
    status = response.status_code
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        errors = body.get('errors')
        if isinstance(errors, list) and errors \
                and isinstance(errors[0], dict):
            first = errors[0]
            detail = first.get('detail') or first.get('title')
            if detail:
                return APIError(status, detail, code=first.get('code'),
                                request_id=first.get('request_id'))
        error = body.get('error')
        if isinstance(error, dict) and error.get('message'):
            return APIError(status, error['message'])
    text = (response.text or '').strip()
    if text and len(text) <= 500 and '<' not in text:
        return APIError(status, text)
    return APIError(status, 'The backup scheduler API answered %d %s.' % (
        status, response.reason or ''))


class Client:
    """Calls of ``/v1``; lists follow every page unless given a limit."""

    def __init__(self, session, endpoint=None, region_name=None,
                 interface=None):
        self.adapter = adapter.Adapter(
            session, service_type=SERVICE_TYPE, region_name=region_name,
            interface=interface, endpoint_override=service_root(endpoint),
            client_name=DISTRIBUTION, client_version=_version())

    def _request(self, method, path, body=None, params=None):
        kwargs = {'raise_exc': False}
        if body is not None:
            kwargs['json'] = body
        if params:
            kwargs['params'] = params
        response = self.adapter.request(path, method, **kwargs)
        if response.status_code >= 400:
            raise error_of(response)
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError:
            raise APIError(response.status_code,
                           'The backup scheduler API answered %d with a '
                           'body that is not JSON; is %s its URL?' % (
                               response.status_code, response.url))

    def _list(self, path, key, params):
        """Items of a list call: one page with ``limit``, else all pages."""
        params = {name: value for name, value in params.items()
                  if value is not None}
        items = []
        while True:
            page = self._request('GET', path, params=params)
            items.extend(page[key])
            more = any(link.get('rel') == 'next'
                       for link in page.get('links') or ())
            if 'limit' in params or not more or not page[key]:
                return items
            # The next link is built from the server's own view of its
            # URL, wrong behind a proxy: carry the marker over instead.
            params['marker'] = page[key][-1]['id']

    # The version document.

    def get_versions(self):
        """GET /: the API versions this service offers."""
        return self._request('GET', '/')['versions']

    # Backup policies.

    def list_policies(self, name=None, instance_id=None, enabled=None,
                      all_projects=None, limit=None, marker=None):
        return self._list('/v1/backup-policies', 'backup_policies', {
            'name': name, 'instance_id': instance_id,
            'enabled': _flag(enabled), 'all_projects': _flag(all_projects),
            'limit': limit, 'marker': marker})

    def find_policy(self, name_or_id):
        """The policy with this id, else the one policy with this name.

        Raises :class:`NotFound` when none has either, and
        :class:`NoUniqueMatch` when several of the project's policies have
        the name.
        """
        try:
            return self.get_policy(name_or_id)
        except APIError as exc:
            if exc.status != 404:
                raise
        found = self.list_policies(name=name_or_id)
        if len(found) == 1:
            return found[0]
        if not found:
            raise NotFound('No backup policy with a name or ID of %r '
                           'exists.' % name_or_id)
        raise NoUniqueMatch(
            'More than one backup policy is named %r: give the ID of the '
            'one you mean (%s).' % (name_or_id, ', '.join(
                policy['id'] for policy in found)))

    def create_policy(self, values):
        return self._request('POST', '/v1/backup-policies',
                             {'backup_policy': values})['backup_policy']

    def get_policy(self, policy_id):
        return self._request('GET', _policy(policy_id))['backup_policy']

    def update_policy(self, policy_id, changes):
        return self._request('PATCH', _policy(policy_id),
                             {'backup_policy': changes})['backup_policy']

    def delete_policy(self, policy_id):
        self._request('DELETE', _policy(policy_id))

    def pause_policy(self, policy_id, reason=None):
        body = {'reason': reason} if reason else None
        return self._request('POST', _policy(policy_id, 'pause'),
                             body)['backup_policy']

    def resume_policy(self, policy_id):
        return self._request('POST', _policy(policy_id, 'resume'))[
            'backup_policy']

    def run_policy(self, policy_id):
        """Take a backup now; returns the manual execution."""
        return self._request('POST', _policy(policy_id, 'run'))['execution']

    def next_runs(self, policy_id, count=None):
        """``{"next_runs": [UTC times], "timezone": the policy's}``."""
        params = {'count': count} if count is not None else None
        return self._request('GET', _policy(policy_id, 'next-runs'),
                             params=params)

    def preview_schedule(self, schedule, schedule_type=None, timezone=None,
                         start_at=None, end_at=None, count=None):
        """The next run times of a schedule, before any policy has it.

        ``{"next_runs": [UTC times], "timezone": ..., "example": bool}``;
        ``example`` is true when ``H`` fields make the times depend on the
        id of the policy.  An invalid schedule raises :class:`APIError`
        with the message creating a policy would give.
        """
        params = {'schedule': schedule, 'schedule_type': schedule_type,
                  'timezone': timezone, 'start_at': start_at,
                  'end_at': end_at, 'count': count}
        return self._request('GET', '/v1/schedule-preview', params={
            name: value for name, value in params.items()
            if value is not None})

    # Executions.

    def list_executions(self, policy_id=None, instance_id=None, status=None,
                        since=None, all_projects=None, limit=None,
                        marker=None):
        return self._list('/v1/executions', 'executions', {
            'policy_id': policy_id, 'instance_id': instance_id,
            'status': status, 'since': since,
            'all_projects': _flag(all_projects), 'limit': limit,
            'marker': marker})

    def get_execution(self, execution_id):
        return self._request('GET', '/v1/executions/%s' % _quote(
            execution_id))['execution']

    # Services.

    def list_services(self):
        return self._request('GET', '/v1/services')['services']


def _flag(value):
    if value is None:
        return None
    return 'true' if value else 'false'


def _quote(value):
    return urllib.parse.quote(str(value), safe='')


def _policy(policy_id, action=None):
    path = '/v1/backup-policies/%s' % _quote(policy_id)
    return '%s/%s' % (path, action) if action else path
