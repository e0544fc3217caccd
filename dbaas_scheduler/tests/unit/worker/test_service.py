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
"""The worker's parts, made in one place and given to each other."""

import threading

from dbaas_scheduler.tests import base
from dbaas_scheduler.worker import service


class TestBuildParts(base.TestCase):

    def setUp(self):
        super().setUp()
        self.ready = threading.Event()
        self.parts = service.build_parts(self.conf, 'me', ready=self.ready)
        self.addCleanup(self.parts.close)

    def test_one_keeper_one_outcome_shared(self):
        parts = self.parts
        runner = parts.runner
        self.assertIs(parts.keeper, runner.keeper)
        self.assertIs(parts.keeper, runner.overlap.keeper)
        self.assertIs(parts.keeper, parts.poller.keeper)
        self.assertIs(parts.keeper, parts.outcome.keeper)
        self.assertIs(parts.outcome, runner.outcome)
        self.assertIs(parts.outcome, parts.poller.outcome)
        self.assertIs(parts.recorder, runner.recorder)
        self.assertIs(parts.compensator, runner.compensator)
        self.assertIs(self.ready, runner.ready)

    def test_every_part_acts_for_the_same_owner(self):
        parts = self.parts
        self.assertEqual({'me'}, {parts.runner.owner, parts.recorder.owner,
                                  parts.runner.overlap.owner,
                                  parts.poller.owner, parts.orphans.owner})

    def test_no_part_holds_the_runner(self):
        # Only the callables they need: the poller is told of resumed
        # backups, the orphan taker starts what it took over.
        parts = self.parts
        self.assertEqual(parts.poller.backup_may_be_finished,
                         parts.runner.check_soon)
        self.assertEqual(parts.runner.start_claimed,
                         parts.orphans.start_claimed)
        for part in (parts.poller, parts.orphans, parts.runner.overlap,
                     parts.outcome, parts.compensator):
            self.assertNotIn(parts.runner, vars(part).values())
