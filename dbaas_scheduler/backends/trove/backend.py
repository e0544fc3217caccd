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
"""The ``trove`` backend's interface: :class:`TroveBackend`."""

import urllib.parse

from keystoneauth1 import loading as ks_loading
from oslo_log import log as logging
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.trove import client
from dbaas_scheduler.backends.trove import errors
from dbaas_scheduler.backends.trove import scratch as trove_scratch
from dbaas_scheduler.backends.trove import views
from dbaas_scheduler.conf import service_credentials
from dbaas_scheduler import exception
from dbaas_scheduler import keystone

LOG = logging.getLogger(__name__)

# Backups asked for per list request (Trove's own default page is 20;
# Trove 26 takes any limit).
PAGE_SIZE = 500
# Up to this many backups are looked at one by one; more, by listing.
SHOW_AT_MOST = 2


def _quote(identifier):
    return urllib.parse.quote(str(identifier), safe='')


class TroveBackend(base.BackupBackend):
    """Backups of Trove instances, in the project of each policy."""

    name = errors.NAME
    needs_trust = True

    def __init__(self, conf):
        super().__init__(conf)
        self._client = client.TroveClient(conf)
        self._scratch = trove_scratch.ScratchInstances(self)

    @classmethod
    def call_timeout(cls, conf):
        # Each request (to Keystone or Trove) waits at most this long for
        # the connection and for each read of the answer.
        return client.request_timeout(conf)

    def _show_instance(self, policy):
        """Trove's instance body, and its answer's request id."""
        action = 'show instance %s' % policy.instance_id
        response = self._client.request(
            policy, 'GET', 'instances/%s' % _quote(policy.instance_id),
            action)
        if response.status_code == 404:
            raise errors.not_found_error(response, policy, action)
        body = errors.json_body(response, 'instance', action)
        return body['instance'], errors.request_id(response)

    def _check_instance(self, policy):
        """Raise why the instance cannot be backed up now, if Trove says."""
        instance, request_id = self._show_instance(policy)
        error = errors.instance_check_error(policy, instance, request_id)
        if error is not None:
            raise error

    def instance_id_error(self, instance_id):
        if not uuidutils.is_uuid_like(instance_id):
            return ('Trove names its instances by UUID, such as '
                    '6e1c4b5a-2f3d-4e8a-9b7c-1d2e3f4a5b6c (openstack '
                    'database instance list shows them)')
        return None

    def check_instance(self, policy):
        # Only whether the instance exists in the policy's project, as the
        # worker will ask: its status may well change before the first run.
        if ks_loading.load_auth_from_conf_options(
                self.conf, service_credentials.GROUP) is None:
            raise exception.BackendNotConfigured(
                backend=self.name, who=keystone.who_must_act(self.conf),
                reason='it reaches Trove as the service user of '
                       '[service_credentials], which has no auth_type. Set '
                       'auth_type = password, auth_url, username, password, '
                       'project_name, user_domain_name and '
                       'project_domain_name there, and [trove] '
                       'endpoint_override when Trove is not in the '
                       'Keystone catalog')
        self._show_instance(policy)

    def create_backup(self, policy, name, description):
        # Trove 26 accepts a backup of an instance whose database is down
        # (operating_status FAILED) -- a backup that cannot succeed -- and
        # answers 422 to a busy one: the instance is looked at first.
        self._check_instance(policy)
        action = 'create a backup of instance %s' % policy.instance_id
        response = self._client.request(
            policy, 'POST', 'backups', action,
            json=views.create_request(policy, name, description))
        if response.status_code == 404:
            raise errors.not_found_error(response, policy, action)
        backup = views.backup_from_trove(
            errors.json_body(response, 'backup', action)['backup'])
        LOG.info('Trove accepted backup %(backup)s of instance %(instance)s '
                 'for policy %(policy)s',
                 {'backup': backup.id, 'instance': policy.instance_id,
                  'policy': getattr(policy, 'id', None)})
        return backup

    def get_backup(self, policy, backup_id):
        action = 'show backup %s' % backup_id
        response = self._client.request(
            policy, 'GET', 'backups/%s' % _quote(backup_id), action)
        if response.status_code == 404:
            raise base.BackupNotFound(backend=errors.NAME, backup_id=backup_id)
        return views.backup_from_trove(
            errors.json_body(response, 'backup', action)['backup'])

    def get_backups(self, policy, backup_ids):
        """Several backups of the project: by listing it, page by page.

        Trove lists the most recently updated first, so the backups still
        in progress -- what the poller asks about -- come on the first
        pages, and listing stops once all are found.  The few not listed
        (gone, or moved between pages) are asked for one by one.
        """
        wanted = set(backup_ids)
        if len(wanted) <= SHOW_AT_MOST:
            return super().get_backups(policy, wanted)
        found = {}
        for page in self._backup_pages(policy, project_wide=True):
            for backup in page:
                if backup.id in wanted:
                    found.setdefault(backup.id, backup)
            if len(found) == len(wanted):
                break
        found.update(super().get_backups(policy, wanted - set(found)))
        return found

    def _backup_pages(self, policy, project_wide=False):
        """The instance's (or project's) backups, page by page."""
        if project_wide:
            action = 'list the backups of project %s' % policy.project_id
            params = {'limit': PAGE_SIZE}
        else:
            action = 'list the backups of instance %s' % policy.instance_id
            params = {'instance_id': policy.instance_id, 'limit': PAGE_SIZE}
        seen = set()
        while True:
            response = self._client.request(policy, 'GET', 'backups',
                                            action, params=params)
            if response.status_code == 404:
                # Trove lists an unknown instance as empty: a 404 is a wrong
                # URL, and "no backups" here would start a duplicate.
                raise errors.not_found_error(response, policy, action)
            body = errors.json_body(response, 'backups', action)
            yield [views.backup_from_trove(item) for item in body['backups']]
            marker = views.next_marker(body.get('links'))
            if not body['backups'] or not marker or marker in seen:
                return
            seen.add(marker)
            params = dict(params, marker=marker)

    lists_instances = True

    def project_instances(self, actor):
        """Trove's body of every instance of ``actor``'s project."""
        action = 'list the instances of project %s' % actor.project_id
        params = {'limit': PAGE_SIZE}
        seen = set()
        while True:
            response = self._client.request(actor, 'GET', 'instances',
                                            action, params=params)
            if response.status_code == 404:
                raise errors.not_found_error(response, actor, action)
            body = errors.json_body(response, 'instances', action)
            yield from body['instances']
            marker = views.next_marker(body.get('links'))
            if not body['instances'] or not marker or marker in seen:
                return
            seen.add(marker)
            params = dict(params, marker=marker)

    def list_instances(self, actor):
        found = {}
        for instance in self.project_instances(actor):
            found.setdefault(instance['id'], instance.get('name'))
        return found

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
        response = self._client.request(
            policy, 'DELETE', 'backups/%s' % _quote(backup_id),
            'delete backup %s' % backup_id)
        if response.status_code == 404:
            LOG.debug('Backup %s was already gone from Trove', backup_id)

    # Restores: a new instance from the backup (Trove's restorePoint).

    _LOCAL_ONLY = ('target', 'replace', 'allow_source')

    def check_restore(self, policy, backup_id, params):
        given = sorted(set(params or {}).intersection(self._LOCAL_ONLY))
        if given:
            raise exception.Invalid(
                reason='%s apply to local restores only: a Trove backup is '
                       'restored into a new instance' % ', '.join(given))

    @staticmethod
    def restore_name(source_name, restore_id):
        """The new instance's name when the request gives none."""
        return '%s-restore-%s' % (source_name, restore_id[:8])

    def _source_instance(self, policy):
        try:
            instance, _ = self._show_instance(policy)
        except base.InstanceNotFound:
            return None
        return instance

    def restore_backup(self, policy, backup_id, params, restore_id):
        params = params or {}
        source = self._source_instance(policy) or {}
        flavor = params.get('flavor_id') or (source.get('flavor') or {}).get(
            'id')
        size = params.get('volume_size') or (source.get('volume') or {}).get(
            'size')
        if not flavor or not size:
            raise base.PermanentBackendError(
                backend=self.name,
                reason='the source instance %s is gone, so its flavor and '
                       'volume size are unknown; give flavor_id and '
                       'volume_size' % policy.instance_id)
        name = params.get('name') or self.restore_name(
            source.get('name') or policy.instance_id, restore_id)
        action = 'restore backup %s into a new instance' % backup_id
        response = self._client.request(
            policy, 'POST', 'instances', action,
            json=views.restore_request(name, flavor, size, backup_id,
                                       source.get('datastore')))
        if response.status_code == 404:
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        instance = errors.json_body(response, 'instance', action)['instance']
        LOG.info('Trove is restoring backup %(backup)s into new instance '
                 '%(instance)s (%(name)s) for restore %(restore)s',
                 {'backup': backup_id, 'instance': instance['id'],
                  'name': name, 'restore': restore_id})
        return self._progress(instance)

    def find_restore(self, policy, restore_id, params):
        """The instance a lost worker asked for: by its (given) name."""
        source = self._source_instance(policy) or {}
        name = (params or {}).get('name') or self.restore_name(
            source.get('name') or policy.instance_id, restore_id)
        for instance in self.project_instances(policy):
            if instance.get('name') == name:
                return self._progress(instance)
        return None

    def get_restore(self, policy, target_id):
        action = 'show instance %s' % target_id
        response = self._client.request(
            policy, 'GET', 'instances/%s' % _quote(target_id), action)
        if response.status_code == 404:
            return base.RestoreProgress(
                target_id=target_id, failed=True,
                reason='the new instance %s is gone' % target_id)
        return self._progress(
            errors.json_body(response, 'instance', action)['instance'])

    @staticmethod
    def _progress(instance):
        """A restore's progress from the new instance's Trove body."""
        status = instance.get('status')
        operating = instance.get('operating_status')
        target_id = instance['id']
        if status in ('ERROR', 'FAILED', 'SHUTDOWN'):
            fault = (instance.get('fault') or {}).get('message')
            return base.RestoreProgress(
                target_id=target_id, failed=True,
                reason='the new instance %s is %s%s' % (
                    target_id, status, ': %s' % fault if fault else ''))
        if status in ('ACTIVE', 'HEALTHY') and operating in (None, 'HEALTHY'):
            return base.RestoreProgress(target_id=target_id, done=True)
        return base.RestoreProgress(
            target_id=target_id,
            reason='the new instance %s is %s (database %s)' % (
                target_id, status, operating or 'unknown'))

    # Verifications: a scratch instance restored from the backup
    # (scratch.py).

    #: The service has no credentials on the database inside a Trove
    #: instance: a policy's ``verify_check`` cannot run there.
    runs_sql_checks = False

    def verify_backup(self, policy, backup_id, check, scratch):
        return self._scratch.verify(policy, backup_id, check, scratch)

    def delete_scratch(self, policy, scratch):
        self._scratch.delete_scratch(policy, scratch)
