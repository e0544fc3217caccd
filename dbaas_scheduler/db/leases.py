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
"""Database access of the worker's leases: renew, check, release.

A worker holds the executions it claimed by their ``{execution id: claim
id}``; every statement here is conditional on the claim id and on status
RUNNING (``db_worker.still_running``), so that a claim superseded meanwhile
is neither renewed nor released, and its holder learns it lost it.
"""

import datetime

import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler.db import worker as db_worker

_EXECUTION = models.BackupExecution.__table__

# Rows per statement when a worker renews or releases its leases by key.
_KEYS_PER_STATEMENT = 500


def _chunks(claims):
    items = sorted(claims.items())
    for start in range(0, len(items), _KEYS_PER_STATEMENT):
        yield dict(items[start:start + _KEYS_PER_STATEMENT])


def _update_held(context, claims, lease):
    """Set the lease of the ``{execution id: claim id}`` still held.

    One statement per row, each finding its row by primary key: on
    MariaDB an ``id IN (...)`` over a large share of a small table is run
    as a scan of the whole primary key, and an UPDATE locks every row it
    scans -- other workers' included, waiting for any of them another
    transaction holds.  The ids whose lease is now ``lease`` are read back
    with a plain (non-locking) SELECT.
    """
    statement = (sa.update(_EXECUTION)
                 .where(_EXECUTION.c.id == sa.bindparam('execution_id'),
                        _EXECUTION.c.claim_id == sa.bindparam('claim'),
                        db_worker.still_running())
                 .values(lease_expires_at=sa.bindparam('new_lease')))
    held = set()
    for chunk in _chunks(claims):
        context.session.execute(statement, [
            {'execution_id': execution_id, 'claim': claim_id,
             'new_lease': lease}
            for execution_id, claim_id in chunk.items()])
        query = sa.select(_EXECUTION.c.id, _EXECUTION.c.claim_id).where(
            _EXECUTION.c.id.in_(list(chunk)),
            _EXECUTION.c.lease_expires_at == lease)
        held.update(row.id for row in context.session.execute(query)
                    if chunk.get(row.id) == row.claim_id)
    return held


@db_api.retry_on_deadlock
@context_manager.writer
def renew_leases(context, claims, now, lease_seconds):
    """Extend the leases of ``{execution id: claim id}``; the ids renewed.

    An id missing from the answer has lost its claim (superseded, or
    finished meanwhile).
    """
    if not claims:
        return set()
    return _update_held(context, claims, now + datetime.timedelta(
        seconds=lease_seconds))


@context_manager.reader
def lost_claims(context, claims):
    """Of ``{execution id: claim id}``, the ids whose claim was taken away.

    An execution whose row is gone, or that carries another claim id (its
    lease had expired and another worker claimed it), is lost; one that
    finished under this claim is not.  For the few claims a renewal
    missed: a SELECT by primary key.
    """
    current = {}
    for chunk in _chunks(claims):
        current.update((row.id, row.claim_id) for row in
                       context.session.execute(
                           sa.select(_EXECUTION.c.id, _EXECUTION.c.claim_id)
                           .where(_EXECUTION.c.id.in_(list(chunk)))))
    return {execution_id for execution_id, claim_id in claims.items()
            if current.get(execution_id) != claim_id}


@db_api.retry_on_deadlock
@context_manager.writer
def release_claims(context, claims, now):
    """Let the engine's sweep hand ``{execution id: claim id}`` over now.

    Their leases expire at ``now``; what was recorded (the backup id above
    all) stays, and the worker that resumes them goes on from there.
    Returns the ids released.
    """
    if not claims:
        return set()
    return _update_held(context, claims, now)
