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
"""The in-process registry of counters and histograms."""

import json
import threading

from dbaas_scheduler import stats
from dbaas_scheduler.tests import base


class TestRegistry(base.TestCase):

    def setUp(self):
        super().setUp()
        self.registry = stats.Registry()

    def test_counter_by_labels(self):
        counter = self.registry.counter(
            'errors_total', labels=(('call', ('a', 'b')),
                                    ('kind', ('x', stats.OTHER))))
        counter.inc('a', 'x')
        counter.inc('a', 'x', amount=2)
        counter.inc('b', 'x')
        self.assertEqual(3, counter.value('a', 'x'))
        self.assertEqual(1, counter.value('b', 'x'))
        self.assertEqual(0, counter.value('b', stats.OTHER))
        self.assertEqual(
            {'v': 1, 'histograms': {},
             'counters': {'errors_total': [[['a', 'x'], 3],
                                           [['b', 'x'], 1]]}},
            self.registry.snapshot())

    def test_label_values_are_a_fixed_set(self):
        counter = self.registry.counter(
            'c_total', labels=(('call', ('a',)),
                               ('kind', ('x', stats.OTHER))))
        # Unknown where the set has "other": counted there; elsewhere:
        # dropped.
        counter.inc('a', 'something new')
        counter.inc('unknown call', 'x')
        self.assertEqual(1, counter.value('a', stats.OTHER))
        self.assertEqual([[['a', stats.OTHER], 1]],
                         self.registry.snapshot()['counters']['c_total'])
        self.assertRaises(ValueError, counter.inc, 'a')

    def test_counter_without_labels_is_always_there(self):
        self.registry.counter('lost_total')
        self.assertEqual({'lost_total': [[[], 0]]},
                         self.registry.snapshot()['counters'])

    def test_histogram_buckets_are_cumulative(self):
        histogram = self.registry.histogram('tick_seconds',
                                            buckets=(0.1, 1.0, 10.0))
        for value in (0.05, 0.1, 0.5, 3, 100):
            histogram.observe(value)
        [entry] = self.registry.snapshot()['histograms'].values()
        self.assertEqual([0.1, 1.0, 10.0], entry['le'])
        # A value on a bound is in that bound's bucket (le); 100 only in
        # +Inf, the last, which is the count.
        [[labels, counts, total]] = entry['series']
        self.assertEqual([], labels)
        self.assertEqual([2, 3, 4, 5], counts)
        self.assertAlmostEqual(103.65, total)

    def test_time_observes_a_block_that_raises(self):
        histogram = self.registry.histogram('call_seconds',
                                            labels=(('call', ('a',)),))

        def fail():
            with histogram.time('a'):
                raise RuntimeError('no')

        self.assertRaises(RuntimeError, fail)
        [[labels, counts, total]] = (
            self.registry.snapshot()['histograms']['call_seconds']['series'])
        self.assertEqual(['a'], labels)
        self.assertEqual(1, counts[-1])
        # Seconds of a block that did nothing: small, whatever the load.
        self.assertGreaterEqual(total, 0)
        self.assertLess(total, 30)

    def test_snapshot_of_some_names(self):
        self.registry.counter('a_total')
        self.registry.histogram('b_seconds')
        expected = {'v': 1, 'counters': {}, 'histograms': {
            'b_seconds': {'le': list(stats.SECONDS_BUCKETS), 'series': []}}}
        self.assertEqual(expected, self.registry.snapshot(['b_seconds']))

    def test_registering_twice_gives_the_same_metric(self):
        first = self.registry.counter('a_total', labels=(('x', ('1',)),))
        self.assertIs(first, self.registry.counter(
            'a_total', labels=(('x', ('1',)),)))
        self.assertRaises(ValueError, self.registry.histogram, 'a_total')

    def test_thread_safe(self):
        counter = self.registry.counter('n_total')
        histogram = self.registry.histogram('h_seconds')

        def work():
            for _ in range(2000):
                counter.inc()
                histogram.observe(0.2)

        threads = [threading.Thread(target=work) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.assertEqual(16000, counter.value())
        [[_, counts, total]] = (
            self.registry.snapshot()['histograms']['h_seconds']['series'])
        self.assertEqual(16000, counts[-1])
        self.assertAlmostEqual(3200.0, total, places=3)

    def test_the_processes_metrics_stay_small(self):
        # Every label value of every metric seen, every bucket used: the
        # JSON a worker's heartbeat writes is still a few kilobytes.
        self.addCleanup(stats.REGISTRY.reset)
        for call in stats.BACKEND_CALLS + ('not a call',):
            for kind in stats.ERROR_KINDS + ('not a kind',):
                stats.BACKEND_ERRORS.inc(call, kind, amount=10 ** 9)
            for value in stats.SECONDS_BUCKETS + (1e6,):
                stats.BACKEND_CALL_SECONDS.observe(value, call)
        stats.LEASE_RENEWALS_LOST.inc(amount=10 ** 9)
        for by in ('compensation', 'reconciliation', 'someone'):
            stats.STRAY_DELETIONS.inc(by)
        text = json.dumps(stats.REGISTRY.snapshot(stats.WORKER_METRICS),
                          separators=(',', ':'))
        self.assertLess(len(text), 6000)
        counters = json.loads(text)['counters']
        self.assertEqual(len(stats.BACKEND_CALLS) * len(stats.ERROR_KINDS),
                         len(counters['backend_errors_total']))
        self.assertEqual(set(stats.WORKER_METRICS),
                         set(counters) | set(json.loads(text)['histograms']))
