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
"""The coverage report's pause of the garbage collector, its times."""

import datetime
import gc
import threading

from dbaas_scheduler.api import util
from dbaas_scheduler import coverage as core_coverage
from dbaas_scheduler.objects import coverage
from dbaas_scheduler.tests import base

UTC = datetime.timezone.utc


class TestNoCollection(base.TestCase):

    def setUp(self):
        super().setUp()
        enabled = gc.isenabled()
        self.addCleanup(lambda: gc.enable() if enabled else gc.disable())
        gc.enable()

    def test_paused_while_inside_then_enabled(self):
        with coverage.no_collection():
            self.assertFalse(gc.isenabled())
        self.assertTrue(gc.isenabled())

    def test_enabled_again_after_an_error(self):
        with self.assertRaises(ValueError):
            with coverage.no_collection():
                raise ValueError('boom')
        self.assertTrue(gc.isenabled())

    def test_overlapping_reports_enable_it_when_the_last_ends(self):
        first_in, second_done = threading.Event(), threading.Event()
        seen = []

        def first():
            with coverage.no_collection():
                first_in.set()
                second_done.wait(10)
                seen.append(gc.isenabled())

        thread = threading.Thread(target=first)
        thread.start()
        self.assertTrue(first_in.wait(10))
        with coverage.no_collection():
            pass
        # The second report ended while the first went on: still paused.
        self.assertFalse(gc.isenabled())
        second_done.set()
        thread.join(10)
        self.assertEqual([False], seen)
        self.assertTrue(gc.isenabled())

    def test_left_disabled_if_it_was(self):
        gc.disable()
        with coverage.no_collection():
            self.assertFalse(gc.isenabled())
        self.assertFalse(gc.isenabled())


class TestApiTime(base.TestCase):
    """The report's times as the API has always shown them."""

    def test_same_text_as_isotime(self):
        paris = datetime.timezone(datetime.timedelta(hours=1))
        for value in (
                datetime.datetime(2026, 11, 27, 12, 0, tzinfo=paris),
                datetime.datetime(2026, 11, 27, 12, 0, 0, 1, tzinfo=UTC),
                datetime.datetime(2026, 11, 27, 12, 0, 0, 500000,
                                  tzinfo=UTC),
                datetime.datetime(2026, 2, 28, 23, 59, 59, 999999,
                                  tzinfo=paris)):
            self.assertEqual(
                util.isotime(value),
                coverage.api_time(core_coverage.time_text(value)))

    def test_none(self):
        self.assertIsNone(coverage.api_time(None))
