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
"""The trove backend's parsing, URL building and error classification."""

import concurrent.futures
import datetime
import json
import types
from unittest import mock

from keystoneauth1 import exceptions as ks_exc
import requests

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends import trove
from dbaas_scheduler.tests import base

UTC = datetime.timezone.utc
INSTANCE = '44b277eb-39be-4921-be31-3d61b43651d7'

# api-ref/source/samples/backup-get-response.json of openstack/trove.
TROVE_BACKUP = {
    'created': '2014-10-30T12:30:00',
    'datastore': {'type': 'mysql', 'version': '5.5',
                  'version_id': 'b00000b0-00b0-0b00-00b0-000b000000bb'},
    'description': 'My Backup',
    'id': 'a9832168-7541-4536-b8d9-a8a9b79cf1b4',
    'instance_id': INSTANCE,
    'locationRef': 'http://localhost/path/to/backup',
    'name': 'snapshot',
    'parent_id': None,
    'size': 0.14,
    'status': 'COMPLETED',
    'updated': '2014-10-30T12:30:00',
    'storage_driver': 'cinder',
}


def make_policy(**backup_params):
    return types.SimpleNamespace(
        id='policy-1', instance_id=INSTANCE, project_id='project-1',
        backup_params=backup_params or None)


def make_response(status, body=None, content_type='application/json',
                  reason=None):
    response = requests.Response()
    response.status_code = status
    response.reason = reason
    if body is not None:
        response._content = (body.encode() if isinstance(body, str)
                             else json.dumps(body).encode())
        response.headers['Content-Type'] = content_type
    else:
        response._content = b''
    return response


class TestParsing(base.TestCase):

    def test_status(self):
        self.assertEqual('COMPLETED', trove.parse_status('COMPLETED'))
        self.assertEqual('BUILDING', trove.parse_status('building'))
        self.assertEqual('COMPLETED', trove.parse_status('RESTORED'))
        self.assertEqual('DELETE_FAILED',
                         trove.parse_status('DELETE_FAILED'))
        # Unknown statuses stay, and are not terminal.
        self.assertEqual('PAUSED', trove.parse_status('PAUSED'))
        self.assertNotIn('PAUSED', backends.BackupStatus.TERMINAL)

    def test_time_without_offset_is_utc(self):
        self.assertEqual(datetime.datetime(2014, 10, 30, 12, 30, tzinfo=UTC),
                         trove.parse_time('2014-10-30T12:30:00'))

    def test_time_with_offset_becomes_utc(self):
        parsed = trove.parse_time('2015-08-27T09:49:58-05:00')
        self.assertEqual(datetime.datetime(2015, 8, 27, 14, 49, 58,
                                           tzinfo=UTC), parsed)
        self.assertEqual(UTC, parsed.tzinfo)
        self.assertEqual(
            datetime.datetime(2019, 12, 23, 22, 38, 42, 123456, tzinfo=UTC),
            trove.parse_time('2019-12-23T22:38:42.123456Z'))

    def test_missing_or_bad_time(self):
        for value in (None, '', 'yesterday', '2014-13-45T00:00:00'):
            self.assertIsNone(trove.parse_time(value), value)

    def test_size_gb_to_bytes(self):
        self.assertEqual(150323855, trove.size_in_bytes(0.14))
        self.assertEqual(2 * 1024 ** 3, trove.size_in_bytes('2'))
        self.assertEqual(0, trove.size_in_bytes(0))
        for value in (None, '', 'big', float('inf')):
            self.assertIsNone(trove.size_in_bytes(value), value)

    def test_backup_from_api_ref_sample(self):
        backup = trove.backup_from_trove(TROVE_BACKUP)
        self.assertEqual(backends.Backup(
            id='a9832168-7541-4536-b8d9-a8a9b79cf1b4', instance_id=INSTANCE,
            status='COMPLETED',
            created_at=datetime.datetime(2014, 10, 30, 12, 30, tzinfo=UTC),
            updated_at=datetime.datetime(2014, 10, 30, 12, 30, tzinfo=UTC),
            name='snapshot', description='My Backup', parent_id=None,
            size_bytes=150323855, location='http://localhost/path/to/backup',
            fault=None), backup)
        self.assertTrue(backup.finished)

    def test_new_backup_has_no_size(self):
        backup = trove.backup_from_trove(
            dict(TROVE_BACKUP, status='NEW', size=None, locationRef=None))
        self.assertIsNone(backup.size_bytes)
        self.assertIsNone(backup.location)
        self.assertFalse(backup.finished)

    def test_failed_backup_reason(self):
        backup = trove.backup_from_trove(dict(TROVE_BACKUP, status='FAILED'))
        self.assertIn('guest agent of instance %s' % INSTANCE, backup.fault)
        given = trove.backup_from_trove(dict(
            TROVE_BACKUP, status='FAILED',
            fault={'message': 'Swift is full'}))
        self.assertEqual('Swift is full', given.fault)

    def test_next_marker(self):
        # Trove's link: the request URL, https forced, a new marker.
        links = [{'rel': 'next',
                  'href': 'https://trove:8779/v1.0/p/backups?instance_id=i'
                          '&limit=100&marker=200'}]
        self.assertEqual('200', trove.next_marker(links))
        self.assertIsNone(trove.next_marker(None))
        self.assertIsNone(trove.next_marker([]))
        self.assertIsNone(trove.next_marker(
            [{'rel': 'self', 'href': 'https://t/backups?marker=5'}]))
        self.assertIsNone(trove.next_marker(
            [{'rel': 'next', 'href': 'https://t/backups'}]))


class TestCreateRequest(base.TestCase):

    def test_minimal(self):
        self.assertEqual(
            {'backup': {'name': 'n', 'instance': INSTANCE,
                        'description': 'd'}},
            trove.create_request(make_policy(), 'n', 'd'))

    def test_no_description(self):
        self.assertEqual({'backup': {'name': 'n', 'instance': INSTANCE}},
                         trove.create_request(make_policy(), 'n', None))

    def test_backup_params(self):
        policy = make_policy(incremental=True, parent_id='p',
                             swift_container='c', storage_driver='cinder')
        self.assertEqual(
            {'backup': {'name': 'n', 'instance': INSTANCE,
                        'description': 'd', 'incremental': 1,
                        'parent_id': 'p', 'swift_container': 'c'}},
            trove.create_request(policy, 'n', 'd'))

    def test_incremental_is_an_integer(self):
        body = trove.create_request(make_policy(incremental=False), 'n', 'd')
        self.assertEqual(0, body['backup']['incremental'])
        self.assertNotIsInstance(body['backup']['incremental'], bool)

    def test_long_texts_keep_their_ends(self):
        tag = backends.execution_tag('0b0e7c4e-6a8e-4f0e-9d1c-3a0c1f1b9e11')
        name = 'p' * 300 + '-20270131T023000Z'
        description = 'Backup of policy %s. %s' % ('x' * 300, tag)
        backup = trove.create_request(make_policy(), name,
                                      description)['backup']
        self.assertEqual(255, len(backup['name']))
        self.assertTrue(backup['name'].endswith('-20270131T023000Z'))
        self.assertEqual(255, len(backup['description']))
        self.assertTrue(backup['description'].endswith(tag))
        self.assertEqual('a' * 255, trove.shorten('a' * 255, 10))
        self.assertEqual(255, len(trove.shorten('a' * 400, 0)))


class TestEndpoints(base.TestCase):

    def test_project_placeholder(self):
        self.assertEqual(
            'http://trove:8779/v1.0/abc',
            trove.trove_endpoint('http://trove:8779/v1.0/%(project_id)s',
                                 'abc'))
        self.assertEqual(
            'https://trove/v1.0/abc',
            trove.trove_endpoint('https://trove/v1.0/%(tenant_id)s/', 'abc'))

    def test_without_placeholder(self):
        self.assertEqual('http://trove:8779/v1.0/fixed',
                         trove.trove_endpoint('http://trove:8779/v1.0/fixed',
                                              'abc'))

    def test_percent_signs_survive_keystoneauth_formatting(self):
        endpoint = trove.trove_endpoint(
            'http://trove/db%20api/v1.0/%(project_id)s', 'abc')
        # keystoneauth applies "endpoint_override % values" itself.
        self.assertEqual('http://trove/db%20api/v1.0/abc',
                         endpoint % {'project_id': 'token-project'})

    def test_not_a_url(self):
        for template in ('trove:8779/v1.0', '/v1.0/%(project_id)s', ''):
            self.assertRaises(ValueError, trove.trove_endpoint, template,
                              'abc')

    def test_catalog_endpoint_moves_to_the_policy_project(self):
        self.assertEqual(
            'http://trove:8779/v1.0/user-project',
            trove.catalog_endpoint('http://trove:8779/v1.0/service-project/',
                                   'service-project', 'user-project'))
        self.assertEqual(
            'http://trove:8779/v1.0/same',
            trove.catalog_endpoint('http://trove:8779/v1.0/same', 'same',
                                   'same'))
        self.assertEqual(
            'http://trove/x%%y',
            trove.catalog_endpoint('http://trove/x%y', None, 'p'))


class TestTroveErrors(base.TestCase):

    def error(self, status, message='Trove says no.', **kwargs):
        body = {'fault': {'code': status, 'message': message}}
        return trove.error_from_response(make_response(status, body),
                                         make_policy(), 'do a thing',
                                         **kwargs)

    def test_trove_message(self):
        self.assertEqual('Instance is busy.', trove.trove_message(
            make_response(422, {'unprocessableEntity': {
                'code': 422, 'message': 'Instance is busy.'}})))
        self.assertEqual('Flat?', trove.trove_message(
            make_response(400, {'message': 'Flat?'})))
        self.assertEqual('plain text.', trove.trove_message(
            make_response(502, 'plain text\n', 'text/plain')))
        self.assertEqual('Bad Gateway.', trove.trove_message(
            make_response(502, '<html>proxy</html>', 'text/html',
                          reason='Bad Gateway')))
        self.assertEqual('no explanation given.',
                         trove.trove_message(make_response(500)))

    def test_busy(self):
        for status in (409, 422):
            exc = self.error(status)
            self.assertIsInstance(exc, backends.InstanceBusy)
            self.assertIsInstance(exc, backends.TransientBackendError)
            self.assertIn(INSTANCE, str(exc))
            self.assertIn('HTTP %d' % status, str(exc))
            self.assertIn('Trove says no', str(exc))

    def test_transient(self):
        for status in (429, 500, 502, 503, 504):
            exc = self.error(status)
            self.assertIsInstance(exc, backends.TransientBackendError)
            self.assertNotIsInstance(exc, backends.InstanceBusy)
            self.assertIn('Trove says no', str(exc))

    def test_forbidden(self):
        exc = self.error(403)
        self.assertIsInstance(exc, backends.BackendForbidden)
        self.assertIsInstance(exc, backends.PermanentBackendError)
        self.assertIn('project-1', str(exc))
        self.assertIn('Trove says no', str(exc))

    def test_permanent(self):
        for status in (400, 401, 405, 413, 501):
            exc = self.error(status)
            self.assertIsInstance(exc, backends.PermanentBackendError)
            self.assertNotIsInstance(exc, (backends.BackendForbidden,
                                           backends.InstanceNotFound))
            self.assertIn('HTTP %d' % status, str(exc))
            self.assertIn('Trove says no', str(exc))
        self.assertIn('quota', str(self.error(413)))

    def test_not_found(self):
        gone = trove.not_found_error(
            make_response(404, {'itemNotFound': {
                'code': 404,
                'message': 'Resource %s cannot be found.' % INSTANCE}}),
            make_policy(), 'show instance %s' % INSTANCE)
        self.assertIsInstance(gone, backends.InstanceNotFound)
        self.assertIn('cannot be found', str(gone))
        # A 404 that does not name the instance: a wrong URL, say.
        other = trove.not_found_error(
            make_response(404, {'itemNotFound': {
                'code': 404, 'message': 'The resource could not be found.'}}),
            make_policy(), 'show instance %s' % INSTANCE)
        self.assertNotIsInstance(other, backends.InstanceNotFound)
        self.assertIsInstance(other, backends.PermanentBackendError)
        self.assertIn('endpoint_override', str(other))

    def test_instance_statuses(self):
        policy = make_policy()
        for status in ('ACTIVE', 'HEALTHY', 'RESTART_REQUIRED', 'active'):
            self.assertIsNone(trove.instance_check_error(
                policy, {'status': status}))
        for status in ('BUILD', 'BACKUP', 'REBOOT', 'RESIZE', 'UPGRADE',
                       'PROMOTE', 'EJECT', 'DETACH', 'UNKNOWN', None):
            exc = trove.instance_check_error(policy, {'status': status})
            self.assertIsInstance(exc, backends.InstanceBusy, status)
        for status in ('ERROR', 'SHUTDOWN', 'FAILED'):
            exc = trove.instance_check_error(
                policy, {'status': status, 'fault': {'message': 'disk'}})
            self.assertIsInstance(exc, backends.PermanentBackendError)
            self.assertNotIsInstance(exc, backends.InstanceNotFound)
            self.assertIn(status, str(exc))
            self.assertIn('disk', str(exc))

    def test_json_body(self):
        self.assertEqual({'backup': {}}, trove.json_body(
            make_response(200, {'backup': {}}), 'backup', 'x'))
        for response in (make_response(200, '<html/>', 'text/html'),
                         make_response(200, {'other': 1}),
                         make_response(200, [1, 2])):
            self.assertRaises(backends.TransientBackendError,
                              trove.json_body, response, 'backup', 'x')


class TestBackendPlumbing(base.TestCase):

    def setUp(self):
        super().setUp()
        self.backend = trove.TroveBackend(self.conf)
        self.adapter = mock.Mock()
        patcher = mock.patch.object(self.backend, '_adapter', autospec=True,
                                    return_value=self.adapter)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.flags(group='trove',
                   endpoint_override='http://trove/v1.0/%(project_id)s')

    def test_requests_go_to_the_policy_project(self):
        self.adapter.request.return_value = make_response(
            200, {'backup': TROVE_BACKUP})
        backup = self.backend.get_backup(make_policy(), 'b/1')
        self.assertEqual('snapshot', backup.name)
        self.adapter.request.assert_called_once_with(
            'backups/b%2F1', 'GET',
            endpoint_override='http://trove/v1.0/project-1', raise_exc=False,
            headers={'Accept': 'application/json'})

    def test_catalog_endpoint(self):
        self.flags(group='trove', endpoint_override=None)
        self.adapter.get_endpoint.return_value = 'http://t/v1.0/service'
        self.adapter.get_project_id.return_value = 'service'
        self.adapter.request.return_value = make_response(202)
        self.backend.delete_backup(make_policy(), 'b')
        self.assertEqual(
            'http://t/v1.0/project-1',
            self.adapter.request.call_args.kwargs['endpoint_override'])

    def test_no_endpoint_in_catalog(self):
        self.flags(group='trove', endpoint_override=None)
        self.adapter.get_endpoint.return_value = None
        exc = self.assertRaises(backends.PermanentBackendError,
                                self.backend.get_backup, make_policy(), 'b')
        self.assertIn('endpoint_override', str(exc))

    def test_keystoneauth_errors(self):
        cases = [
            (ks_exc.ConnectFailure('refused'), backends.TransientBackendError),
            (ks_exc.ConnectTimeout('slow'), backends.TransientBackendError),
            (ks_exc.SSLError('bad cert'), backends.TransientBackendError),
            (ks_exc.EndpointNotFound(), backends.PermanentBackendError),
            (ks_exc.Unauthorized('bad password'),
             backends.PermanentBackendError),
            (ks_exc.ServiceUnavailable('keystone down'),
             backends.TransientBackendError),
            (ks_exc.MissingRequiredOptions([]),
             backends.PermanentBackendError),
        ]
        for error, expected in cases:
            self.adapter.request.side_effect = error
            exc = self.assertRaises(backends.BackendError,
                                    self.backend.list_backups, make_policy())
            self.assertEqual(expected, type(exc), error)
            self.assertIn('list the backups of instance %s' % INSTANCE,
                          str(exc))

    def test_delete_missing_is_no_error(self):
        self.adapter.request.return_value = make_response(
            404, {'itemNotFound': {'code': 404, 'message': 'gone'}})
        self.assertIsNone(self.backend.delete_backup(make_policy(), 'b'))

    def test_pagination_stops_on_a_repeated_marker(self):
        page = {'backups': [TROVE_BACKUP],
                'links': [{'rel': 'next', 'href': 'https://t/b?marker=20'}]}
        self.adapter.request.side_effect = [
            make_response(200, page), make_response(200, page)]
        backups = self.backend.list_backups(make_policy())
        self.assertEqual([TROVE_BACKUP['id']], [b.id for b in backups])
        self.assertEqual(2, self.adapter.request.call_count)


class TestSharedConnection(base.TestCase):

    def test_one_adapter_for_all_threads(self):
        self.flags(group='service_credentials', auth_type='none')
        backend = trove.TroveBackend(self.conf)
        with mock.patch.object(trove.ks_loading, 'load_auth_from_conf_options',
                               wraps=trove.ks_loading.
                               load_auth_from_conf_options) as load_auth:
            with concurrent.futures.ThreadPoolExecutor(8) as pool:
                adapters = set(pool.map(backend._adapter,
                                        [make_policy()] * 32))
        self.assertEqual(1, len(adapters))
        self.assertEqual(1, load_auth.call_count)
        adapter = adapters.pop()
        self.assertEqual('database', adapter.service_type)
        self.assertEqual('internal', adapter.interface)
        # The session's pool holds a connection per worker thread.
        pool = adapter.session.session.get_adapter('http://')
        self.assertEqual(self.conf.worker.pool_size
                         + self.conf.worker.poll_concurrency,
                         pool._pool_maxsize)
        self.assertEqual(trove.DEFAULT_TIMEOUT, adapter.session.timeout)

    def test_configured_timeout(self):
        self.flags(group='service_credentials', auth_type='none', timeout=7)
        adapter = trove.TroveBackend(self.conf)._adapter(make_policy())
        self.assertEqual(7, adapter.session.timeout)

    def test_no_auth_type(self):
        exc = self.assertRaises(backends.PermanentBackendError,
                                trove.TroveBackend(self.conf)._adapter,
                                make_policy())
        self.assertIn('auth_type', str(exc))
