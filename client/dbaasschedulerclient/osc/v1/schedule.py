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
    """Show the next slots of a schedule, before creating a policy.

    Each with the end of its start and completion windows and the
    exclusion window it falls in, if any.

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
        parser.add_argument(
            '--start-window', metavar='<seconds>', type=int,
            help='What policy create --start-window takes.')
        parser.add_argument(
            '--completion-window', metavar='<seconds>', type=int,
            help='What policy create --completion-window takes.')
        parser.add_argument(
            '--exclusion', metavar='<window>', dest='exclusions',
            action='append',
            help='What policy create --exclusion takes (repeat for more).')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        preview = api.preview_schedule(
            parsed_args.schedule, schedule_type=parsed_args.schedule_type,
            timezone=parsed_args.timezone, start_at=parsed_args.start_at,
            end_at=parsed_args.end_at, count=parsed_args.count,
            start_window=parsed_args.start_window,
            completion_window=parsed_args.completion_window,
            exclusions=parsed_args.exclusions)
        if preview.get('example'):
            LOG.warning('The schedule has H fields, which a policy hashes '
                        'with its own ID: these are the times of one '
                        'possible ID. "policy next-runs" shows a policy\'s '
                        'own.')
        if 'slots' not in preview:
            # A server older than API 1.1: the run times alone.
            return v1.run_times(preview)
        # The columns of the run times first, as before windows.
        return v1.slot_rows(preview['slots'], preview['timezone'],
                            first='Run Time')
