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
"""Waiting out Trove's rate limits, per project."""

from oslotest import base

from dbaas_scheduler.backends.trove import pacing


class Clock:
    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


class TestProjectPacer(base.BaseTestCase):

    def setUp(self):
        super().setUp()
        self.clock = Clock()
        self.pacer = pacing.ProjectPacer(clock=self.clock,
                                         sleep=self.clock.sleep)

    def test_only_a_limited_project_waits(self):
        self.assertEqual(0, self.pacer.wait('p'))
        self.pacer.limited('p', 2)
        self.assertEqual(0, self.pacer.wait('q'))
        self.assertEqual(2, self.pacer.wait('p'))

    def test_waiting_requests_take_turns(self):
        self.pacer.limited('p', 1)
        turns = []
        for _ in range(4):
            self.clock.now = 100.0       # four threads asking at once
            self.pacer.wait('p')
            turns.append(self.clock.now)
        self.assertEqual([101.0, 101.25, 101.5, 101.75], turns)

    def test_the_gap_grows_while_refused_and_goes_when_accepted(self):
        self.pacer.limited('p', 1)
        self.pacer.limited('p', 1)
        self.pacer.wait('p')
        start = self.clock.now
        self.pacer.wait('p')
        self.assertEqual(0.375, self.clock.now - start)
        for _ in range(200):
            self.pacer.accepted('p')
        self.clock.now += 10
        self.assertEqual(0, self.pacer.wait('p'))
        self.assertEqual(0, self.pacer.wait('p'))
