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
"""The distribution: its commands load, and it stands without the service."""

import ast
import importlib.metadata
import os

from osc_lib.command import command

import dbaasschedulerclient
from dbaasschedulerclient.tests.unit import base

COMMANDS = 'openstack.backup_scheduler.v1'


class TestDistribution(base.TestCase):

    def test_every_command_loads(self):
        found = {entry.name: entry.load() for entry in
                 importlib.metadata.entry_points(group=COMMANDS)}
        self.assertIn('database_backup_policy_create', found)
        self.assertIn('database_backup_schedule_preview', found)
        self.assertIn('database_backup_scheduler_service_list', found)
        for name, command_class in found.items():
            self.assertTrue(issubclass(command_class, command.Command), name)
        [plugin] = [entry for entry in importlib.metadata.entry_points(
            group='openstack.cli.extension')
            if entry.name == 'backup_scheduler']
        self.assertEqual('dbaasschedulerclient.osc.plugin', plugin.value)

    def test_nothing_imports_the_service(self):
        # The service (dbaas_scheduler) is not installed with the client.
        top = os.path.dirname(dbaasschedulerclient.__file__)
        offenders = []
        for directory, _dirs, files in os.walk(top):
            for name in files:
                if not name.endswith('.py'):
                    continue
                path = os.path.join(directory, name)
                with open(path) as stream:
                    tree = ast.parse(stream.read(), path)
                for node in ast.walk(tree):
                    if isinstance(node, ast.Import):
                        modules = [alias.name for alias in node.names]
                    elif isinstance(node, ast.ImportFrom):
                        modules = [node.module or '']
                    else:
                        continue
                    offenders.extend(
                        '%s: %s' % (path, module) for module in modules
                        if module.split('.')[0] == 'dbaas_scheduler')
        self.assertEqual([], offenders)
