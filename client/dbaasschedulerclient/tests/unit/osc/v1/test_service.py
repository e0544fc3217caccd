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
"""``openstack database backup scheduler service list``."""

from dbaasschedulerclient.osc.v1 import service
from dbaasschedulerclient.tests.unit.osc import fakes

SERVICE = {'id': 's-1', 'host': 'node-1', 'binary': 'dbaas-scheduler-worker',
           'topic': 'dbaas-scheduler-worker', 'pid': 4242, 'state': 'up',
           'started_at': '2027-01-31T00:00:00Z',
           'heartbeat_at': '2027-01-31T01:30:00Z'}


class TestList(fakes.CommandTestCase):

    def setUp(self):
        super().setUp()
        self.api.list_services.return_value = [SERVICE]

    def test_list(self):
        columns, rows = self.run_command(service.ListService)
        self.assertEqual(('ID', 'Host', 'Binary', 'PID', 'State',
                          'Heartbeat At'), columns)
        self.assertEqual([('s-1', 'node-1', 'dbaas-scheduler-worker', 4242,
                           'up', '2027-01-31T01:30:00Z')], rows)

    def test_long(self):
        columns, rows = self.run_command(service.ListService, '--long')
        self.assertEqual(('ID', 'Host', 'Binary', 'Topic', 'PID', 'State',
                          'Started At', 'Heartbeat At'), columns)
