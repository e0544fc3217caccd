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
"""Each process's own metrics, from its heartbeat to the /metrics endpoint.

dbaas-scheduler-all runs as a real process on PostgreSQL or MariaDB, with
its engine, worker and API parts each in its own service row: the engine
ticks and casts the runs of a policy every two seconds, the worker backs
them up with the fake backend, and a local backend whose instance
directory is a file fails a manual run: its create is refused at once
(a permanent error, of kind "other").  The
heartbeats write what each part counted into its row; the API's endpoint
serves it, labelled by service id, binary and host, for the live
services only.
"""

import json
import os
import signal
import time

import fixtures
from prometheus_client import exposition
from prometheus_client import parser
import sqlalchemy as sa

from dbaas_scheduler.db import models
from dbaas_scheduler import metrics
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures

wait_until = process_fixtures.wait_until
HOST = 'metrics-node'
PREFIX = 'dbaas_scheduler_'


def _samples(text):
    samples = {}
    for family in parser.text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(
                sample.labels.items())))] = sample.value
    return samples


class _ProcessMetrics(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        notes = os.path.join(self.tempdir, 'notes.db')
        open(notes, 'wb').close()
        backups = os.path.join(self.tempdir, 'backups')
        os.mkdir(backups)
        # The instance's directory is a file: creating a local backup
        # fails.
        open(os.path.join(backups, 'notes'), 'w').close()
        self.service = self.useFixture(process_fixtures.AllInOneProcess(
            self.tempdir, {
                'DEFAULT': {'host': HOST, 'heartbeat_interval': 1,
                            'service_down_time': 3},
                'database': {'connection': self.engine.url.render_as_string(
                    hide_password=False)},
                'api': {'min_schedule_interval': 1,
                        'enabled_backends': 'fake,local'},
                'metrics': {'enabled': True, 'cache_time': 0},
                'engine': {'scan_interval': 0.2, 'sweep_interval': 1},
                'worker': {'poll_interval': 0.2, 'max_attempts': 2,
                           'retry_initial_delay': 0.1,
                           'retry_max_delay': 0.2},
                'local_backend': {'instances': 'notes:sqlite:///' + notes,
                                  'backup_dir': backups},
            }))

    def create(self, **policy):
        self.created = getattr(self, 'created', 0) + 1
        policy.setdefault('name', 'p-%d' % self.created)
        status, body = self.service.request('POST', '/v1/backup-policies',
                                            {'backup_policy': policy})
        self.assertEqual(201, status, body)
        return body['backup_policy']['id']

    def executions(self, policy_id):
        table = models.BackupExecution.__table__
        with self.engine.connect() as connection:
            return connection.execute(
                sa.select(table.c.status, table.c.trigger)
                .where(table.c.policy_id == policy_id)).all()

    def services(self):
        table = models.Service.__table__
        with self.engine.connect() as connection:
            return {row.binary: row for row in connection.execute(
                sa.select(table))}

    def test_heartbeats_publish_and_the_endpoint_serves(self):
        fake = self.create(instance_id='db-1', backend='fake',
                           schedule_type='interval', schedule='2')
        local = self.create(instance_id='notes', backend='local',
                            schedule='0 3 * * *')
        status, body = self.service.request(
            'POST', '/v1/backup-policies/%s/run' % local)
        self.assertEqual(202, status, body)
        self.assertTrue(wait_until(
            lambda: ('SUCCEEDED', 'schedule') in self.executions(fake)
            and ('FAILED', 'manual') in self.executions(local), 60, 0.2),
            'no scheduled backup, or no failed manual run, within 60 s')

        rows = self.services()
        self.assertEqual({'dbaas-scheduler-engine', 'dbaas-scheduler-worker',
                          'dbaas-scheduler-api'}, set(rows))
        engine = rows['dbaas-scheduler-engine']
        # The API part counts nothing of its own.
        self.assertIsNone(rows['dbaas-scheduler-api'].stats)
        labels = {name: (('binary', name), ('host', HOST),
                         ('service_id', rows[name].id))
                  for name in rows}

        def key(name, binary, **extra):
            return (PREFIX + name,
                    tuple(sorted(labels[binary] + tuple(extra.items()))))

        create = key('backend_call_seconds_count', 'dbaas-scheduler-worker',
                     call='create_backup')
        failed = key('backend_errors_total', 'dbaas-scheduler-worker',
                     call='create_backup', kind='other')

        casts = key('engine_casts_total', 'dbaas-scheduler-engine',
                    result='sent')

        def scraped():
            # Once a heartbeat after both runs has written them; the
            # engine's row has a heartbeat of its own, up to a second
            # after the worker's, so wait for its casts too.
            status, text = self.service.request_text('GET', '/metrics')
            self.assertEqual(200, status)
            samples = _samples(text)
            return samples if (samples.get(failed) == 1
                               and samples.get(create, 0) >= 2
                               and samples.get(casts, 0) >= 2) else None

        samples = wait_until(scraped, 10, 0.5)
        self.assertIsNotNone(samples, 'the calls were not served in 10 s')
        # Refused for good: not retried, so nothing was searched for.
        self.assertNotIn(key('backend_errors_total', 'dbaas-scheduler-worker',
                             call='create_backup', kind='unavailable'),
                         samples)
        self.assertEqual(0, samples.get(key(
            'backend_call_seconds_count', 'dbaas-scheduler-worker',
            call='find_backup'), 0))
        # At least one successful create of the fake policy, and the
        # refused one of the local policy.
        self.assertGreaterEqual(samples[create], 2)
        self.assertGreater(samples[key(
            'backend_call_seconds_sum', 'dbaas-scheduler-worker',
            call='create_backup')], 0)
        # The fake's backup was read back as it finished (one backup, or
        # a poll pass over a project's).
        self.assertGreaterEqual(sum(samples.get(key(
            'backend_call_seconds_count', 'dbaas-scheduler-worker',
            call=call), 0) for call in ('get_backup', 'get_backups')), 1)
        self.assertEqual(0, samples[key('lease_renewals_lost_total',
                                        'dbaas-scheduler-worker')])
        ticks = samples[key('engine_tick_seconds_count',
                            'dbaas-scheduler-engine')]
        self.assertGreater(ticks, 5)
        self.assertEqual(ticks, samples[key(
            'engine_tick_seconds_bucket', 'dbaas-scheduler-engine',
            le='+Inf')])
        # The scheduled runs and the manual one (in this process, cast by
        # the API part) were all sent.
        self.assertGreaterEqual(samples[casts], 2)
        # No family of the worker under the engine's labels, or back.
        self.assertNotIn(key('engine_tick_seconds_count',
                             'dbaas-scheduler-worker'), samples)
        self.assertFalse([name for name, labels_ in samples
                          if ('binary', 'dbaas-scheduler-engine') in labels_
                          and name.startswith(PREFIX + 'backend_')])

        # The row holds the same figures, as small JSON.
        stored = json.loads(self.services()['dbaas-scheduler-worker'].stats)
        self.assertLess(len(self.services()['dbaas-scheduler-worker'].stats),
                        4000)
        self.assertEqual(1, stored['v'])
        self.assertIn(['create_backup', 'other'], [
            labels_ for labels_, _ in
            stored['counters']['backend_errors_total']])
        self.assertIsNotNone(engine.stats)

        # A process that is gone is not served once its heartbeat is
        # older than service_down_time, though its row is still there.
        self.service.process.kill(signal.SIGKILL)
        time.sleep(3.5)
        self.flags(service_down_time=3)
        self.flags(group='metrics', enabled=True, cache_time=0)
        samples = _samples(exposition.generate_latest(
            metrics.make_registry(self.conf)).decode())
        self.assertEqual(1, samples[(PREFIX + 'database_up', ())])
        self.assertIn('dbaas-scheduler-worker', self.services())
        self.assertEqual([], [name for name, labels_ in samples
                              if dict(labels_).get('service_id')])


class TestProcessMetricsMySQL(_ProcessMetrics, base.TestCase):
    DRIVER = 'mysql'


class TestProcessMetricsPostgreSQL(_ProcessMetrics, base.TestCase):
    DRIVER = 'postgresql'
