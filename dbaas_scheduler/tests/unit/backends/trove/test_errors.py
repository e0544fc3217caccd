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
"""Trove's answers classified as our backend exceptions."""

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import errors
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.unit.backends.trove import fakes


class TestTroveErrors(base.TestCase):

    def error(self, status, message='Trove says no.', **kwargs):
        body = {'fault': {'code': status, 'message': message}}
        return errors.error_from_response(fakes.make_response(status, body),
                                          fakes.make_policy(), 'do a thing',
                                          **kwargs)

    def test_trove_message(self):
        self.assertEqual('Instance is busy.', errors.trove_message(
            fakes.make_response(422, {'unprocessableEntity': {
                'code': 422, 'message': 'Instance is busy.'}})))
        self.assertEqual('Flat?', errors.trove_message(
            fakes.make_response(400, {'message': 'Flat?'})))
        self.assertEqual('plain text.', errors.trove_message(
            fakes.make_response(502, 'plain text\n', 'text/plain')))
        self.assertEqual('Bad Gateway.', errors.trove_message(
            fakes.make_response(502, '<html>proxy</html>', 'text/html',
                                reason='Bad Gateway')))
        self.assertEqual('no explanation given.',
                         errors.trove_message(fakes.make_response(500)))

    def test_busy(self):
        for status in (409, 422):
            exc = self.error(status)
            self.assertIsInstance(exc, backends.InstanceBusy)
            self.assertIsInstance(exc, backends.TransientBackendError)
            self.assertIn(fakes.INSTANCE, str(exc))
            self.assertIn('HTTP %d' % status, str(exc))
            self.assertIn('Trove says no', str(exc))

    def test_transient(self):
        for status in (429, 500, 502, 503, 504):
            exc = self.error(status)
            self.assertIsInstance(exc, backends.TransientBackendError)
            self.assertNotIsInstance(exc, backends.InstanceBusy)
            self.assertIn('Trove says no', str(exc))

    def test_kinds_for_the_metrics(self):
        for status, kind in ((429, 'rate_limited'), (503, 'rate_limited'),
                             (504, 'timeout'), (500, 'unavailable'),
                             (502, 'unavailable'), (401, 'auth'),
                             (403, 'auth'), (409, 'busy'), (400, 'other'),
                             (413, 'other')):
            self.assertEqual(kind, backends.error_kind(self.error(status)),
                             status)

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

    def test_a_413_is_the_project_over_its_quota(self):
        # A signal to slow down for the project, with [worker]
        # project_backoff; permanent (FAILED) without it, as before.
        self.assertIsInstance(self.error(413), backends.ProjectQuotaExceeded)
        for status in (400, 401, 405, 501):
            self.assertNotIsInstance(self.error(status),
                                     backends.PROJECT_OVER_LIMIT)

    def test_not_found(self):
        gone = errors.not_found_error(
            fakes.make_response(404, {'itemNotFound': {
                'code': 404,
                'message': 'Resource %s cannot be found.' % fakes.INSTANCE}}),
            fakes.make_policy(), 'show instance %s' % fakes.INSTANCE)
        self.assertIsInstance(gone, backends.InstanceNotFound)
        self.assertIn('cannot be found', str(gone))
        # A 404 that does not name the instance: a wrong URL, say.
        other = errors.not_found_error(
            fakes.make_response(404, {'itemNotFound': {
                'code': 404, 'message': 'The resource could not be found.'}}),
            fakes.make_policy(), 'show instance %s' % fakes.INSTANCE)
        self.assertNotIsInstance(other, backends.InstanceNotFound)
        self.assertIsInstance(other, backends.PermanentBackendError)
        self.assertIn('endpoint_override', str(other))

    def test_instance_statuses(self):
        policy = fakes.make_policy()
        for status in ('ACTIVE', 'HEALTHY', 'RESTART_REQUIRED', 'active'):
            self.assertIsNone(errors.instance_check_error(
                policy, {'status': status}))
        for status in ('BUILD', 'BACKUP', 'REBOOT', 'RESIZE', 'UPGRADE',
                       'PROMOTE', 'EJECT', 'DETACH', 'UNKNOWN', None):
            exc = errors.instance_check_error(policy, {'status': status})
            self.assertIsInstance(exc, backends.InstanceBusy, status)
        for status in ('ERROR', 'SHUTDOWN', 'FAILED'):
            exc = errors.instance_check_error(
                policy, {'status': status, 'fault': {'message': 'disk'}})
            self.assertIsInstance(exc, backends.PermanentBackendError)
            self.assertNotIsInstance(exc, backends.InstanceNotFound)
            self.assertIn(status, str(exc))
            self.assertIn('disk', str(exc))

    def test_json_body(self):
        self.assertEqual({'backup': {}}, errors.json_body(
            fakes.make_response(200, {'backup': {}}), 'backup', 'x'))
        for response in (fakes.make_response(200, '<html/>', 'text/html'),
                         fakes.make_response(200, {'other': 1}),
                         fakes.make_response(200, [1, 2])):
            self.assertRaises(backends.TransientBackendError,
                              errors.json_body, response, 'backup', 'x')


class TestWhatRealTroveAnswers(base.TestCase):
    """Answers as Trove 26 gives them (seen on its API in fake mode)."""

    def test_rate_limited_or_quota(self):
        limited = fakes.make_response(413, {'overLimit': {
            'code': 413, 'message': 'This request was rate-limited.',
            'details': 'Only 200 GET request(s) can be made to * every '
                       'minute.', 'retryAfter': '1'}})
        limited.headers['Retry-After'] = '1'
        self.assertEqual(1.0, errors.rate_limit_delay(limited))
        body_only = fakes.make_response(413, {'overLimit': {
            'code': 413, 'message': 'x', 'retryAfter': '0'}})
        self.assertEqual(0.1, errors.rate_limit_delay(body_only))
        quota = fakes.make_response(413, {'overLimit': {
            'code': 413,
            'message': "Quota exceeded for resources: ['backups']."}})
        self.assertIsNone(errors.rate_limit_delay(quota))
        self.assertIsNone(errors.rate_limit_delay(fakes.make_response(200)))
        policy = fakes.make_policy()
        exc = errors.error_from_response(quota, policy, 'create a backup')
        self.assertNotIsInstance(exc, backends.TransientBackendError)
        self.assertIn('quota', str(exc))

    def test_markup_and_request_id(self):
        response = fakes.make_response(403, {
            'message': 'Access was denied to this resource.<br /><br />\n'
                       'User with tenant id p8 cannot access this '
                       'resource.\n\n', 'code': '403 Forbidden'})
        response.headers['X-Openstack-Request-Id'] = 'req-1'
        exc = errors.error_from_response(response, fakes.make_policy(),
                                         'list backups')
        self.assertIn('Access was denied to this resource. User with '
                      'tenant id p8 cannot access this resource.', str(exc))
        self.assertNotIn('<br', str(exc))
        self.assertTrue(str(exc).endswith('(Trove request id req-1)'))

    def test_unhealthy_operating_status(self):
        policy = fakes.make_policy()
        for operating in ('FAILED', 'SHUTDOWN', 'ERROR', 'CRASHED'):
            error = errors.instance_check_error(policy, {
                'status': 'ACTIVE', 'operating_status': operating})
            self.assertIsInstance(error, backends.PermanentBackendError)
            self.assertIn('unhealthy', str(error))
            self.assertIn(operating, str(error))
        for operating in ('HEALTHY', '', None):
            self.assertIsNone(errors.instance_check_error(policy, {
                'status': 'ACTIVE', 'operating_status': operating}))
