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
"""Real dbaas-scheduler-engine processes: several at once, crashes, outages.

Each test provisions its own database on the real PostgreSQL or MariaDB,
starts engine processes against it and the real RabbitMQ, and checks the
exactly-once invariant: one execution per slot, no slot lost, every run
cast to the workers.  Outages are made with a TCP proxy between the engine
and its server, so the services other tests share stay up.
"""

import datetime
import os
import random
import signal
import time
import urllib.parse

import fixtures
from oslo_utils import timeutils
import sqlalchemy as sa
from testtools import content

from dbaas_scheduler.db import models
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.engine import test_engine
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures
from dbaas_scheduler.tests.functional.fixtures import tcp_proxy

UTC = datetime.timezone.utc
wait_until = process_fixtures.wait_until


def _database_url(engine, port=None):
    url = engine.url
    if port is not None:
        url = url.set(host='127.0.0.1', port=port)
    return url.render_as_string(hide_password=False)


def _rabbit_url(port=None):
    url = messaging_fixtures.transport_url()
    if port is None:
        return url
    parts = urllib.parse.urlsplit(url)
    netloc = '%s@127.0.0.1:%d' % (parts.netloc.rsplit('@', 1)[0], port)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


class _EngineProcessTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.messaging = self.useFixture(
            messaging_fixtures.Messaging(self, self.conf))
        self.worker = self.useFixture(
            messaging_fixtures.RecordingWorker(self.conf)).endpoint
        self.tempdir = self.useFixture(fixtures.TempDir()).path
        self.engines = []

    def start_engine(self, database_port=None, rabbit_port=None, **engine):
        number = len(self.engines)
        options = dict(topic=self.conf.engine.topic, scan_interval=0.2,
                       sweep_interval=0.5, dispatch_timeout=3,
                       batch_size=200)
        options.update(engine)
        config = os.path.join(self.tempdir, 'engine-%d.conf' % number)
        process_fixtures.write_config(config, {
            'DEFAULT': {'transport_url': _rabbit_url(rabbit_port),
                        'heartbeat_interval': 1,
                        'graceful_shutdown_timeout': 30},
            'database': {'connection': _database_url(self.engine,
                                                     database_port),
                         'retry_interval': 1, 'max_retries': -1},
            'engine': options,
            'worker': {'topic': self.conf.worker.topic},
            'oslo_messaging_rabbit': {'rabbit_retry_interval': 1,
                                      'rabbit_retry_backoff': 1},
        })
        process = self.useFixture(process_fixtures.ServiceProcess(
            'engine', config,
            os.path.join(self.tempdir, 'engine-%d.log' % number)))
        self.engines.append(process)
        self.addOnException(self._attach_logs)
        return process

    def _attach_logs(self, exc_info):
        for number, process in enumerate(self.engines):
            self.addDetail('engine-%d.log' % number,
                           content.text_content(process.log()[-20000:]))

    def service_rows(self):
        table = models.Service.__table__
        with self.engine.connect() as connection:
            return connection.execute(sa.select(table)).all()

    def assert_each_slot_ran_once(self, policy_ids):
        """Every due slot has its one execution, and each run was cast."""
        table = models.BackupExecution.__table__
        with self.engine.connect() as connection:
            rows = connection.execute(sa.select(
                table.c.id, table.c.policy_id, table.c.status)).all()
        by_policy = {}
        for row in rows:
            by_policy.setdefault(row.policy_id, []).append(row)
        missing = [p for p in policy_ids if p not in by_policy]
        self.assertEqual([], missing, 'policies without an execution')
        extra = {p: len(r) for p, r in by_policy.items() if len(r) != 1}
        self.assertEqual({}, extra, 'policies with several executions')
        runs = [row.id for row in rows if row.status != 'SKIPPED']
        self.assertEqual(len(policy_ids), len(runs))
        self.assertTrue(self.worker.wait_for(runs, timeout=60),
                        '%d runs never reached a worker' % len(
                            set(runs) - set(self.worker.ids())))

    def wait_all_advanced(self, policy_ids, timeout=120):
        table = models.BackupPolicy.__table__

        def due_left():
            with self.engine.connect() as connection:
                return connection.execute(
                    sa.select(sa.func.count()).select_from(table).where(
                        table.c.next_execution_time
                        <= timeutils.utcnow(True))).scalar()
        self.assertTrue(wait_until(lambda: due_left() == 0, timeout, 0.2),
                        '%d policies still due after %ss' % (due_left(),
                                                             timeout))

    def test_three_engines_share_a_burst(self):
        policy_ids = test_engine.add_policies(self.engine, 3000)
        for _ in range(3):
            self.start_engine()
        self.wait_all_advanced(policy_ids)
        self.assert_each_slot_ran_once(policy_ids)
        # All three took part.
        self.assertEqual(3, len(wait_until(
            lambda: self.service_rows() if len(
                self.service_rows()) == 3 else None, 30)))

    def test_engines_killed_during_a_burst(self):
        policy_ids = test_engine.add_policies(self.engine, 4000)
        engines = [self.start_engine(batch_size=100) for _ in range(3)]
        rng = random.Random(os.getpid())
        table = models.BackupExecution.__table__
        for _ in range(4):
            # Let the burst get going, then crash one engine at a random
            # moment (possibly between a commit and its casts).
            time.sleep(rng.uniform(0.2, 1.5))
            victim = rng.choice(engines)
            victim.kill(signal.SIGKILL)
            victim.start()
        self.wait_all_advanced(policy_ids)
        with self.engine.connect() as connection:
            recorded = connection.execute(
                sa.select(sa.func.count()).select_from(table)).scalar()
        self.assertEqual(len(policy_ids), recorded)
        self.assert_each_slot_ran_once(policy_ids)

    def test_repeated_slots_with_three_engines(self):
        # Every policy fires every 2 seconds for a while: slots must follow
        # each other without a gap or a double, whichever engine took them.
        for _ in range(3):
            self.start_engine()
        services = models.Service.__table__

        def engines_up():
            with self.engine.connect() as connection:
                return connection.execute(
                    sa.select(sa.func.count()).select_from(services)).scalar()
        # A loaded machine takes seconds to start an engine: the slots
        # start once all three tick.
        self.assertTrue(wait_until(lambda: engines_up() == 3, 60))
        start = timeutils.utcnow(True).replace(microsecond=0) + \
            datetime.timedelta(seconds=3)
        policy_ids = test_engine.add_policies(
            self.engine, 200, schedule_type='interval', schedule='2',
            start_at=start, next_execution_time=start)
        table = models.BackupExecution.__table__

        def fewest_slots():
            with self.engine.connect() as connection:
                counts = connection.execute(
                    sa.select(sa.func.count()).select_from(table)
                    .group_by(table.c.policy_id)).scalars().all()
            return min(counts) if len(counts) == len(policy_ids) else 0
        # Until every policy has the four slots checked below (the first
        # at ``start``, then one every 2 s), rather than a fixed 12 s.
        self.assertTrue(wait_until(lambda: fewest_slots() >= 4, 60, 0.5),
                        'fewer than 4 slots of a policy within 60 s')
        self.assertEqual([0, 0, 0],
                         process_fixtures.terminate_all(self.engines))
        policies = models.BackupPolicy.__table__
        with self.engine.connect() as connection:
            slots = connection.execute(
                sa.select(table.c.policy_id, table.c.scheduled_at,
                          table.c.status, table.c.status_reason)).all()
            next_times = dict(connection.execute(
                sa.select(policies.c.id,
                          policies.c.next_execution_time)).all())
        by_policy = {}
        for row in slots:
            by_policy.setdefault(row.policy_id, []).append(row)
        two_seconds = datetime.timedelta(seconds=2)
        for policy_id in policy_ids:
            rows = sorted(by_policy[policy_id], key=lambda r: r.scheduled_at)
            self.assertGreaterEqual(len(rows), 4)
            # One row per slot, never two runs, never a silent gap.  On a
            # loaded machine a tick can come more than one interval late:
            # the slots it passed over are then one SKIPPED ("missed") row
            # at the first of them, and the latest slot runs in the same
            # tick saying how many it coalesced.
            slot = start
            for number, row in enumerate(rows):
                self.assertEqual(slot, row.scheduled_at, policy_id)
                if row.status == 'SKIPPED':
                    self.assertEqual('missed', row.status_reason)
                    run = rows[number + 1]
                    self.assertEqual('DISPATCHED', run.status)
                    passed = (run.scheduled_at - slot) // two_seconds
                    self.assertEqual(
                        'coalesced %d missed runs since %s'
                        % (passed, slot.isoformat()), run.status_reason)
                    slot = run.scheduled_at
                else:
                    self.assertEqual('DISPATCHED', row.status)
                    slot += two_seconds
            self.assertEqual(next_times[policy_id], slot, policy_id)

    def test_broker_outage_during_a_burst(self):
        host, port = urllib.parse.urlsplit(_rabbit_url()).hostname, \
            urllib.parse.urlsplit(_rabbit_url()).port or 5672
        proxy = self.useFixture(tcp_proxy.TCPProxy(host, port))
        policy_ids = test_engine.add_policies(self.engine, 3000)
        # One message per execution: the burst lasts long enough to be
        # cut in the middle.
        engine = self.start_engine(rabbit_port=proxy.port, batch_size=100,
                                   executions_per_message=1)
        self.assertTrue(wait_until(lambda: len(self.worker.ids()) > 0, 60))
        proxy.cut()
        time.sleep(5)
        proxy.restore()
        self.wait_all_advanced(policy_ids)
        self.assert_each_slot_ran_once(policy_ids)
        self.assertTrue(engine.alive())
        # Casts failed during the outage and the sweep sent them again.
        self.assertIn('Could not cast', engine.log())
        self.assertIn('Casting', engine.log())

    def test_database_outage_during_a_burst(self):
        proxy = self.useFixture(tcp_proxy.TCPProxy(
            '127.0.0.1', self.engine.url.port or self.DEFAULT_PORT))
        policy_ids = test_engine.add_policies(self.engine, 3000)
        engine = self.start_engine(database_port=proxy.port, batch_size=100)
        self.assertTrue(wait_until(lambda: len(self.worker.ids()) > 0, 60))
        proxy.cut()
        time.sleep(5)
        proxy.restore()
        self.wait_all_advanced(policy_ids)
        self.assert_each_slot_ran_once(policy_ids)
        self.assertTrue(engine.alive())
        self.assertIn('retrying', engine.log())

    def test_sigterm_stops_cleanly(self):
        engine = self.start_engine()
        self.assertTrue(wait_until(lambda: len(self.service_rows()) == 1,
                                   30))
        [row] = self.service_rows()
        self.assertEqual('dbaas-scheduler-engine', row.binary)
        beat = row.heartbeat_at
        self.assertTrue(wait_until(
            lambda: self.service_rows()[0].heartbeat_at > beat, 10))
        self.assertEqual(0, engine.terminate())
        self.assertEqual([], self.service_rows())


class TestEngineProcessesMySQL(_EngineProcessTests, base.TestCase):
    DRIVER = 'mysql'
    DEFAULT_PORT = 3306


class TestEngineProcessesPostgreSQL(_EngineProcessTests, base.TestCase):
    DRIVER = 'postgresql'
    DEFAULT_PORT = 5432
