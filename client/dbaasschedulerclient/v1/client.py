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

Every request names an API microversion (``OpenStack-API-Version:
backup-scheduler 1.N``, sent by keystoneauth): ``api_version='1.N'`` pins
one; by default the client reads the version document once and uses the
newest version that both it (:data:`MAX_API_VERSION`) and the server
serve.
"""

import importlib.metadata
import re
import urllib.parse

from keystoneauth1 import adapter
from keystoneauth1 import discover
from keystoneauth1 import noauth

SERVICE_TYPE = 'backup-scheduler'
DISTRIBUTION = 'python-dbaas-schedulerclient'

# The API microversions this client speaks, oldest and newest.  Raise
# the newest when the client learns what a new microversion adds (see the
# server's doc/source/contributor/microversions.rst).
MIN_API_VERSION = '1.0'
MAX_API_VERSION = '1.8'

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


class UnsupportedVersion(Exception):
    """No API microversion both this client and the server speak."""


def _version_text(version):
    return discover.version_to_string(version)


def check_api_version(text):
    """The microversion ``text`` names, if this client speaks it.

    Raises UnsupportedVersion, with a message for people, otherwise.
    """
    try:
        version = discover.normalize_version_number(text)
    except TypeError:
        version = None
    if (version is None or len(version) != 2
            or discover.LATEST in version):
        raise UnsupportedVersion(
            'The backup scheduler API version %r is not a version: give '
            'one of the form 1.N, such as %s, or leave it out for the '
            'newest the server and this client both speak.'
            % (text, MAX_API_VERSION))
    if not (discover.normalize_version_number(MIN_API_VERSION) <= version
            <= discover.normalize_version_number(MAX_API_VERSION)):
        raise UnsupportedVersion(
            'This client speaks versions %s to %s of the backup scheduler '
            'API, not %s: upgrade python-dbaas-schedulerclient, or ask for '
            'one of those.' % (MIN_API_VERSION, MAX_API_VERSION,
                               _version_text(version)))
    return _version_text(version)


def negotiate(server_min, server_max):
    """The newest microversion both this client and a server serve.

    ``server_min`` and ``server_max`` are the server's versions as
    keystoneauth's discovery gives them (tuples, or None for a server
    from before microversions, which serves 1.0 only).
    """
    client_min = discover.normalize_version_number(MIN_API_VERSION)
    client_max = discover.normalize_version_number(MAX_API_VERSION)
    if not server_max:
        server_min = server_max = discover.normalize_version_number('1.0')
    server_min = server_min or server_max
    version = min(client_max, server_max)
    if version < server_min or version < client_min:
        raise UnsupportedVersion(
            'This client speaks versions %s to %s of the backup scheduler '
            'API, the server %s to %s: no version is common to both. '
            'Upgrade python-dbaas-schedulerclient.' % (
                MIN_API_VERSION, MAX_API_VERSION, _version_text(server_min),
                _version_text(server_max)))
    return _version_text(version)


class Client:
    """Calls of ``/v1``; lists follow every page unless given a limit.

    ``api_version`` (``'1.N'``) pins the API microversion of every
    request; without it the client negotiates one at its first request.
    """

    def __init__(self, session, endpoint=None, region_name=None,
                 interface=None, api_version=None):
        self.adapter = adapter.Adapter(
            session, service_type=SERVICE_TYPE, region_name=region_name,
            interface=interface, endpoint_override=service_root(endpoint),
            client_name=DISTRIBUTION, client_version=_version())
        if api_version is not None:
            self.adapter.default_microversion = check_api_version(
                api_version)

    @property
    def api_version(self):
        """The microversion the requests name, negotiated on first use."""
        if self.adapter.default_microversion is None:
            self.adapter.default_microversion = self._negotiate()
        return self.adapter.default_microversion

    def _negotiate(self):
        # The version document needs no token: a session without auth
        # (the all-in-one service) reads it too.
        auth = None
        if self.adapter.auth is None and self.adapter.session.auth is None:
            auth = noauth.NoAuth()
        data = self.adapter.get_endpoint_data(auth=auth)
        if data is None:
            raise UnsupportedVersion(
                'The backup scheduler API at %s has no version document '
                'this client can read.' % self.adapter.endpoint_override)
        return negotiate(data.min_microversion, data.max_microversion)

    def _request(self, method, path, body=None, params=None):
        kwargs = {'raise_exc': False, 'microversion': self.api_version}
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

    def delete_policy(self, policy_id, delete_backups=None):
        """Delete a policy; its backups too with ``delete_backups``."""
        params = {'delete_backups': 'true'} if delete_backups else None
        self._request('DELETE', _policy(policy_id), params=params)

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

    def lifecycle(self, policy_id, count=None):
        """``{"slots": [...], "rpo_coverage": {...}, "retention": [...]}``."""
        params = {'count': count} if count is not None else None
        return self._request('GET', _policy(policy_id, 'lifecycle'),
                             params=params)

    def preview_schedule(self, schedule, schedule_type=None, timezone=None,
                         start_at=None, end_at=None, count=None,
                         start_window=None, completion_window=None,
                         exclusions=None):
        """The next run times of a schedule, before any policy has it.

        ``{"next_runs": [UTC times], "timezone": ..., "example": bool,
        "slots": [...]}``; ``slots`` with the draft's windows and
        ``exclusions`` (a list of texts);
        ``example`` is true when ``H`` fields make the times depend on the
        id of the policy.  An invalid schedule raises :class:`APIError`
        with the message creating a policy would give.
        """
        params = {'schedule': schedule, 'schedule_type': schedule_type,
                  'timezone': timezone, 'start_at': start_at,
                  'end_at': end_at, 'count': count,
                  'start_window': start_window,
                  'completion_window': completion_window,
                  'exclusions': ';'.join(exclusions) if exclusions else None}
        return self._request('GET', '/v1/schedule-preview', params={
            name: value for name, value in params.items()
            if value is not None})

    # Executions.

    def list_executions(self, policy_id=None, instance_id=None, status=None,
                        since=None, all_projects=None, limit=None,
                        marker=None, held=None):
        return self._list('/v1/executions', 'executions', {
            'policy_id': policy_id, 'instance_id': instance_id,
            'status': status, 'since': since, 'held': _flag(held),
            'all_projects': _flag(all_projects), 'limit': limit,
            'marker': marker})

    def get_execution(self, execution_id):
        return self._request('GET', '/v1/executions/%s' % _quote(
            execution_id))['execution']

    def hold_backup(self, execution_id):
        """Hold the execution's backup: retention never deletes it."""
        return self._request('POST', '/v1/executions/%s/hold' % _quote(
            execution_id))['execution']

    def release_backup(self, execution_id):
        """Release the hold on the execution's backup."""
        return self._request('POST', '/v1/executions/%s/release' % _quote(
            execution_id))['execution']

    # Restores.

    def restore_execution(self, execution_id, values=None):
        """Restore the backup of an execution; returns the restore."""
        return self._request('POST', '/v1/executions/%s/restore' % _quote(
            execution_id), body=values or {})['restore']

    def list_restores(self, execution_id=None, policy_id=None, status=None,
                      all_projects=None, limit=None, marker=None):
        return self._list('/v1/restores', 'restores', {
            'execution_id': execution_id, 'policy_id': policy_id,
            'status': status, 'all_projects': _flag(all_projects),
            'limit': limit, 'marker': marker})

    def get_restore(self, restore_id):
        return self._request('GET', '/v1/restores/%s' % _quote(
            restore_id))['restore']

    # Coverage.

    def get_coverage(self, state=None, all_projects=None):
        """The coverage report: ``{"instances", "counts", "incomplete"}``."""
        params = {'state': state, 'all_projects': _flag(all_projects)}
        return self._request('GET', '/v1/coverage', params={
            name: value for name, value in params.items()
            if value is not None})['coverage']

    # Policy templates.

    def create_template(self, values):
        """Create a policy template of the project; returns it."""
        return self._request('POST', '/v1/policy-templates',
                             body={'policy_template': values})[
                                 'policy_template']

    def list_templates(self, all_projects=None, limit=None, marker=None):
        return self._list('/v1/policy-templates', 'policy_templates', {
            'all_projects': _flag(all_projects), 'limit': limit,
            'marker': marker})

    def get_template(self, template_id):
        return self._request('GET', '/v1/policy-templates/%s' % _quote(
            template_id))['policy_template']

    def delete_template(self, template_id):
        self._request('DELETE', '/v1/policy-templates/%s' % _quote(
            template_id))

    def apply_template(self, template_id, instance_ids=None,
                       dry_run=False):
        """Enrol instances with a template, or say what it would create.

        All of the project's when ``instance_ids`` is None; returns
        ``{'dry_run': ..., 'enrolments': [...]}``.
        """
        body = {'dry_run': bool(dry_run)}
        if instance_ids is None:
            body['all_instances'] = True
        else:
            body['instance_ids'] = list(instance_ids)
        return self._request('POST', '/v1/policy-templates/%s/apply' % _quote(
            template_id), body=body)

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
