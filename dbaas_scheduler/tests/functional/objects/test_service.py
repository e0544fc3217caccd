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
"""Services as the interfaces read them: every registered process."""

import datetime

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler.objects import service as service_obj
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures

UTC = datetime.timezone.utc
NOW = datetime.datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


class _ServiceTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.context = dbaas_context.get_admin_context()

    def register(self, service_id, binary, host, minutes):
        db_services.register_service(self.context, {
            'id': service_id, 'host': host, 'binary': binary,
            'topic': binary.rsplit('-', 1)[-1], 'pid': 100 + minutes,
            'process_identity': 'boot:ns:%d:1' % (100 + minutes),
            'started_at': NOW + datetime.timedelta(minutes=minutes),
            'heartbeat_at': NOW + datetime.timedelta(minutes=minutes + 1),
            'stats': '{"ticks": 1}'})

    def test_by_binary_host_and_start(self):
        self.register('w-b', 'dbaas-scheduler-worker', 'host-b', 0)
        self.register('e-b', 'dbaas-scheduler-engine', 'host-b', 1)
        self.register('w-a2', 'dbaas-scheduler-worker', 'host-a', 3)
        self.register('w-a1', 'dbaas-scheduler-worker', 'host-a', 2)
        self.assertEqual(
            ['e-b', 'w-a1', 'w-a2', 'w-b'],
            [row.id for row in service_obj.list_services(self.context)])

    def test_none_registered(self):
        self.assertEqual([], service_obj.list_services(self.context))

    def test_as_dict_shows_no_process_internals(self):
        self.register('w-b', 'dbaas-scheduler-worker', 'host-b', 0)
        row, = service_obj.list_services(self.context)
        self.assertEqual(
            {'id': 'w-b', 'host': 'host-b',
             'binary': 'dbaas-scheduler-worker', 'topic': 'worker',
             'pid': 100, 'started_at': NOW,
             'heartbeat_at': NOW + datetime.timedelta(minutes=1)},
            service_obj.as_dict(row))


class TestServicesSQLite(_ServiceTests, base.TestCase):
    DRIVER = 'sqlite'


class TestServicesMySQL(_ServiceTests, base.TestCase):
    DRIVER = 'mysql'


class TestServicesPostgreSQL(_ServiceTests, base.TestCase):
    DRIVER = 'postgresql'
