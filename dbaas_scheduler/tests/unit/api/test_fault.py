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
"""Exceptions to HTTP statuses, in one place."""

import json

from oslotest import base

from dbaas_scheduler.api import fault
from dbaas_scheduler import exception
from dbaas_scheduler import keystone


class TestStatusOf(base.BaseTestCase):

    def answer(self, error):
        response = fault.FaultWrapper.response_for(error, 'req-1')
        return response.status_int, json.loads(response.text)['errors'][0]

    def test_keystone_unavailable_is_503(self):
        status, body = self.answer(exception.KeystoneUnavailable(
            consequence='The backup policy was not created.',
            reason='connection refused'))
        self.assertEqual(503, status)
        self.assertEqual(('dbaas_scheduler.keystone_unavailable',
                          'Service Unavailable', 'req-1'),
                         (body['code'], body['title'], body['request_id']))
        self.assertEqual('Keystone is unreachable, try again later. The '
                         'backup policy was not created. (connection '
                         'refused)', body['detail'])

    def test_keystone_refusing_a_trust_is_400(self):
        status, body = self.answer(keystone.TrustError(
            roles='admin', project_id='p', reason='Keystone answered 403'))
        self.assertEqual(400, status)
        self.assertEqual('dbaas_scheduler.trust_error', body['code'])
