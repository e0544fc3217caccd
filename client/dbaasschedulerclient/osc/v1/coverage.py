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
"""``openstack database backup coverage``: which instances are protected."""

from osc_lib.command import command

from dbaasschedulerclient.osc import v1

# The coverage states, most urgent first (the server's order of
# precedence: an instance is in the first that holds).
STATES = ('unprotected', 'paused', 'stale', 'verification_failed',
          'below_minimum', 'protected')
FIELDS = ('backend', 'project_id', 'instance_id', 'name', 'state',
          'reasons', 'source', 'policies', 'enabled_policies',
          'last_success_at', 'stale_after', 'daily_runs')
LIST_FIELDS = ('instance_id', 'name', 'backend', 'state', 'reasons',
               'policies', 'last_success_at')

# The API microversion the coverage report appeared in.
COVERAGE = (1, 5)


class ShowCoverage(command.Lister):
    """List every database instance of the project and its protection.

    unprotected: no backup policy; paused: no enabled policy; stale: no
    recent successful backup; below_minimum: backups too rare or kept too
    few; protected. The counts per state and any backend that could not
    list its instances go to standard error.
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--state', metavar='<state>', choices=STATES,
            help='Only the instances in this state: %s.' % ', '.join(
                STATES))
        parser.add_argument(
            '--all-projects', action='store_true', default=False,
            help='The instances of every project with backup policies '
                 '(admin only).')
        parser.add_argument(
            '--counts', action='store_true', default=False,
            help='The number of instances in each state instead of the '
                 'instances.')
        parser.add_argument(
            '--long', action='store_true', default=False,
            help='Every field of each instance.')
        return parser

    def take_action(self, parsed_args):
        api = v1.api_since(self.app, COVERAGE, 'Coverage reports')
        report = api.get_coverage(
            state=parsed_args.state,
            all_projects=parsed_args.all_projects or None)
        for missing in report.get('incomplete') or ():
            self.app.stderr.write(
                'Warning: the %s backend could not list the instances of '
                'project %s (instances without a policy may be missing): '
                '%s\n' % (missing['backend'], missing['project_id'],
                          missing['reason']))
        counts = report.get('counts') or {}
        if parsed_args.counts:
            return ('State', 'Instances'), [
                (state, counts.get(state, 0)) for state in STATES]
        self.app.stderr.write('%s\n' % ', '.join(
            '%s: %d' % (state, counts.get(state, 0)) for state in STATES))
        fields = FIELDS if parsed_args.long else LIST_FIELDS
        if parsed_args.all_projects and not parsed_args.long:
            fields = ('project_id',) + fields
        return v1.listing(report.get('instances') or [], fields)
