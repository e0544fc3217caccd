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
"""``openstack database backup policy execution list|show``."""

import uuid

from osc_lib.command import command
from osc_lib import exceptions

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.v1 import client

# The states of an execution, as the API names them.
STATUSES = ('PENDING', 'DISPATCHED', 'RUNNING', 'SUCCEEDED', 'FAILED',
            'SKIPPED', 'EXPIRED')

# Every field of an execution, in the order ``show`` prints them.
FIELDS = (
    'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
    'trigger', 'status', 'status_reason', 'attempts', 'backup_id',
    'deleted_backups', 'created_at', 'dispatched_at', 'started_at',
    'finished_at', 'fault', 'held', 'held_at', 'held_by', 'backup_state',
    'backup_delete_after', 'start_deadline', 'completion_deadline',
    'completion_window_exceeded', 'verified_at', 'verify_result',
    'verify_reason', 'verify_duration')
LIST_FIELDS = ('id', 'policy_id', 'instance_id', 'scheduled_at', 'trigger',
               'status', 'backup_id', 'held', 'backup_state')
LONG_FIELDS = ('id', 'policy_id', 'project_id', 'instance_id',
               'scheduled_at', 'trigger', 'status', 'status_reason',
               'attempts', 'backup_id', 'deleted_backups', 'started_at',
               'finished_at', 'fault', 'held', 'held_by', 'backup_state',
               'backup_delete_after')


class ListExecution(command.Lister):
    """List the executions of backup policies, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--policy', metavar='<policy>',
            help='Only the executions of this backup policy (name or ID).')
        parser.add_argument(
            '--instance', metavar='<instance-id>',
            help='Only the executions for this database instance (ID).')
        parser.add_argument(
            '--status', metavar='<status>', type=str.upper,
            choices=STATUSES,
            help='Only executions in this status: %s.' % ', '.join(
                STATUSES))
        parser.add_argument(
            '--since', metavar='<time>',
            help='Only executions scheduled at or after this ISO 8601 time '
                 '(UTC unless it has an offset), e.g. 2027-01-31T00:00:00Z.')
        held = parser.add_mutually_exclusive_group()
        held.add_argument(
            '--held', dest='held', action='store_true', default=None,
            help='Only executions whose backup is held.')
        held.add_argument(
            '--not-held', dest='held', action='store_false',
            help='Only executions whose backup is not held.')
        parser.add_argument(
            '--all-projects', action='store_true', default=False,
            help='Executions of every project (admin only).')
        parser.add_argument(
            '--limit', metavar='<num>', type=int,
            help='At most this many executions (one page); without it, '
                 'every page is fetched.')
        parser.add_argument(
            '--marker', metavar='<execution-id>',
            help='Start after this execution (the last ID of the previous '
                 'page).')
        parser.add_argument(
            '--long', action='store_true', default=False,
            help='More columns: project, reasons, attempts, times, faults.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        policy_id = None
        if parsed_args.policy:
            policy_id = _policy_id(api, parsed_args.policy)
        found = api.list_executions(
            policy_id=policy_id, instance_id=parsed_args.instance,
            status=parsed_args.status, since=parsed_args.since,
            all_projects=parsed_args.all_projects or None,
            limit=parsed_args.limit, marker=parsed_args.marker,
            held=parsed_args.held)
        fields = LONG_FIELDS if parsed_args.long else LIST_FIELDS
        return v1.listing(found, fields)


def _policy_id(api, name_or_id):
    """The ID of a policy named or identified, deleted policies included.

    An unknown name fails, rather than list nothing.  A UUID that names no
    policy may be a deleted one's, whose executions stay as history: it
    is used as it is.
    """
    try:
        return api.find_policy(name_or_id)['id']
    except client.NotFound as exc:
        try:
            return str(uuid.UUID(name_or_id))
        except ValueError:
            raise exceptions.CommandError(str(exc))
    except client.NoUniqueMatch as exc:
        raise exceptions.CommandError(str(exc))


class ShowExecution(command.ShowOne):
    """Show one execution of a backup policy."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('execution', metavar='<execution-id>',
                            help='ID of the execution.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        return v1.show(api.get_execution(parsed_args.execution), FIELDS)


class HoldExecution(command.ShowOne):
    """Hold the backup of an execution: retention never deletes it.

    The hold outlives the policy, and keeps what the backup is built on.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('execution', metavar='<execution-id>',
                            help='ID of the execution whose backup to hold.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        return v1.show(api.hold_backup(parsed_args.execution), FIELDS)


class ReleaseExecution(command.ShowOne):
    """Release the hold on the backup of an execution."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('execution', metavar='<execution-id>',
                            help='ID of the execution whose backup to '
                                 'release.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        return v1.show(api.release_backup(parsed_args.execution), FIELDS)
