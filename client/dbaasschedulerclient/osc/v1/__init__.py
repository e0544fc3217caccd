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
"""Commands of API v1, and how they turn API resources into columns.

A resource is shown as ``(column names, values)``: each command names the
API fields it shows, :data:`LABELS` gives their column names, and a
formatter (a cliff FormattableColumn) renders nested values readably in a
table and unchanged in JSON or YAML.  Times are shown as the API gives
them (RFC 3339, UTC).
"""

import datetime
import logging
import zoneinfo

from osc_lib.cli import format_columns
from osc_lib import exceptions

from dbaasschedulerclient.v1 import client

LOG = logging.getLogger(__name__)

LABELS = {
    'id': 'ID',
    'name': 'Name',
    'description': 'Description',
    'project_id': 'Project ID',
    'user_id': 'User ID',
    'instance_id': 'Instance ID',
    'backend': 'Backend',
    'backup_params': 'Backup Params',
    'schedule_type': 'Schedule Type',
    'schedule': 'Schedule',
    'timezone': 'Time Zone',
    'start_at': 'Start At',
    'end_at': 'End At',
    'remaining_runs': 'Remaining Runs',
    'enabled': 'Enabled',
    'paused_reason': 'Paused Reason',
    'overlap_policy': 'Overlap Policy',
    'catchup_window': 'Catch-up Window',
    'start_window': 'Start Window',
    'completion_window': 'Completion Window',
    'exclusions': 'Exclusions',
    'start_deadline': 'Start Deadline',
    'completion_deadline': 'Completion Deadline',
    'completion_window_exceeded': 'Completion Window Exceeded',
    'keep_last': 'Keep Last',
    'keep_daily': 'Keep Daily',
    'keep_weekly': 'Keep Weekly',
    'keep_monthly': 'Keep Monthly',
    'max_age_days': 'Max Age Days',
    'rpo': 'RPO',
    'effective_rpo': 'Effective RPO',
    'protection': 'Protection',
    'last_success_at': 'Last Success At',
    'protected_until': 'Protected Until',
    'protection_changed_at': 'Protection Changed At',
    'pause_after_failures': 'Pause After Failures',
    'consecutive_failures': 'Consecutive Failures',
    'min_keep': 'Min Keep',
    'verify_every': 'Verify Every',
    'verify_check': 'Verify Check',
    'verify_schedule': 'Verify Schedule',
    'verify_next_at': 'Verify Next At',
    'verified_at': 'Verified At',
    'verify_result': 'Verify Result',
    'verify_reason': 'Verify Reason',
    'verify_duration': 'Verify Duration',
    'kind': 'Kind',
    'next_execution_time': 'Next Execution Time',
    'last_execution_id': 'Last Execution ID',
    'created_at': 'Created At',
    'updated_at': 'Updated At',
    'policy_id': 'Policy ID',
    'scheduled_at': 'Scheduled At',
    'trigger': 'Trigger',
    'status': 'Status',
    'status_reason': 'Status Reason',
    'attempts': 'Attempts',
    'backup_id': 'Backup ID',
    'deleted_backups': 'Deleted Backups',
    'dispatched_at': 'Dispatched At',
    'started_at': 'Started At',
    'finished_at': 'Finished At',
    'fault': 'Fault',
    'held': 'Held',
    'held_at': 'Held At',
    'held_by': 'Held By',
    'backup_state': 'Backup State',
    'backup_delete_after': 'Backup Delete After',
    'host': 'Host',
    'binary': 'Binary',
    'topic': 'Topic',
    'pid': 'PID',
    'state': 'State',
    'heartbeat_at': 'Heartbeat At',
    'execution_id': 'Execution ID',
    'params': 'Params',
    'target_id': 'Target ID',
    'duration': 'Duration (s)',
    'restore_time': 'Restore Time',
    'reasons': 'Reasons',
    'source': 'Source',
    'policies': 'Policies',
    'enabled_policies': 'Enabled Policies',
    'stale_after': 'Stale After (s)',
    'daily_runs': 'Backups a Day',
    'action': 'Action',
}


class BackupsColumn(format_columns.ListColumn):
    """Backups a retention pass deleted: their ids in a table, all in JSON."""

    def human_readable(self):
        return ', '.join(str(backup.get('id') if isinstance(backup, dict)
                             else backup) for backup in self._value or ())


FORMATTERS = {
    'backup_params': format_columns.DictColumn,
    'deleted_backups': BackupsColumn,
    'params': format_columns.DictColumn,
    'restore_time': format_columns.DictColumn,
    'reasons': format_columns.ListColumn,
}


def labels(fields):
    return tuple(LABELS.get(field, field) for field in fields)


def values(item, fields):
    """The values of ``fields`` in an API resource, formatted."""
    row = []
    for field in fields:
        value = item.get(field)
        formatter = FORMATTERS.get(field)
        row.append(formatter(value) if formatter else value)
    return tuple(row)


def api_since(app, version, what):
    """The client, if the API version it speaks has ``what``.

    ``version`` is ``(major, minor)``; ``what`` names the feature in the
    error (``'Restores'``).
    """
    api = app.client_manager.backup_scheduler
    speaks = getattr(api, 'api_version', None)
    if isinstance(speaks, str):
        major, minor = (int(part) for part in speaks.split('.'))
        if (major, minor) < version:
            raise exceptions.CommandError(
                '%s need API version %d.%d of the backup scheduler; this '
                'request uses %s (the server, or '
                '--os-backup-scheduler-api-version, allows no later one).'
                % ((what,) + tuple(version) + (speaks,)))
    return api


def show(item, fields):
    """What a ShowOne command returns for one resource."""
    return labels(fields), values(item, fields)


def listing(items, fields):
    """What a Lister command returns for a list of resources."""
    return labels(fields), (values(item, fields) for item in items)


def for_each(ids, action, verb, noun='backup policy',
             nouns='backup policies'):
    """Apply ``action`` to every id; report each failure, then fail once.

    Like ``openstack server delete a b c``: one bad id does not stop the
    others, and the exit status says that something failed.
    """
    failed = 0
    for resource_id in ids:
        try:
            action(resource_id)
        except Exception as exc:
            failed += 1
            LOG.error('Failed to %s %s %s: %s', verb, noun, resource_id, exc)
    if failed:
        raise exceptions.CommandError('Failed to %s %d of %d %s.' % (
            verb, failed, len(ids), nouns))


def find_policy(api, name_or_id):
    """The policy with this ID or name, or a CommandError saying why not."""
    try:
        return api.find_policy(name_or_id)
    except (client.NotFound, client.NoUniqueMatch) as exc:
        raise exceptions.CommandError(str(exc))


def local_time(utc_text, zone):
    """An API time (RFC 3339, UTC) in ``zone``, ISO 8601 with its offset."""
    moment = datetime.datetime.fromisoformat(utc_text.replace('Z', '+00:00'))
    return moment.astimezone(zone).isoformat()


def _zone(name):
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        LOG.warning('Time zone %s is unknown here; local times are shown '
                    'in UTC.', name)
        return datetime.timezone.utc


def slot_rows(slots, timezone, first='Slot'):
    """Rows of the slots of a lifecycle or schedule preview."""
    zone = _zone(timezone)
    return ((first, 'Local Time', 'Start By', 'Finish By', 'Excluded'),
            ((slot['scheduled_at'], local_time(slot['scheduled_at'], zone),
              slot['start_window_ends_at'],
              slot['completion_window_ends_at'], slot['excluded'] or '')
             for slot in slots))


def run_times(preview):
    """Rows of (UTC time, local time) of a next-runs or preview answer."""
    try:
        zone = zoneinfo.ZoneInfo(preview['timezone'])
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        LOG.warning('Time zone %s is unknown here; local times are shown '
                    'in UTC.', preview['timezone'])
        zone = datetime.timezone.utc
    return (('Run Time', 'Local Time'),
            ((time, local_time(time, zone))
             for time in preview['next_runs']))
