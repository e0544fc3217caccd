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
"""Three engines, in threads of this process, whose transactions deadlock.

A database hook makes chosen statements and commits of the engines fail
as a deadlock does (the driver's error, translated by oslo.db), and a test
connection holds row locks the sweeps want.  Whatever fails, an execution
that reached the workers must not be left PENDING, and a sweep must cast
again exactly what no worker claimed -- once.
"""

import collections
import threading
import time

from oslo_db import exception as db_exc
from oslo_utils import timeutils
from oslo_utils import uuidutils
import sqlalchemy as sa

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import models
from dbaas_scheduler.db import worker as db_worker
from dbaas_scheduler.engine import service as engine_service
from dbaas_scheduler import rpcapi
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.functional.engine import test_engine
from dbaas_scheduler.tests.functional.fixtures import db_fixtures
from dbaas_scheduler.tests.functional.fixtures import messaging_fixtures
from dbaas_scheduler.tests.functional.fixtures import process_fixtures

ENGINE_THREAD = 'test-engine-'
_EXECUTION = models.BackupExecution.__table__


def _deadlock_error(driver):
    """What the driver raises when the server picks it as the victim."""
    if driver == 'mysql':
        import pymysql
        return pymysql.err.OperationalError(
            1213, 'Deadlock found when trying to get lock; try restarting '
                  'transaction')
    import psycopg2.extensions
    return psycopg2.extensions.TransactionRollbackError(
        'deadlock detected\nDETAIL: injected by the test')


# How PostgreSQL's one statement of a tick begins (db/scheduling.py).
TICK_STATEMENT = 'WITH v AS (SELECT '


class DeadlockInjector:
    """Fails the n-th statements of some kinds, and some commits.

    Only in the engines' threads.  ``plan`` maps a kind of statement to
    the ordinal numbers (1-based) of those that fail; the kinds are
    recognised by their SQL.  A statement fails with the driver's
    deadlock error, which oslo.db turns into ``DBDeadlock`` as for a real
    one; a commit fails with ``DBDeadlock`` before it reaches the server
    (as Galera reports a certification conflict), and the transaction is
    rolled back.
    """

    def __init__(self, engine, driver, plan):
        self.engine = engine
        self.error = _deadlock_error(driver)
        self.plan = plan
        self.seen = collections.Counter()
        self.injected = collections.Counter()
        self.lock = threading.Lock()
        sa.event.listen(engine, 'before_cursor_execute', self._execute)
        sa.event.listen(engine, 'commit', self._commit)
        sa.event.listen(engine, 'rollback', self._rollback)

    def remove(self):
        sa.event.remove(self.engine, 'before_cursor_execute', self._execute)
        sa.event.remove(self.engine, 'commit', self._commit)
        sa.event.remove(self.engine, 'rollback', self._rollback)

    @staticmethod
    def kind(statement):
        if statement.startswith('INSERT INTO backup_execution'):
            return 'tick insert'
        if statement.startswith(TICK_STATEMENT):
            # PostgreSQL: the compare-and-set and the insert are one.
            return 'tick insert'
        if statement.startswith('UPDATE backup_policy AS p'):
            return 'tick compare-and-set'
        if 'backup_execution' in statement and 'FOR UPDATE' in statement:
            return 'execution lock'
        if statement.startswith('UPDATE backup_execution'):
            return 'execution update'
        return None

    def _fails(self, kind):
        if not threading.current_thread().name.startswith(ENGINE_THREAD):
            return False
        with self.lock:
            self.seen[kind] += 1
            if self.seen[kind] in self.plan.get(kind, ()):
                self.injected[kind] += 1
                return True
        return False

    def _execute(self, conn, cursor, statement, parameters, context,
                 executemany):
        kind = self.kind(statement)
        if kind == 'tick compare-and-set' or statement.startswith(
                TICK_STATEMENT):
            conn.info['tick'] = True
        if kind and self._fails(kind):
            raise self.error

    def _commit(self, conn):
        if conn.info.pop('tick', False) and self._fails('tick commit'):
            raise db_exc.DBDeadlock()

    def _rollback(self, conn):
        conn.info.pop('tick', None)


class ClaimingEndpoint(messaging_fixtures.RecordingEndpoint):
    """Records what it is sent and, once told to, claims it as a worker."""

    def __init__(self):
        super().__init__()
        self.claiming = False
        self.context = dbaas_context.get_admin_context()

    def _record(self, execution_ids):
        super()._record(execution_ids)
        if self.claiming:
            db_worker.claim_executions(self.context, execution_ids,
                                       'test-worker',
                                       uuidutils.generate_uuid(),
                                       timeutils.utcnow(True), 300)

    def counts(self):
        return collections.Counter(self.ids())


class _DeadlockTests(db_fixtures.DatabaseMixin):

    def setUp(self):
        super().setUp()
        self.useFixture(messaging_fixtures.Messaging(self, self.conf))
        recording = messaging_fixtures.RecordingWorker(self.conf)
        recording.endpoint = self.worker = ClaimingEndpoint()
        self.useFixture(recording)
        self.flags(batch_size=50, dispatch_timeout=60, sweep_interval=0.2,
                   group='engine')
        self.stopping = threading.Event()
        self.failures = collections.Counter()
        self.recast = collections.Counter()

    def start_engines(self, count):
        threads = []
        for number in range(count):
            service = engine_service.EngineService(self.conf)
            service.worker_api = rpcapi.WorkerAPI(self.conf)
            threads.append(threading.Thread(
                target=self._run_engine, args=(number, service),
                name='%s%d' % (ENGINE_THREAD, number), daemon=True))
        for thread in threads:
            thread.start()
        self.addCleanup(self._stop_engines, threads)

    def _stop_engines(self, threads):
        self.stopping.set()
        for thread in threads:
            thread.join(60)

    def _run_engine(self, number, service):
        # What LoopingService does with each loop, in one thread: an
        # iteration that raises is counted and tried again.
        context = dbaas_context.get_admin_context()
        next_sweep = 0
        while not self.stopping.is_set():
            try:
                delay = service.tick_once(context)
                if time.monotonic() >= next_sweep:
                    self.recast[number] += service.sweep_once(context).recast
                    next_sweep = (time.monotonic()
                                  + self.conf.engine.sweep_interval)
            except Exception as exc:
                self.failures[type(exc).__name__] += 1
                delay = 0.05
            self.stopping.wait(min(delay, 0.05))

    def statuses(self, ids=None):
        query = sa.select(_EXECUTION.c.id, _EXECUTION.c.status,
                          _EXECUTION.c.dispatched_at)
        with self.engine.connect() as connection:
            return {row.id: row for row in connection.execute(query)
                    if ids is None or row.id in ids}

    def wait_for(self, predicate, what, timeout=60):
        self.assertTrue(process_fixtures.wait_until(predicate, timeout, 0.1),
                        '%s after %ss; injected %s; failures %s' % (
                            what, timeout, dict(self.injector.injected),
                            dict(self.failures)))

    def test_deadlocks_leave_nothing_pending_and_nothing_cast_twice(self):
        policy_ids = test_engine.add_policies(self.engine, 300)
        self.injector = DeadlockInjector(self.engine, self.DRIVER, {
            'tick insert': (2,), 'tick commit': (1,),
            'execution lock': (1, 4), 'execution update': (1,)})
        self.addCleanup(self.injector.remove)
        self.start_engines(3)

        # The burst: every policy runs once and reaches the workers once,
        # and what reached them is recorded as handed over.
        def runs():
            return [e.id for e in test_engine.executions(self.engine)]
        self.wait_for(lambda: len(runs()) == len(policy_ids)
                      and set(runs()) <= set(self.worker.ids()),
                      'the burst was not dispatched')
        rows = test_engine.executions(self.engine)
        self.assertEqual(sorted(policy_ids),
                         sorted(row.policy_id for row in rows))
        self.assertEqual({1}, set(self.worker.counts().values()))
        self.assertEqual({'DISPATCHED'}, {row.status for row in rows})
        self.assertTrue(all(row.dispatched_at for row in rows))
        # The deadlocks happened, and were retried where they happened.
        self.assertEqual(1, self.injector.injected['tick insert'])
        self.assertEqual(1, self.injector.injected['tick commit'])
        self.assertEqual({}, dict(self.failures))

        # A worker claims half of them; the rest were lost on their way
        # (a broker restart, say).  Three sweeps now find them all late,
        # and a test connection holds the row locks of three of them.
        ids = sorted(row.id for row in rows)
        claimed, lost = ids[::2], ids[1::2]
        held = lost[:3]
        context = dbaas_context.get_admin_context()
        self.assertEqual(len(claimed), len(db_worker.claim_executions(
            context, claimed, 'busy-worker', uuidutils.generate_uuid(),
            timeutils.utcnow(True), 300)))
        self.worker.claiming = True
        holder = self.engine.connect()
        self.addCleanup(holder.close)
        transaction = holder.begin()
        holder.execute(sa.select(_EXECUTION.c.id)
                       .where(_EXECUTION.c.id.in_(held))
                       .with_for_update())
        # Long enough for the worker to claim a re-cast execution before
        # a sweep could find it late again.
        self.flags(dispatch_timeout=3, group='engine')

        # The sweeps skip the rows they cannot lock, and wait for nothing.
        free = set(lost) - set(held)
        self.wait_for(lambda: all(self.worker.counts()[i] == 2
                                  for i in free),
                      'the lost executions were not cast again')
        self.assertEqual({1}, {self.worker.counts()[i] for i in held})
        transaction.rollback()
        self.wait_for(lambda: all(self.worker.counts()[i] == 2
                                  for i in held),
                      'the executions once locked were not cast again')
        self.wait_for(lambda: {row.status for row in
                               self.statuses().values()} == {'RUNNING'},
                      'executions are still waiting')
        # Another sweep or two after that casts nothing more.
        time.sleep(3 * self.conf.engine.sweep_interval)
        self.stopping.set()

        counts = self.worker.counts()
        self.assertEqual({1}, {counts[i] for i in claimed})
        self.assertEqual({2}, {counts[i] for i in lost})
        self.assertEqual(len(lost), sum(self.recast.values()))
        self.assertGreater(self.injector.injected['execution lock'], 0)
        self.assertEqual({}, dict(self.failures))


class TestEngineDeadlocksMySQL(_DeadlockTests, base.TestCase):
    DRIVER = 'mysql'


class TestEngineDeadlocksPostgreSQL(_DeadlockTests, base.TestCase):
    DRIVER = 'postgresql'
