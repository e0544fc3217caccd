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
"""The protection sweep: states that time alone moves on, announced.

Only the policies whose ``protection_check_at`` has come are read (an
index range): a policy renewed in time is never looked at here.  Each
transition is announced by the one engine whose compare-and-set made it.

A policy made before protection existed (no RPO, no state) is set up
here first (:func:`set_up`), a batch a pass, rather than waiting for a
change of it or its next outcome.
"""

import time

from oslo_log import log as logging

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import protection as db_protection
from dbaas_scheduler import exception
from dbaas_scheduler import notifications
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import protection as protection_obj

LOG = logging.getLogger(__name__)

# Batches of one pass; the rest waits for the next pass.
MAX_BATCHES = 10
# Seconds between two looks for policies without a state, once a look
# found none left (a full read of the policies: they appear only from an
# older API during an upgrade).
SET_UP_EVERY = 3600.0
# time.monotonic() after which this engine looks again.
_next_set_up = 0.0


def set_up(context, conf, now):
    """Give the policies made before protection existed their state.

    Their RPO is the default of their schedule (the one a change of the
    policy would give them), their last success and p95s come from their
    executions.  At most ``[engine] batch_size`` a pass, and once none is
    left, a look every :data:`SET_UP_EVERY` seconds; returns the
    transitions made.
    """
    global _next_set_up
    made = []
    if time.monotonic() < _next_set_up:
        return made
    unset = db_protection.list_unset(context, conf.engine.batch_size)
    if len(unset) < conf.engine.batch_size:
        _next_set_up = time.monotonic() + SET_UP_EVERY
    for policy_id in unset:
        try:
            policy = db_api.get_policy(context, policy_id)
            try:
                sched = backup_policy_obj.validate_schedule(
                    conf, {field: getattr(policy, field)
                           for field in backup_policy_obj.USER_FIELDS},
                    policy.id, now)
            except exception.InvalidSchedule:
                # Out of slots: no default RPO, no state.
                sched = None
            rpo = (protection_obj.effective_rpo(None, sched, now)
                   if sched is not None else None)
            transition = db_protection.set_up(context, policy_id, rpo, now)
        except exception.PolicyNotFound:
            continue
        except Exception:
            LOG.exception('Policy %s: could not set its protection state '
                          'up', policy_id)
            continue
        if transition is not None:
            made.append(transition)
            _announce(conf, context, transition)
    return made


def _announce(conf, context, transition):
    log = LOG.warning if transition.protection != 'ok' else LOG.info
    log('Policy %s: protection %s -> %s (protected until %s)',
        transition.id, transition.previous_protection,
        transition.protection, transition.protected_until)
    notifications.notify_protection(conf, context, transition)


def sweep(context, conf, now):
    """Move on the due policies; returns the transitions made."""
    made = set_up(context, conf, now)
    for _ in range(MAX_BATCHES):
        batch = db_protection.sweep_due(context, now,
                                        conf.engine.batch_size)
        made.extend(batch)
        for transition in batch:
            _announce(conf, context, transition)
        if len(batch) < conf.engine.batch_size:
            break
    return made
