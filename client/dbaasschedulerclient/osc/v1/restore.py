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
"""``openstack database backup restore [list|show]``."""

import time

from osc_lib.command import command
from osc_lib import exceptions

from dbaasschedulerclient.osc import v1

# The states of a restore, as the API names them.
STATUSES = ('PENDING', 'RUNNING', 'SUCCEEDED', 'FAILED')
FINISHED = ('SUCCEEDED', 'FAILED')

FIELDS = (
    'id', 'execution_id', 'policy_id', 'project_id', 'instance_id',
    'backend', 'backup_id', 'params', 'status', 'status_reason', 'attempts',
    'target_id', 'created_at', 'started_at', 'finished_at', 'duration',
    'fault', 'kind')
LIST_FIELDS = ('id', 'execution_id', 'backup_id', 'status', 'target_id',
               'duration')

# Seconds between two looks at a restore being watched.
WAIT_INTERVAL = 5.0


def wait_for(api, restore, interval=WAIT_INTERVAL):
    """Look at ``restore`` until it has finished; return it as it ended."""
    while restore.get('status') not in FINISHED:
        time.sleep(interval)
        restore = api.get_restore(restore['id'])
    return restore


# The API microversion restores appeared in.
RESTORES = (1, 4)


def _api(app):
    """The client, if the API it speaks has restores."""
    return v1.api_since(app, RESTORES, 'Restores')


def _finished(restore):
    if restore.get('status') == 'FAILED':
        raise exceptions.CommandError(
            'Restore %s failed: %s' % (
                restore['id'], restore.get('status_reason')
                or 'no reason given'))
    return v1.show(restore, FIELDS)


class CreateRestore(command.ShowOne):
    """Restore the backup of an execution (a new instance or a target)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            'execution', metavar='<execution-id>',
            help='ID of the execution whose backup to restore.')
        parser.add_argument(
            '--name', metavar='<name>',
            help='trove: name of the new instance (default: the source '
                 'instance\'s name with -restore- and a short ID).')
        parser.add_argument(
            '--flavor', metavar='<flavor-id>', dest='flavor_id',
            help='trove: flavor of the new instance (default: the source '
                 'instance\'s).')
        parser.add_argument(
            '--size', metavar='<GB>', type=int, dest='volume_size',
            help='trove: volume size of the new instance in GB (default: '
                 'the source instance\'s).')
        parser.add_argument(
            '--target', metavar='<target>',
            help='local: a restore target the operator configured for your '
                 'project (default for SQLite: a new file).')
        parser.add_argument(
            '--replace', action='store_true', default=None,
            help='local: drop what the target holds before restoring.')
        parser.add_argument(
            '--allow-source', action='store_true', default=None,
            help='local: allow the target to be the backup\'s own source '
                 'instance (name it with --target); its data is replaced.')
        parser.add_argument(
            '--wait', action='store_true', default=False,
            help='Wait until the restore has finished; fail if it failed.')
        return parser

    def take_action(self, parsed_args):
        api = _api(self.app)
        values = {field: getattr(parsed_args, field)
                  for field in ('name', 'flavor_id', 'volume_size',
                                'target', 'replace', 'allow_source')
                  if getattr(parsed_args, field) is not None}
        restore = api.restore_execution(parsed_args.execution, values)
        if parsed_args.wait:
            return _finished(wait_for(api, restore))
        return v1.show(restore, FIELDS)


class ListRestore(command.Lister):
    """List restores, newest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--execution', metavar='<execution-id>',
            help='Only the restores of this execution.')
        parser.add_argument(
            '--policy', metavar='<policy-id>',
            help='Only the restores of this backup policy (ID).')
        parser.add_argument(
            '--status', metavar='<status>', type=str.upper,
            choices=STATUSES,
            help='Only restores in this status: %s.' % ', '.join(STATUSES))
        parser.add_argument(
            '--all-projects', action='store_true', default=False,
            help='Restores of every project (admin only).')
        parser.add_argument(
            '--limit', metavar='<num>', type=int,
            help='At most this many restores (one page).')
        parser.add_argument(
            '--marker', metavar='<restore-id>',
            help='Start after this restore.')
        return parser

    def take_action(self, parsed_args):
        api = _api(self.app)
        found = api.list_restores(
            execution_id=parsed_args.execution,
            policy_id=parsed_args.policy, status=parsed_args.status,
            all_projects=parsed_args.all_projects or None,
            limit=parsed_args.limit, marker=parsed_args.marker)
        return v1.listing(found, LIST_FIELDS)


class ShowRestore(command.ShowOne):
    """Show one restore; with --wait, once it has finished."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('restore', metavar='<restore-id>',
                            help='ID of the restore.')
        parser.add_argument(
            '--wait', action='store_true', default=False,
            help='Wait until the restore has finished; fail if it failed.')
        return parser

    def take_action(self, parsed_args):
        api = _api(self.app)
        restore = api.get_restore(parsed_args.restore)
        if parsed_args.wait:
            return _finished(wait_for(api, restore))
        return v1.show(restore, FIELDS)
