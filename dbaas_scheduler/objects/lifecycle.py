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
"""The lifecycle preview of a policy: what retention will do, ahead.

:func:`forecast_retention` runs retention forward over the policy's next
successful runs, with the very decisions the workers make
(:mod:`dbaas_scheduler.retention`): holds, the floor, chains and the
grace applied.  Assumptions, said in the user guide: every run succeeds
and makes a full backup (no parent), no other policy of the instance
runs, and no hold is placed or released meanwhile.
"""

import dataclasses
import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.backends import base as backends_base
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import retention as db_retention
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler import retention
from dbaas_scheduler import timezones

LOG = logging.getLogger(__name__)

# The id the preview gives the backup of its n-th run (from 1).
FUTURE_ID = 'next-run-%d'


@dataclasses.dataclass
class RunForecast:
    at: datetime.datetime
    # The backup this run makes (FUTURE_ID).
    backup_id: str
    # Backups marked expiring at this run: [(backup id, delete after)].
    expires: list
    # Backups deleted at this run: [(backup id, deleted with or None)].
    deletes: list
    # Successful backups of the policy left after this run.
    remaining: int


def forecast_retention(policy, backups, records, policies, run_times,
                       grace):
    """What retention does at each of ``run_times`` (a pure function).

    :param policy: the policy (``id``, its retention fields).
    :param backups: the instance's backups, as its backend lists them.
    :param records: ``{backup id: record}`` as
        :func:`db_retention.list_instance_backups` returns them.
    :param policies: ``{policy id: retention.PolicyRetention}`` of the
        instance's policies (this one included).
    :param run_times: the times of the next successful runs.
    :param grace: ``timedelta``, ``[worker] retention_grace``.
    """
    backups = list(backups)
    owners = {backup_id: record.policy_id
              for backup_id, record in records.items()}
    held = {backup_id for backup_id, record in records.items()
            if record.held_at is not None}
    # A future backup is not verified yet: the newest verified one now
    # stays through the whole forecast.
    verified = retention.newest_verified(records, policies)
    states = {backup_id: (record.backup_state, record.backup_delete_after)
              for backup_id, record in records.items()
              if record.backup_state != 'deleted'}
    forecast = []
    for number, at in enumerate(run_times, 1):
        new = backends_base.Backup(
            id=FUTURE_ID % number, instance_id=policy.instance_id,
            status=backends_base.BackupStatus.COMPLETED, created_at=at)
        backups.append(new)
        owners[new.id] = policy.id
        decision = retention.plan_instance_retention(
            backups, policy.id, owners, policies, at, held, verified)
        plan = retention.plan_grace(decision, states, at, grace)
        for backup_id in plan.cancel:
            states.pop(backup_id, None)
        expires = []
        for backup in plan.expire:
            states[backup.id] = ('expiring', at + grace)
            expires.append((backup.id, at + grace))
        deletes = []
        for backup in plan.delete:
            deletes.append((backup.id, None))
            deletes.extend((child, parent) for child, parent
                           in sorted(decision.cascade.items())
                           if parent == backup.id)
        gone = {backup_id for backup_id, _ in deletes}
        backups = [b for b in backups if b.id not in gone]
        for backup_id in gone:
            states.pop(backup_id, None)
        remaining = sum(
            1 for b in backups if owners.get(b.id) == policy.id
            and b.status == backends_base.BackupStatus.COMPLETED)
        forecast.append(RunForecast(at, new.id, expires, deletes,
                                    remaining))
    return forecast


def retention_preview(context, conf, policy, count, now=None):
    """The retention forecast of a policy's next ``count`` runs.

    Lists the instance's backups at the backend now; a backend that
    cannot answer raises ServiceUnavailable (503: try again).
    """
    now = now or timeutils.utcnow(True)
    times = backup_policy_obj.next_runs(conf, policy, count, now)
    backend = loader.get_backend(conf, policy.backend)
    try:
        backups = backend.list_backups(policy)
    except backends_base.BackendError as exc:
        raise exception.ServiceUnavailable(
            reason='the %s backend could not list the backups of instance '
                   '%s: %s' % (policy.backend, policy.instance_id, exc))
    records = db_retention.list_instance_backups(
        context, policy.project_id, policy.instance_id)
    policies = {
        other.id: retention.PolicyRetention.from_policy(
            other, timezones.get_timezone(other.timezone))
        for other in db_retention.list_instance_policies(
            context, policy.backend, policy.project_id, policy.instance_id)}
    grace = datetime.timedelta(seconds=conf.worker.retention_grace)
    return forecast_retention(policy, backups, records, policies, times,
                              grace)
