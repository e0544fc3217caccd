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
"""A client of the real Trove API (26.0.0 in fake mode), for tests, tools.

``tools/trove/environment.py`` starts Trove and passes its URL in
``DBAAS_SCHEDULER_TEST_TROVE_URL`` and its database in
``DBAAS_SCHEDULER_TEST_TROVE_DB``.  Trove's fake Keystone middleware
takes the token as the project (``X-Auth-Token: <project>``), so each
:class:`RealTrove` works in a project of its own -- its backups, quotas
and rate limits are its own -- and reaches Trove as dbaas-scheduler does,
with ``[service_credentials] auth_type = admin_token`` and ``[trove]
endpoint_override``.  The trove tests (``tox -e trove``) and the
benchmark ``tools/benchmarks/trove_polling.py`` use it.
"""

import json
import os
import time
import urllib.error
import urllib.request
import uuid

import fixtures
from keystoneauth1 import loading as ks_loading
import sqlalchemy as sa

from dbaas_scheduler.conf import service_credentials

URL_ENV = 'DBAAS_SCHEDULER_TEST_TROVE_URL'
DB_ENV = 'DBAAS_SCHEDULER_TEST_TROVE_DB'

# Trove's service status codes (trove/instance/service_status.py), as the
# guest agent reports them.
SERVICE_STATUS = {'HEALTHY': 0x21, 'FAILED': 0x08, 'SHUTDOWN': 0x04}

# What fakemode.py registers; Trove's fake guest agent takes this long (s)
# per backup unless told otherwise.
DATASTORE = {'type': 'mysql', 'version': '8.0'}


class TroveError(Exception):
    """An error answer of Trove's API: its status, body and headers."""

    def __init__(self, status, body, headers):
        super().__init__('Trove answered %s: %s' % (status, body))
        self.status = status
        self.body = body
        self.headers = headers


def register_admin_token(conf):
    """Make ``token`` and ``endpoint`` settable with ``self.flags``."""
    group = service_credentials.GROUP
    options = ks_loading.get_auth_plugin_conf_options('admin_token')
    for option in options:
        if option.dest not in conf[group]:
            conf.register_opt(option, group=group)


class RealTrove(fixtures.Fixture):
    """One test's view of the Trove server: a project and its instances."""

    def __init__(self, base_url):
        super().__init__()
        self.base_url = base_url.rstrip('/')

    def _setUp(self):
        self.project_id = self.new_project()

    @staticmethod
    def new_project():
        return uuid.uuid4().hex

    @property
    def endpoint_override(self):
        """``[trove] endpoint_override`` for this server."""
        return self.base_url + '/v1.0/%(project_id)s'

    def configure(self, test, project_id=None):
        """Point ``test.conf`` at Trove, acting in ``project_id``."""
        register_admin_token(test.conf)
        test.flags(group='service_credentials', auth_type='admin_token',
                   token=project_id or self.project_id, timeout=30)
        test.flags(group='trove', endpoint_override=self.endpoint_override)

    def request(self, method, path, body=None, project_id=None,
                token=None, headers=None):
        """``(status, body, headers)``; raises TroveError for >= 400."""
        project_id = project_id or self.project_id
        url = '%s/v1.0/%s/%s' % (self.base_url, project_id, path)
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header('X-Auth-Token', token or project_id)
        request.add_header('Accept', 'application/json')
        if data is not None:
            request.add_header('Content-Type', 'application/json')
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                raw = response.read()
                return (response.status, json.loads(raw) if raw else None,
                        dict(response.headers))
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                decoded = json.loads(raw)
            except ValueError:
                decoded = raw.decode(errors='replace')
            raise TroveError(error.code, decoded, dict(error.headers))

    def wait(self, predicate, timeout=60, interval=0.5, what='condition'):
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError('%s not reached within %d s'
                                     % (what, timeout))
            time.sleep(interval)

    # Instances -------------------------------------------------------

    def start_instance(self, name='db', project_id=None):
        """Ask Trove for an instance; returns its id without waiting."""
        body = {'instance': {'name': name, 'flavorRef': '7',
                             'volume': {'size': 1},
                             'datastore': DATASTORE}}
        return self.request('POST', 'instances', body,
                            project_id=project_id)[1]['instance']['id']

    def instance(self, instance_id, project_id=None):
        return self.request('GET', 'instances/%s' % instance_id,
                            project_id=project_id)[1]['instance']

    def wait_instance(self, instance_id, project_id=None, timeout=90):
        """Wait until the instance is ACTIVE (or failed); return it."""
        def settled():
            instance = self.instance(instance_id, project_id)
            if instance['status'] == 'ERROR':
                raise AssertionError('instance %s failed: %s'
                                     % (instance_id, instance))
            return instance if instance['status'] == 'ACTIVE' and \
                instance.get('operating_status') else None
        return self.wait(settled, timeout, what='instance %s ACTIVE'
                         % instance_id)

    def create_instance(self, name='db', project_id=None):
        """A new instance, ACTIVE; returns its id."""
        instance_id = self.start_instance(name, project_id)
        self.wait_instance(instance_id, project_id)
        return instance_id

    # Backups ---------------------------------------------------------

    def backups(self, instance_id=None, project_id=None):
        """Every backup of the project (or instance), as Trove shows it."""
        found, marker = {}, None
        while True:
            query = 'limit=500' + ('&marker=%s' % marker if marker else '')
            if instance_id:
                query += '&instance_id=%s' % instance_id
            body = self.request('GET', 'backups?' + query,
                                project_id=project_id)[1]
            for backup in body['backups']:
                found.setdefault(backup['id'], backup)
            links = [link for link in body.get('links', ())
                     if link.get('rel') == 'next']
            if not body['backups'] or not links:
                return list(found.values())
            marker = links[0]['href'].rsplit('marker=', 1)[1].split('&')[0]

    def backup(self, backup_id, project_id=None):
        return self.request('GET', 'backups/%s' % backup_id,
                            project_id=project_id)[1]['backup']

    def create_backup(self, instance_id, name='manual', project_id=None,
                      **fields):
        body = {'backup': dict(fields, name=name, instance=instance_id)}
        return self.request('POST', 'backups', body,
                            project_id=project_id)[1]['backup']

    def wait_backup(self, backup_id, project_id=None, timeout=60):
        """Wait until the backup is COMPLETED; return it."""
        def done():
            backup = self.backup(backup_id, project_id)
            if backup['status'] == 'FAILED':
                raise AssertionError('backup %s failed' % backup_id)
            return backup if backup['status'] == 'COMPLETED' else None
        return self.wait(done, timeout, what='backup %s COMPLETED'
                         % backup_id)

    def wait_instance_idle(self, instance_id, project_id=None, timeout=60):
        """Wait until no backup of the instance runs (status ACTIVE)."""
        return self.wait(
            lambda: self.instance(instance_id, project_id)['status']
            == 'ACTIVE', timeout, what='instance %s idle' % instance_id)

    def set_operating_status(self, instance_id, status):
        """Report the instance's database as ``status``, as its guest would.

        Trove shows it as the instance's ``operating_status`` (the instance
        stays ACTIVE).
        """
        engine = sa.create_engine(os.environ[DB_ENV])
        try:
            with engine.begin() as connection:
                connection.execute(
                    sa.text('UPDATE service_statuses SET status_id = :code, '
                            'status_description = :status '
                            'WHERE instance_id = :instance'),
                    {'code': SERVICE_STATUS[status], 'status': status,
                     'instance': instance_id})
        finally:
            engine.dispose()

    def set_backup_quota(self, project_id, limit):
        """Trove's quota of backups for ``project_id`` (admin API)."""
        self.request('PUT', 'mgmt/quotas/%s' % project_id,
                     {'quotas': {'backups': limit}},
                     project_id='admin', token='admin')
