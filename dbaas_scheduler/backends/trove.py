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
"""The trove backend: backups through the Trove v1.0 REST API."""

import collections
import datetime
import re
import threading
import urllib.parse

from keystoneauth1 import adapter as ks_adapter
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading as ks_loading
from keystoneauth1 import session as ks_session
from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base
from dbaas_scheduler.conf import service_credentials
from dbaas_scheduler import keystone
from dbaas_scheduler import version

LOG = logging.getLogger(__name__)

NAME = 'trove'

# Used when [service_credentials] timeout is unset: without a timeout a
# Trove that stops answering holds a worker thread forever.
DEFAULT_TIMEOUT = 60

# Backups asked for per list request (Trove's own default page is 20).
PAGE_SIZE = 100

# Trove's API schema limit for a backup's name and description.
MAX_TEXT = 255

GIB = 1024 ** 3

# Trove instance statuses (trove/instance/models.py) in which a backup can
# start, and those a person has to repair; any other status (BUILD, BACKUP,
# REBOOT, RESIZE, UPGRADE, ...) passes by itself: try again later.
READY_STATUSES = frozenset(['ACTIVE', 'HEALTHY', 'RESTART_REQUIRED'])
BROKEN_STATUSES = frozenset(['ERROR', 'FAILED', 'SHUTDOWN'])

# RESTORED: a backup copied in from another region, complete and usable.
_STATUS_ALIASES = {'RESTORED': base.BackupStatus.COMPLETED}

_PROJECT_PLACEHOLDER = re.compile(r'%\((?:project|tenant)_id\)s')

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


def parse_status(value):
    """A Trove backup status as a :class:`base.BackupStatus` value.

    An unknown one is kept: not terminal, it is watched until the timeout.
    """
    status = str(value or '').strip().upper()
    return _STATUS_ALIASES.get(status, status)


def parse_time(value):
    """A Trove timestamp (UTC, mostly without offset) as an aware datetime.

    None if absent or unreadable.
    """
    try:
        parsed = timeutils.parse_isotime(str(value)) if value else None
    except ValueError:
        return None
    return parsed and parsed.astimezone(datetime.timezone.utc)


def size_in_bytes(size_gb):
    """Trove's ``size`` (GB, a float) in bytes; None when unknown."""
    try:
        return int(round(float(size_gb) * GIB))
    except (TypeError, ValueError, OverflowError):
        return None


def failure_reason(body, status):
    """Why a backup did not succeed, as far as Trove tells; else None."""
    fault = body.get('fault') or {}
    reason = fault.get('message') if isinstance(fault, dict) else fault
    if not reason and status == base.BackupStatus.FAILED:
        # Trove's backup view has no reason; its guest agent logs it.
        reason = ('Trove gives no reason; the log of the Trove guest agent '
                  'of instance %s tells why' % body.get('instance_id'))
    return str(reason) if reason else None


def backup_from_trove(body):
    """A :class:`base.Backup` from one Trove ``backup`` object."""
    status = parse_status(body.get('status'))
    return base.Backup(
        id=body['id'], instance_id=body.get('instance_id'), status=status,
        created_at=parse_time(body.get('created')),
        updated_at=parse_time(body.get('updated')),
        name=body.get('name'), description=body.get('description'),
        parent_id=body.get('parent_id'),
        size_bytes=size_in_bytes(body.get('size')),
        location=body.get('locationRef'),
        fault=failure_reason(body, status))


def shorten(text, keep_end):
    """``text`` cut to Trove's limit, keeping its last ``keep_end`` chars."""
    if len(text) <= MAX_TEXT:
        return text
    keep_end = min(keep_end, MAX_TEXT - 3)
    tail = text[len(text) - keep_end:]
    return text[:MAX_TEXT - keep_end - 3] + '...' + tail


def create_request(policy, name, description):
    """The body of ``POST /backups`` (Trove api-ref, "Create backup")."""
    params = policy.backup_params or {}
    # The worker's names end in the scheduled time ("-20270131T023000Z")
    # and its descriptions in the execution tag: both survive the limit.
    backup = {'name': shorten(name, 17), 'instance': policy.instance_id}
    if description:
        tag_at = description.rfind(base.execution_tag(''))
        backup['description'] = shorten(
            description, len(description) - tag_at if tag_at >= 0 else 0)
    if params.get('incremental') is not None:
        # Trove's schema takes 0 or 1 here, not a JSON boolean.
        backup['incremental'] = int(bool(params['incremental']))
    for key in ('parent_id', 'swift_container'):
        if params.get(key):
            backup[key] = params[key]
    return {'backup': backup}


def next_marker(links):
    """The ``marker`` of a Trove list's ``next`` link, or None.

    The link is not followed: Trove forces its scheme to https
    (trove/common/pagination.py), wrong for a Trove served over http.
    """
    for link in links or ():
        if isinstance(link, dict) and link.get('rel') == 'next':
            query = urllib.parse.urlsplit(link.get('href') or '').query
            marker = urllib.parse.parse_qs(query).get('marker')
            if marker:
                return marker[-1]
    return None


def trove_endpoint(template, project_id):
    """``[trove] endpoint_override`` for one project, ready for keystoneauth.

    ``%(project_id)s`` (or ``%(tenant_id)s``) becomes ``project_id``.
    keystoneauth %-formats an endpoint override itself (with the token's
    project), so every other ``%`` is escaped.
    """
    parsed = urllib.parse.urlsplit(template)
    if parsed.scheme not in ('http', 'https') or not parsed.netloc:
        raise ValueError('[trove] endpoint_override %r is not an http(s) '
                         'URL such as http://trove.example.com:8779/v1.0/'
                         '%%(project_id)s' % template)
    parts = _PROJECT_PLACEHOLDER.split(template.rstrip('/'))
    return project_id.replace('%', '%%').join(
        part.replace('%', '%%') for part in parts)


def catalog_endpoint(endpoint, token_project_id, project_id):
    """The catalog's Trove URL, moved to the policy's project.

    It ends in the token's project; with the policy's project instead,
    Trove refuses (403) a token of another project rather than act there.
    """
    endpoint = endpoint.rstrip('/')
    if token_project_id and endpoint.endswith('/' + token_project_id):
        endpoint = endpoint[:-len(token_project_id)] + project_id
    return endpoint.replace('%', '%%')


def trove_message(response):
    """Trove's own explanation in an error response."""
    try:
        body = response.json()
    except ValueError:
        body = None
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
    text = text.strip()
    return text if text.endswith(('.', '!', '?')) else text + '.'


def error_from_response(response, policy, action):
    """The classified exception for a Trove error answer other than 404."""
    code = response.status_code
    what = 'Trove answered HTTP %d when asked to %s: %s' % (
        code, action, trove_message(response))
    what += _ADVICE.get(code, '') % {'project': policy.project_id}
    if code in (409, 422):
        return base.InstanceBusy(backend=NAME, instance_id=policy.instance_id,
                                 reason=what)
    if code == 403:
        return base.BackendForbidden(
            backend=NAME, instance_id=policy.instance_id, reason=what)
    if code == 429 or (code >= 500 and code != 501):
        return base.TransientBackendError(
            backend=NAME, reason=what + ' Trove or a service behind it is '
                                        'failing.')
    # 400, 401, 413, 501 and anything unexpected: the same request would
    # fail the same way.
    return base.PermanentBackendError(backend=NAME, reason=what)


def not_found_error(response, policy, action):
    """The exception for a 404: the instance is gone, or the URL is wrong.

    Trove's 404 for an instance names it ("Resource <id> cannot be found.");
    another 404 (a wrong endpoint) must not disable the policy.
    """
    message = trove_message(response)
    what = 'Trove answered HTTP 404 when asked to %s in project %s: %s' % (
        action, policy.project_id, message)
    if policy.instance_id in message:
        return base.InstanceNotFound(
            backend=NAME, instance_id=policy.instance_id, reason=what)
    return base.PermanentBackendError(
        backend=NAME, reason=what + ' Check [trove] endpoint_override and '
                                    'the parent_id of the backup parameters.')


def instance_check_error(policy, instance):
    """Why Trove's ``instance`` cannot be backed up now; None if it can."""
    status = str(instance.get('status') or 'UNKNOWN').upper()
    if status in READY_STATUSES:
        return None
    fault = instance.get('fault')
    fault = fault.get('message') if isinstance(fault, dict) else fault
    detail = status + (' (%s)' % fault if fault else '')
    if status in BROKEN_STATUSES:
        return base.PermanentBackendError(
            backend=NAME, reason='instance %s is %s in Trove; it cannot be '
                                 'backed up until it is repaired'
                                 % (policy.instance_id, detail))
    return base.InstanceBusy(
        backend=NAME, instance_id=policy.instance_id,
        reason='its Trove status is %s' % detail)


def json_body(response, key, action):
    """The decoded body of a success; it must hold ``key``."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict) or key not in body:
        # A proxy's page or a cut answer: worth another try.
        raise base.TransientBackendError(
            backend=NAME,
            reason='Trove answered HTTP %d without a "%s" object when asked '
                   'to %s' % (response.status_code, key, action))
    return body


def _quote(identifier):
    return urllib.parse.quote(str(identifier), safe='')


class TroveBackend(base.BackupBackend):
    """Backups of Trove instances, in the project of each policy."""

    name = NAME
    needs_trust = True

    # Trust-scoped adapters kept (each caches its token until it expires).
    MAX_TRUST_ADAPTERS = 1024

    def __init__(self, conf):
        super().__init__(conf)
        self._lock = threading.Lock()
        self._session = None
        self._service_adapter = None
        self._trust_adapters = collections.OrderedDict()

    def _get_session(self):
        if self._session is None:
            group = service_credentials.GROUP
            session = ks_loading.load_session_from_conf_options(
                self.conf, group,
                timeout=self.conf[group].timeout or DEFAULT_TIMEOUT)
            # requests keeps 10 connections per host: more worker threads
            # would open and discard connections, with a warning each time.
            old = session.session.get_adapter('https://')
            pooled = ks_session.TCPKeepAliveAdapter(
                pool_maxsize=(self.conf.worker.pool_size
                              + self.conf.worker.poll_concurrency),
                tls_ciphers=getattr(old, 'tls_ciphers', None),
                tls_min_version=getattr(old, 'tls_min_version', None))
            for scheme in ('https://', 'http://'):
                session.session.mount(scheme, pooled)
            self._session = session
        return self._session

    def _adapter(self, policy):
        """The keystoneauth Adapter that acts for ``policy``.

        A policy with a trust acts as the service user scoped to it, in the
        user's project; one without (noauth deployments, policies made by
        dbaas-scheduler-manage) as the service user itself.
        """
        trust_id = getattr(policy, 'trust_id', None)
        with self._lock:
            if trust_id:
                adapter = self._trust_adapters.get(trust_id)
                if adapter is None:
                    adapter = self._new_adapter(keystone.trust_auth(
                        self.conf, trust_id))
                    self._trust_adapters[trust_id] = adapter
                    while len(self._trust_adapters) > self.MAX_TRUST_ADAPTERS:
                        self._trust_adapters.popitem(last=False)
                self._trust_adapters.move_to_end(trust_id)
                return adapter
            if self._service_adapter is None:
                self._service_adapter = self._new_adapter(
                    ks_loading.load_auth_from_conf_options(
                        self.conf, service_credentials.GROUP))
            return self._service_adapter

    def _new_adapter(self, auth):
        if auth is None:
            raise base.PermanentBackendError(
                backend=NAME,
                reason='[service_credentials] has no auth_type; set it (e.g. '
                       'password) with the credentials of the '
                       'dbaas-scheduler service user')
        return ks_adapter.Adapter(
            self._get_session(), auth=auth,
            service_type=self.conf.trove.service_type,
            interface=self.conf.trove.interface,
            region_name=self.conf.trove.region_name,
            client_name='dbaas-scheduler',
            client_version=version.version_string())

    def _endpoint(self, adapter, policy):
        """The Trove URL of the policy's project (``.../v1.0/<project>``)."""
        if self.conf.trove.endpoint_override:
            try:
                return trove_endpoint(self.conf.trove.endpoint_override,
                                      policy.project_id)
            except ValueError as exc:
                raise base.PermanentBackendError(backend=NAME,
                                                 reason=str(exc))
        endpoint = adapter.get_endpoint()
        if not endpoint:
            raise ks_exc.EndpointNotFound()
        return catalog_endpoint(endpoint, adapter.get_project_id(),
                                policy.project_id)

    def _request(self, policy, method, path, action, **kwargs):
        """One Trove request: a success or a 404, else a backend error."""
        try:
            adapter = self._adapter(policy)
            response = adapter.request(
                path, method, endpoint_override=self._endpoint(adapter,
                                                               policy),
                raise_exc=False, headers={'Accept': 'application/json'},
                **kwargs)
        except ks_exc.EndpointNotFound:
            raise base.PermanentBackendError(
                backend=NAME,
                reason='no Trove endpoint (service type %s, interface %s, '
                       'region %s) in the service catalog to %s: set '
                       '[trove] endpoint_override or fix the catalog' % (
                           self.conf.trove.service_type,
                           self.conf.trove.interface,
                           self.conf.trove.region_name or 'any', action))
        except ks_exc.ConnectionError as exc:
            raise base.TransientBackendError(
                backend=NAME, reason='could not reach Trove (or Keystone) to '
                                     '%s: %s' % (action, exc))
        except ks_exc.HttpError as exc:
            # Raised by authentication only: Trove's answers come back.
            trust_id = getattr(policy, 'trust_id', None)
            if trust_id and (exc.http_status or 0) in (401, 403, 404):
                # Keystone answers 401 both to a deleted trust and to a
                # wrong service password: only the first is the policy's.
                if keystone.service_credentials_work(self.conf):
                    raise base.TrustBroken(
                        backend=NAME, trust_id=trust_id,
                        reason='Keystone answered %s when asked for a token '
                               'to %s' % (exc.http_status, action))
                raise base.PermanentBackendError(
                    backend=NAME,
                    reason='Keystone rejects the service user of '
                           '[service_credentials] (answer %s when asked for '
                           'a token to %s): fix its credentials' % (
                               exc.http_status, action))
            error = (base.TransientBackendError
                     if (exc.http_status or 0) >= 500
                     else base.PermanentBackendError)
            raise error(backend=NAME,
                        reason='Keystone did not authenticate the service '
                               'user of [service_credentials] to %s: %s'
                               % (action, exc))
        except ks_exc.ClientException as exc:
            raise base.PermanentBackendError(
                backend=NAME, reason='could not %s: %s' % (action, exc))
        if response.status_code < 400 or response.status_code == 404:
            return response
        raise error_from_response(response, policy, action)

    def _check_instance(self, policy):
        action = 'show instance %s' % policy.instance_id
        response = self._request(
            policy, 'GET', 'instances/%s' % _quote(policy.instance_id),
            action)
        if response.status_code == 404:
            raise not_found_error(response, policy, action)
        body = json_body(response, 'instance', action)
        error = instance_check_error(policy, body['instance'])
        if error is not None:
            raise error

    def create_backup(self, policy, name, description):
        self._check_instance(policy)
        action = 'create a backup of instance %s' % policy.instance_id
        response = self._request(
            policy, 'POST', 'backups', action,
            json=create_request(policy, name, description))
        if response.status_code == 404:
            raise not_found_error(response, policy, action)
        backup = backup_from_trove(
            json_body(response, 'backup', action)['backup'])
        LOG.info('Trove accepted backup %(backup)s of instance %(instance)s '
                 'for policy %(policy)s',
                 {'backup': backup.id, 'instance': policy.instance_id,
                  'policy': getattr(policy, 'id', None)})
        return backup

    def get_backup(self, policy, backup_id):
        action = 'show backup %s' % backup_id
        response = self._request(
            policy, 'GET', 'backups/%s' % _quote(backup_id), action)
        if response.status_code == 404:
            raise base.BackupNotFound(backend=NAME, backup_id=backup_id)
        return backup_from_trove(
            json_body(response, 'backup', action)['backup'])

    def _backup_pages(self, policy):
        """The instance's backups, page by page, following ``marker``."""
        action = 'list the backups of instance %s' % policy.instance_id
        params = {'instance_id': policy.instance_id, 'limit': PAGE_SIZE}
        seen = set()
        while True:
            response = self._request(policy, 'GET', 'backups', action,
                                     params=params)
            if response.status_code == 404:
                # Trove lists an unknown instance as empty: a 404 is a wrong
                # URL, and "no backups" here would start a duplicate.
                raise not_found_error(response, policy, action)
            body = json_body(response, 'backups', action)
            yield [backup_from_trove(item) for item in body['backups']]
            marker = next_marker(body.get('links'))
            if not body['backups'] or not marker or marker in seen:
                return
            seen.add(marker)
            params = dict(params, marker=marker)

    def find_backup(self, policy, tag):
        for page in self._backup_pages(policy):
            for backup in page:
                if tag in (backup.description or ''):
                    return backup
        return None

    def list_backups(self, policy):
        # Trove pages by offset over the most recently updated first, so a
        # backup that changes state between two pages can come twice.
        backups = {}
        for page in self._backup_pages(policy):
            for backup in page:
                backups.setdefault(backup.id, backup)
        return list(backups.values())

    def delete_backup(self, policy, backup_id):
        response = self._request(
            policy, 'DELETE', 'backups/%s' % _quote(backup_id),
            'delete backup %s' % backup_id)
        if response.status_code == 404:
            LOG.debug('Backup %s was already gone from Trove', backup_id)
