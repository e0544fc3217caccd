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
"""The API's request log: one line per request, when it is answered."""

import logging

import fixtures
import oslo_middleware
from oslotest import base
import webob

from dbaas_scheduler.api import requestlog


def _answer(status):
    def application(environ, start_response):
        start_response(status, [('Content-Type', 'text/plain')])
        return [b'a', b'b']
    return application


class TestRequestLog(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.log = self.useFixture(fixtures.FakeLogger(
            name=requestlog.__name__, level=logging.INFO,
            format='%(levelname)s %(message)s'))

    def test_one_line_once_answered(self):
        application = oslo_middleware.RequestId(
            requestlog.RequestLog(_answer('404 Not Found')))
        request = webob.Request.blank(
            '/v1/executions/x?marker=anything', method='DELETE')
        request.environ['SCRIPT_NAME'] = '/backup-scheduler'
        response = request.get_response(application)
        self.assertEqual(b'ab', response.body)
        request_id = response.headers['X-OpenStack-Request-ID']
        self.assertRegex(
            self.log.output,
            r'^INFO DELETE /backup-scheduler/v1/executions/x 404 '
            r'\d+\.\d{3} s %s\n$' % request_id)
        self.assertNotIn('marker', self.log.output)

    def test_an_exception_is_logged_and_raised(self):
        def broken(environ, start_response):
            raise RuntimeError('boom')
        request = webob.Request.blank('/')
        self.assertRaises(RuntimeError, request.get_response,
                          requestlog.RequestLog(broken))
        self.assertRegex(self.log.output, r'^INFO GET / - \d+\.\d{3} s -\n$')
