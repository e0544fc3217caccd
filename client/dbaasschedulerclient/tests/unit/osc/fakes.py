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
"""Commands run against a mocked client, and API resources to answer."""

import io
from unittest import mock

import fixtures

from dbaasschedulerclient.tests.unit import base
from dbaasschedulerclient.v1 import client

POLICY = {
    'id': 'p-1', 'name': 'nightly', 'description': None,
    'project_id': 'project-a', 'user_id': 'user-a', 'instance_id': 'i-1',
    'backend': 'fake', 'backup_params': {'incremental': True},
    'schedule_type': 'cron', 'schedule': '30 2 * * *',
    'timezone': 'Europe/Berlin', 'start_at': None, 'end_at': None,
    'remaining_runs': None, 'enabled': True, 'paused_reason': None,
    'overlap_policy': 'skip', 'catchup_window': None, 'keep_last': 7,
    'keep_daily': None, 'keep_weekly': None, 'keep_monthly': None,
    'max_age_days': None, 'start_window': None, 'completion_window': None,
    'exclusions': None, 'next_execution_time': '2027-01-31T01:30:00Z',
    'last_execution_id': None, 'created_at': '2027-01-30T12:00:00Z',
    'updated_at': None,
    'links': [{'rel': 'self', 'href': 'http://api/v1/backup-policies/p-1'}],
}

EXECUTION = {
    'id': 'e-1', 'policy_id': 'p-1', 'project_id': 'project-a',
    'instance_id': 'i-1', 'scheduled_at': '2027-01-31T01:30:00Z',
    'trigger': 'schedule', 'status': 'SUCCEEDED', 'status_reason': None,
    'attempts': 1, 'backup_id': 'b-9',
    'deleted_backups': [{'id': 'b-1', 'created_at': '2027-01-01T01:30:00Z'},
                        {'id': 'b-2', 'created_at': '2027-01-02T01:30:00Z'}],
    'created_at': '2027-01-31T01:30:00Z',
    'dispatched_at': '2027-01-31T01:30:01Z',
    'started_at': '2027-01-31T01:30:02Z',
    'finished_at': '2027-01-31T01:35:00Z', 'fault': None,
    'held': False, 'held_at': None, 'held_by': None, 'backup_state': None,
    'backup_delete_after': None,
    'start_deadline': '2027-01-31T09:30:00Z',
    'completion_deadline': '2027-02-01T01:30:00Z',
    'completion_window_exceeded': False,
    'links': [{'rel': 'self', 'href': 'http://api/v1/executions/e-1'}],
}


def find_policy(name_or_id):
    """The client's find_policy over a project with these policies.

    ``p-<n>`` is an id, ``nightly`` the name of POLICY, ``twins`` the name
    of two policies; anything else is unknown.
    """
    if name_or_id.startswith('p-'):
        return dict(POLICY, id=name_or_id)
    if name_or_id == 'nightly':
        return POLICY
    if name_or_id == 'twins':
        raise client.NoUniqueMatch(
            "More than one backup policy is named 'twins': give the ID of "
            "the one you mean (p-2, p-3).")
    raise client.NotFound('No backup policy with a name or ID of %r '
                          'exists.' % name_or_id)


class CommandTestCase(base.TestCase):
    """``self.api`` is the mocked client every command gets."""

    def setUp(self):
        super().setUp()
        self.app = mock.Mock()
        self.api = self.app.client_manager.backup_scheduler
        self.api.find_policy.side_effect = find_policy
        self.stderr = self.useFixture(fixtures.MonkeyPatch(
            'sys.stderr', io.StringIO())).new_value

    def parse(self, command_class, *argv):
        command = command_class(self.app, None)
        parser = command.get_parser('openstack test')
        return command, parser.parse_args(list(argv))

    def run_command(self, command_class, *argv):
        """What take_action returns; rows of a Lister become a list."""
        command, parsed_args = self.parse(command_class, *argv)
        result = command.take_action(parsed_args)
        if isinstance(result, tuple) and len(result) == 2 \
                and not isinstance(result[1], tuple):
            return result[0], list(result[1])
        return result

    def assertRefused(self, command_class, *argv):
        """argparse refuses the arguments (exit status 2)."""
        error = self.assertRaises(SystemExit, self.parse, command_class,
                                  *argv)
        self.assertEqual(2, error.code)
        return self.stderr.getvalue()
