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
"""Backups start failing: at_risk is announced before breached.

The engine's tick and protection sweep and a worker's runner and poller
run in this process, in real time, against the fake Trove over HTTP: a
policy every 2 s with a 6 s RPO succeeds once, then its instance's
backups fail.  The test records when each protection notification was
sent and asserts the order and the times (printed for the record).
"""

import datetime
import time

from oslo_utils import timeutils

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.engine import protection as engine_protection
from dbaas_scheduler.engine import tick
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.worker import test_worker
from dbaas_scheduler.tests import notification_fixtures

RPO = 6
INTERVAL = 2


class _Proof(test_worker.WorkerMixin):

    def step(self):
        """One round of the engine and the worker, now."""
        now = timeutils.utcnow(True)
        result = tick.run_tick(self.context, now, 100, 3600)
        if result.runs:
            self.runner.run(self.context, list(result.runs))
        self.poller.run_pass(self.context)
        engine_protection.sweep(self.context, self.conf,
                                timeutils.utcnow(True))

    def states(self):
        return [(m['event_type'].rsplit('.', 1)[1],
                 m['payload'][notification_fixtures.WRAPPER + 'data'])
                for m in self.recorder.messages()
                if m['event_type'].startswith('backup_policy.protection.')]

    def run_until(self, done, seconds):
        deadline = time.monotonic() + seconds
        while not done():
            self.assertLess(time.monotonic(), deadline,
                            'no transition within %ss: %s'
                            % (seconds, self.states()))
            self.step()
            time.sleep(0.1)

    def test_at_risk_is_raised_before_breached(self):
        self.recorder = self.useFixture(
            notification_fixtures.Recorder(self.conf))
        instance = self.trove.add_instance()
        now = timeutils.utcnow(True)
        policy = db_api.create_policy(self.context, dict(
            name=db_fixtures.policy_name(self), project_id='project-a',
            instance_id=instance, schedule_type='interval',
            schedule=str(INTERVAL), start_at=now, timezone='UTC',
            next_execution_time=now, created_at=now, effective_rpo=RPO,
            protected_until=now + datetime.timedelta(seconds=RPO),
            protection='ok', protection_check_at=now,
            consecutive_failures=0))

        def succeeded():
            return db_api.get_policy(self.context,
                                     policy.id).last_success_at

        self.run_until(succeeded, 10)
        renewed = db_api.get_policy(self.context, policy.id)
        self.assertEqual('ok', renewed.protection)
        failing_from = timeutils.utcnow(True)
        self.trove.set_behaviour(instance, final_status='FAILED')

        self.run_until(lambda: 'breached' in dict(self.states()), 20)
        states = self.states()
        self.assertEqual(['at_risk', 'breached'],
                         [state for state, _ in states])
        at_risk, breached = [
            datetime.datetime.fromisoformat(data['changed_at'])
            for _, data in states]
        stored = db_api.get_policy(self.context, policy.id)
        until = stored.protected_until
        self.assertEqual(renewed.protected_until, until)
        self.assertGreaterEqual(stored.consecutive_failures, 1)
        # The warning came before the deadline, the breach at it (within
        # a round of this loop).
        self.assertLess(failing_from, at_risk)
        self.assertLess(at_risk, until)
        self.assertGreaterEqual(breached, until)
        self.assertLess(breached - until, datetime.timedelta(seconds=2))
        print('protection proof (%s): last success %s, backups failing '
              'from %s, at_risk at %s, protected until %s, breached at '
              '%s: warned %.1f s before the breach'
              % (self.DRIVER, stored.last_success_at.isoformat(),
                 failing_from.isoformat(), at_risk.isoformat(),
                 until.isoformat(), breached.isoformat(),
                 (breached - at_risk).total_seconds()))


class TestProofSQLite(_Proof, base.TestCase):
    DRIVER = 'sqlite'


class TestProofMySQL(_Proof, base.TestCase):
    DRIVER = 'mysql'


class TestProofPostgreSQL(_Proof, base.TestCase):
    DRIVER = 'postgresql'
