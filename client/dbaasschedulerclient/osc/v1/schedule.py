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
"""``openstack database backup schedule preview``: before a policy exists."""

import logging

from osc_lib.command import command

from dbaasschedulerclient.osc import v1

LOG = logging.getLogger(__name__)


class PreviewSchedule(command.Lister):
    """Show the next run times of a schedule, before creating a policy.

    The service checks the schedule as it would for a new policy: an error
    here is the error ``policy create`` would give.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--schedule', metavar='<schedule>', required=True,
            help='What policy create --schedule takes: a cron expression '
                 'such as "30 2 * * *" or an alias such as @daily; with '
                 '--schedule-type interval the time between runs; with once '
                 'an ISO 8601 date and time.')
        parser.add_argument(
            '--schedule-type', metavar='<type>',
            choices=('cron', 'interval', 'once'),
            help='How --schedule reads: cron (default), interval or once.')
        parser.add_argument(
            '--timezone', metavar='<zone>',
            help='IANA time zone the schedule is read in, such as '
                 'Europe/Berlin (default: UTC).')
        parser.add_argument(
            '--start-at', metavar='<time>',
            help='No run before this ISO 8601 time; an interval counts '
                 'from it (default: now).')
        parser.add_argument(
            '--end-at', metavar='<time>',
            help='No run after this ISO 8601 time.')
        parser.add_argument(
            '--count', metavar='<count>', type=int,
            help='How many run times (default: 10; the service caps it).')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        preview = api.preview_schedule(
            parsed_args.schedule, schedule_type=parsed_args.schedule_type,
            timezone=parsed_args.timezone, start_at=parsed_args.start_at,
            end_at=parsed_args.end_at, count=parsed_args.count)
        if preview.get('example'):
            LOG.warning('The schedule has H fields, which a policy hashes '
                        'with its own ID: these are the times of one '
                        'possible ID. "policy next-runs" shows a policy\'s '
                        'own.')
        return v1.run_times(preview)
