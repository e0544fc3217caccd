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

A failed cast is not retried here: the execution stays recorded (PENDING,
or DISPATCHED with an old ``dispatched_at``) and the sweep casts it again
after ``[engine] dispatch_timeout``.  The first failure stops the rest of
the batch, so that a broker outage costs one timeout per tick, not one per
message.
"""

import math

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.db import api as db_api

LOG = logging.getLogger(__name__)


def split_into_messages(execution_ids, per_message):
    """Groups of at most ``per_message`` ids, as even in size as possible."""
    if not execution_ids:
        return []
    count = math.ceil(len(execution_ids) / per_message)
    size = math.ceil(len(execution_ids) / count)
    return [execution_ids[start:start + size]
            for start in range(0, len(execution_ids), size)]


def cast_executions(worker_api, context, execution_ids, per_message):
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
    return sent


def dispatch(worker_api, context, execution_ids, per_message):
    """Cast new (PENDING) executions and mark those sent DISPATCHED."""
    cast_at = timeutils.utcnow(True)
    sent = cast_executions(worker_api, context, execution_ids, per_message)
    if sent:
        db_api.mark_executions_dispatched(context, sent, cast_at)
    return sent
