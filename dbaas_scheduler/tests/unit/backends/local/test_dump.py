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
"""Writing the dump: what a fault keeps of a tool's words."""

from oslotest import base as oslotest_base

from dbaas_scheduler.backends.local import dump


class TestTrimFault(oslotest_base.BaseTestCase):

    def test_trim_fault_keeps_the_end(self):
        self.assertEqual('oops', dump.trim_fault('\n oops \n'))
        trimmed = dump.trim_fault('x' * 5000 + 'the end')
        self.assertTrue(trimmed.endswith('the end'))
        self.assertEqual(dump.FAULT_LIMIT + 3, len(trimmed))
