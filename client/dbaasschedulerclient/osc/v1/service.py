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
"""``openstack database backup scheduler service list``: the cluster view."""

from osc_lib.command import command

from dbaasschedulerclient.osc import v1

FIELDS = ('id', 'host', 'binary', 'topic', 'pid', 'state', 'started_at',
          'heartbeat_at')
LIST_FIELDS = ('id', 'host', 'binary', 'pid', 'state', 'heartbeat_at')


class ListService(command.Lister):
    """List the engine, worker and API processes of the backup scheduler.

    A process is down when its heartbeat is older than the service's
    service_down_time; the service table keeps a dead process's row for a
    day. Administrators only.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--long', action='store_true', default=False,
            help='More columns: topic, start time.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        fields = FIELDS if parsed_args.long else LIST_FIELDS
        return v1.listing(api.list_services(), fields)
