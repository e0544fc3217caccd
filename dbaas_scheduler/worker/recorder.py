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
"""Recording backup ids as soon as they are known, many per transaction.

The backend's backup id must be in the database before the worker goes on
(a worker that dies afterwards is resumed from it), so each thread waits
for its id to be committed.  Every transaction costs the database a round
trip more than its statement (oslo.db pings each connection it checks
out) and a commit: instead of one transaction per id, a recorder thread
commits together the ids that arrived while the previous commit ran
(group commit).  A lone id waits for nothing more than its own commit.
The thread keeps one connection for it (``db_worker.BackupIdWriter``:
one round trip per batch on PostgreSQL), and falls back to a session
from the pool when that connection fails.
"""

import queue
import threading

from oslo_log import log as logging

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import worker as db_worker

LOG = logging.getLogger(__name__)

# Most ids committed in one transaction.
MAX_BATCH = 200


class _Done:
    """A one-shot ``threading.Event``, on a plain lock.

    Set once, by the recorder thread, and waited for by one thread: a
    lock taken at creation and released by :meth:`set` costs a fraction
    of an Event's condition variable, one per recorded id.
    """

    __slots__ = ('_lock', '_set')

    def __init__(self):
        self._lock = threading.Lock()
        self._lock.acquire()
        self._set = False

    def set(self):
        if not self._set:
            self._set = True
            self._lock.release()

    def wait(self):
        with self._lock:
            pass

    def is_set(self):
        return self._set


class _Pending:
    def __init__(self, execution_id, claim_id, backup_id):
        self.execution_id = execution_id
        self.claim_id = claim_id
        self.backup_id = backup_id
        self.done = _Done()
        self.recorded = False
        self.error = None


class BackupIdRecorder:
    """One per worker process; ``record`` may be called from any thread."""

    def __init__(self, owner):
        self.owner = owner
        self._queue = queue.Queue()
        self._thread = None
        self._lock = threading.Lock()
        # The recorder thread's own connection (db/worker.py).
        self._writer = db_worker.BackupIdWriter()

    def record(self, execution_id, claim_id, backup_id):
        """Commit ``backup_id``; False if claim ``claim_id`` was superseded.

        Another thread of this process may have claimed the execution anew
        meanwhile: the claim id, not the owner, says whose the record is.
        """
        self._ensure_thread()
        pending = _Pending(execution_id, claim_id, backup_id)
        self._queue.put(pending)
        pending.done.wait()
        if pending.error is not None:
            raise pending.error
        return pending.recorded

    def stop(self):
        with self._lock:
            if self._thread is not None:
                self._queue.put(None)
                self._thread.join()
                self._thread = None

    def _ensure_thread(self):
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name='backup-id-recorder', daemon=True)
                self._thread.start()

    def _run(self):
        context = dbaas_context.get_admin_context()
        while True:
            first = self._queue.get()
            if first is None:
                self._writer.close()
                return
            batch = [first]
            while len(batch) < MAX_BATCH:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    self._queue.put(None)
                    break
                batch.append(item)
            self._commit(context, batch)

    def _record(self, context, triples):
        """On the kept connection if it can, else through a session."""
        try:
            recorded = self._writer.record(triples)
        except Exception as exc:
            # The connection was lost (the database restarted, failed
            # over): the batch again, the usual way, which reconnects.
            # (oslo.log adds the error's summary to the line.)
            LOG.warning('Recording %d backup ids on the recorder\'s '
                        'connection failed (%s); recording them through '
                        'a new one', len(triples), type(exc).__name__)
            recorded = None
        if recorded is None:
            recorded = db_worker.record_backup_ids(context, triples)
        return recorded

    def _commit(self, context, batch):
        try:
            recorded = self._record(
                context, [(item.execution_id, item.claim_id, item.backup_id)
                          for item in batch])
        except Exception:
            if len(batch) == 1:
                self._commit_alone(context, batch[0])
            else:
                # One bad row must not fail the others: one at a time, so
                # that each thread gets its own answer.
                LOG.warning('Recording %d backup ids together failed; '
                            'recording them one by one', len(batch),
                            exc_info=True)
                for item in batch:
                    self._commit_alone(context, item)
        else:
            for item in batch:
                item.recorded = item.execution_id in recorded
                item.done.set()

    def _commit_alone(self, context, item):
        try:
            item.recorded = db_worker.record_backup_id(
                context, item.execution_id, item.claim_id, item.backup_id)
        except Exception as exc:
            item.error = exc
        finally:
            item.done.set()
