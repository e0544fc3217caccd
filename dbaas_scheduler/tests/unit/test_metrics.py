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
"""The families of the processes' own metrics in the cluster collector."""

import json
from unittest import mock

from prometheus_client import exposition
from prometheus_client import parser

from dbaas_scheduler.db import metrics as db_metrics
from dbaas_scheduler import metrics
from dbaas_scheduler import stats
from dbaas_scheduler.tests import base

WORKER = 'dbaas-scheduler-worker'
ENGINE = 'dbaas-scheduler-engine'


def _snapshot(process_stats):
    empty = db_metrics.Lateness([0, 0, 0, 0], 0.0, 0)
    return db_metrics.Snapshot(
        policies={}, backlog=0, backlog_oldest=None, in_flight={},
        finished={}, dispatch_lateness=empty, start_lateness=empty,
        strays_deleted={}, reconciliations_due=0, services={},
        failure_streaks={}, process_stats=process_stats)


class TestProcessFamilies(base.TestCase):

    def setUp(self):
        super().setUp()
        self.flags(group='metrics', cache_time=0)
        self.registry = stats.Registry()

    def scrape(self, rows):
        with mock.patch.object(db_metrics, 'collect', autospec=True,
                               return_value=_snapshot(rows)):
            text = exposition.generate_latest(
                metrics.make_registry(self.conf)).decode()
        samples = {}
        types = {}
        for family in parser.text_string_to_metric_families(text):
            types[family.name] = family.type
            for sample in family.samples:
                samples[(sample.name, tuple(sorted(
                    sample.labels.items())))] = sample.value
        return samples, types

    def worker_stats(self):
        calls = self.registry.histogram(
            'backend_call_seconds',
            labels=(('call', stats.BACKEND_CALLS),), buckets=(0.1, 1.0))
        errors = self.registry.counter(
            'backend_errors_total',
            labels=(('call', stats.BACKEND_CALLS),
                    ('kind', stats.ERROR_KINDS)))
        lost = self.registry.counter('lease_renewals_lost_total')
        for value in (0.05, 0.5, 2.0):
            calls.observe(value, 'create_backup')
        calls.observe(0.01, 'get_backups')
        errors.inc('create_backup', 'rate_limited', amount=2)
        lost.inc(amount=3)
        return json.dumps(self.registry.snapshot())

    def test_families_of_live_services(self):
        engine = json.dumps({'v': 1, 'counters': {
            'engine_casts_total': [[['sent'], 40], [['failed'], 2]]},
            'histograms': {'engine_tick_seconds': {
                'le': [0.1, 1.0], 'series': [[[], [5, 7, 8], 3.5]]}}})
        samples, types = self.scrape([
            ('w-1', WORKER, 'node-1', self.worker_stats()),
            ('e-1', ENGINE, 'node-2', engine)])
        worker = (('binary', WORKER), ('host', 'node-1'),
                  ('service_id', 'w-1'))
        engine = (('binary', ENGINE), ('host', 'node-2'),
                  ('service_id', 'e-1'))
        prefix = 'dbaas_scheduler_'
        self.assertEqual('histogram', types[prefix + 'backend_call_seconds'])
        self.assertEqual('counter', types[prefix + 'backend_errors'])
        create = tuple(sorted(worker + (('call', 'create_backup'),)))
        for bound, count in (('0.1', 1), ('1.0', 2), ('+Inf', 3)):
            self.assertEqual(count, samples[(
                prefix + 'backend_call_seconds_bucket',
                tuple(sorted(create + (('le', bound),))))])
        self.assertEqual(3, samples[(prefix + 'backend_call_seconds_count',
                                     create)])
        self.assertAlmostEqual(2.55, samples[(
            prefix + 'backend_call_seconds_sum', create)])
        self.assertEqual(1, samples[(
            prefix + 'backend_call_seconds_count',
            tuple(sorted(worker + (('call', 'get_backups'),))))])
        self.assertEqual(2, samples[(
            prefix + 'backend_errors_total', tuple(sorted(
                create + (('kind', 'rate_limited'),))))])
        self.assertEqual(3, samples[(prefix + 'lease_renewals_lost_total',
                                     worker)])
        self.assertEqual(8, samples[(prefix + 'engine_tick_seconds_count',
                                     engine)])
        self.assertEqual(7, samples[(
            prefix + 'engine_tick_seconds_bucket',
            tuple(sorted(engine + (('le', '1.0'),))))])
        self.assertEqual(40, samples[(prefix + 'engine_casts_total',
                                      tuple(sorted(engine + (
                                          ('result', 'sent'),))))])

    def test_unreadable_or_unknown_stats_are_left_out(self):
        samples, types = self.scrape([
            ('w-1', WORKER, 'node-1', 'not json'),
            ('w-2', WORKER, 'node-1', json.dumps({
                'counters': {'something_new_total': [[[], 1]],
                             'backend_errors_total': [[['one label'], 1]]},
                'histograms': {'engine_tick_seconds': {
                    'le': [1.0], 'series': [[[], [1], 1.0]]}}})),
            ('w-3', WORKER, 'node-1', json.dumps(
                {'counters': {'lease_renewals_lost_total': [[[], 1]]}}))])
        self.assertEqual(1, samples[('dbaas_scheduler_database_up', ())])
        # The families are described all the same; only w-3's figure.
        self.assertEqual('histogram',
                         types['dbaas_scheduler_engine_tick_seconds'])
        process = {key for key in samples
                   if dict(key[1]).get('service_id')}
        self.assertEqual({('dbaas_scheduler_lease_renewals_lost_total', (
            ('binary', WORKER), ('host', 'node-1'),
            ('service_id', 'w-3')))}, process)

    def test_every_stats_name_is_served(self):
        self.assertEqual(
            set(stats.ENGINE_METRICS) | set(stats.WORKER_METRICS),
            set(metrics.PROCESS_FAMILIES))
