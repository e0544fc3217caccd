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
"""Helpers of the API handlers: times written alike."""

import datetime

from oslotest import base

from dbaas_scheduler.api import util


class TestIsotimeText(base.BaseTestCase):

    def test_offsets_become_z(self):
        for stored, shown in (
                ('2027-01-01T01:30:00+00:00', '2027-01-01T01:30:00Z'),
                ('2027-01-01T02:30:00.500000+01:00',
                 '2027-01-01T01:30:00.500000Z'),
                ('2027-01-01T01:30:00', '2027-01-01T01:30:00Z'),
                ('2027-01-01T01:30:00Z', '2027-01-01T01:30:00Z')):
            self.assertEqual(shown, util.isotime_text(stored), stored)

    def test_same_as_isotime(self):
        value = datetime.datetime(2027, 1, 1, 1, 30, 0, 123,
                                  tzinfo=datetime.timezone.utc)
        self.assertEqual(util.isotime(value),
                         util.isotime_text(value.isoformat()))

    def test_what_is_no_time_is_left_alone(self):
        for value in (None, '', 'yesterday', 17):
            self.assertEqual(value, util.isotime_text(value))
