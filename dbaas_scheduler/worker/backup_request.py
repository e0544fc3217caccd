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
"""What a worker asks the backend for: the backup's name, description and kind.

Pure functions of the policy and the execution, so that a retried or
resumed start asks for the same backup: the name and the description
(which carries the execution's tag, ``backends.execution_tag``) are
derived from the execution alone, and a chained policy's full-or-
incremental step from how many backups the policy has made.
"""

import re
import types

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler import enums


_CONTROL = re.compile(r'[\x00-\x1f\x7f-\x9f\u2028\u2029]+')


def one_line(text):
    """``text`` without control characters or line breaks.

    Trove (and other backends) want one-line names: Trove's schema pattern
    ``^.*[0-9a-zA-Z]+.*$`` refuses a newline.  Policies created before the
    API refused such names may still have them.
    """
    return ' '.join(_CONTROL.sub(' ', text or '').split())


def backup_name(policy, execution):
    """``<policy name>-<scheduled_at in UTC, ISO basic>``, on one line."""
    return '%s-%s' % (one_line(policy.name),
                      execution.scheduled_at.strftime('%Y%m%dT%H%M%SZ'))


_TRIGGER_WORDS = {
    enums.ExecutionTrigger.SCHEDULE: 'Scheduled',
    enums.ExecutionTrigger.MANUAL: 'Manual',
    enums.ExecutionTrigger.BACKFILL: 'Backfill',
}


def backup_description(policy, execution):
    return ('%s backup of policy %s (%s) for %s. %s' % (
        _TRIGGER_WORDS.get(execution.trigger, 'Scheduled'),
        one_line(policy.name),
        policy.id, execution.scheduled_at.isoformat(),
        backends.execution_tag(execution.id)))


# With "incremental": true, a full backup every this many backups unless
# backup_params says "full_every" (doc/source/user/retention.rst).
DEFAULT_FULL_EVERY = 7


def chain_step(policy, backups_made):
    """``policy`` as this run uses it: full or incremental.

    With ``incremental`` backups, every ``full_every``-th backup of the
    policy (the first one too) is a full one and starts a new chain, so
    that retention can delete old chains whole; the others build on the
    instance's latest backup.  ``backups_made`` counts the policy's
    earlier backups, or is a callable that counts them, called only for
    a chained policy.
    """
    params = policy.backup_params or {}
    if not params.get('incremental') or params.get('parent_id'):
        return policy
    if callable(backups_made):
        # Counted only for a chained policy: a query the others skip.
        backups_made = backups_made()
    try:
        full_every = int(params.get('full_every') or DEFAULT_FULL_EVERY)
    except (TypeError, ValueError):
        full_every = DEFAULT_FULL_EVERY
    if backups_made % max(full_every, 1):
        return policy
    run = types.SimpleNamespace(**vars(policy))
    run.backup_params = dict(params, incremental=False)
    return run
