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
"""Casting committed executions to the workers.

oslo.messaging sends one message at a time, at about 2,000 casts a second
on a small machine, while the database commits 20,000 executions a second;
the cast, not the database, limits a burst.  So a tick's executions travel
in groups of at most ``[engine] executions_per_message``, as even in size
as possible (``backup_database_instances``; a group of one is a
``backup_database_instance``).  The worker that gets a group claims what it
can of it with one conditional update; executions already taken are
dropped, not the group.

What is cast here was committed DISPATCHED, stamped with the time it was
handed over, before the cast: a cast that succeeds writes nothing more,
so nothing can be lost between the message and the database ("Row locks"
in doc/source/contributor/exactly-once.rst).  A failed cast is not
retried here: the first failure stops the rest of the batch, so that a
broker outage costs one timeout per tick, not one per message, and the
executions not sent go back to PENDING, where the sweep casts them again
after ``[engine] dispatch_timeout``.
"""

import math

from oslo_log import log as logging

from dbaas_scheduler.db import scheduling as db_scheduling
from dbaas_scheduler import stats

LOG = logging.getLogger(__name__)


def split_into_messages(execution_ids, per_message):
    """Groups of at most ``per_message`` ids, as even in size as possible."""
    if not execution_ids:
        return []
    count = math.ceil(len(execution_ids) / per_message)
    size = math.ceil(len(execution_ids) / count)
    return [execution_ids[start:start + size]
            for start in range(0, len(execution_ids), size)]


def _cast(worker_api, context, execution_ids, per_message):
    """Cast executions; return the ids whose message was handed over."""
    sent = []
    for group in split_into_messages(list(execution_ids), per_message):
        try:
            if len(group) == 1:
                worker_api.backup_database_instance(context, group[0])
            else:
                worker_api.backup_database_instances(context, group)
        except Exception as exc:
            LOG.warning('Could not cast %d of %d executions to the workers '
                        '(%s: %s); the sweep will cast them again.',
                        len(execution_ids) - len(sent), len(execution_ids),
                        type(exc).__name__, exc)
            break
        sent.extend(group)
    stats.ENGINE_CASTS.inc('sent', amount=len(sent))
    if len(sent) < len(execution_ids):
        stats.ENGINE_CASTS.inc('failed',
                               amount=len(execution_ids) - len(sent))
    return sent


def dispatch(worker_api, context, execution_ids, per_message, dispatched_at):
    """Cast executions committed DISPATCHED at ``dispatched_at``.

    Returns the ids that were sent.  Those that could not be sent go back
    to PENDING; if even that fails (the database is away too), they stay
    DISPATCHED and the sweep casts them again all the same, a
    ``dispatch_timeout`` after ``dispatched_at``.
    """
    sent = _cast(worker_api, context, execution_ids, per_message)
    if len(sent) < len(execution_ids):
        unsent = set(execution_ids).difference(sent)
        try:
            db_scheduling.release_uncast_executions(context, unsent,
                                                    dispatched_at)
        except Exception as exc:
            LOG.warning('Could not record that %d executions were not cast '
                        '(%s: %s); they stay DISPATCHED until the sweep '
                        'casts them again.', len(unsent),
                        type(exc).__name__, exc)
    return sent
