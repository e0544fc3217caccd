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
"""The plugin: where the API is, and the global options."""

import argparse
from unittest import mock

import fixtures
from keystoneauth1 import exceptions as ks_exceptions
from osc_lib import exceptions

from dbaasschedulerclient.osc import plugin
from dbaasschedulerclient.tests.unit import base
from dbaasschedulerclient.v1 import client


def make_instance(config=None, endpoint=None, version='1'):
    """A stand-in for osc-lib's ClientManager."""
    instance = mock.Mock(region_name='RegionOne', interface='internal')
    instance._api_version = {plugin.API_NAME: version}
    instance._cli_options.config = dict(config or {})
    instance.get_endpoint_for_service_type.return_value = endpoint
    return instance


class TestMakeClient(base.TestCase):

    def test_catalog_endpoint(self):
        instance = make_instance(endpoint='http://api:8798/v1/')
        made = plugin.make_client(instance)
        self.assertIsInstance(made, client.Client)
        instance.get_endpoint_for_service_type.assert_called_once_with(
            'backup-scheduler', region_name='RegionOne',
            interface='internal')
        self.assertEqual('http://api:8798', made.adapter.endpoint_override)
        self.assertIs(instance.session, made.adapter.session)
        self.assertEqual(('backup-scheduler', 'RegionOne', 'internal'),
                         (made.adapter.service_type,
                          made.adapter.region_name, made.adapter.interface))

    def test_url_option_wins(self):
        instance = make_instance({'backup_scheduler_url': 'http://here:1'},
                                 endpoint='http://catalog:8798')
        self.assertEqual('http://here:1', plugin.make_client(
            instance).adapter.endpoint_override)
        instance.get_endpoint_for_service_type.assert_not_called()

    def test_nothing_in_the_catalog(self):
        instance = make_instance()
        instance.get_endpoint_for_service_type.side_effect = (
            ks_exceptions.EndpointNotFound())
        error = self.assertRaises(exceptions.CommandError,
                                  plugin.make_client, instance)
        self.assertIn('No backup-scheduler endpoint found in the service '
                      'catalog (region RegionOne, interface internal)',
                      str(error))
        self.assertIn('--os-backup-scheduler-url', str(error))

    def test_auth_none_without_endpoint(self):
        instance = make_instance({'auth_type': 'none'})
        error = self.assertRaises(exceptions.CommandError,
                                  plugin.make_client, instance)
        self.assertIn('--os-endpoint http://127.0.0.1:8798', str(error))

    def test_a_version_the_client_does_not_speak(self):
        error = self.assertRaises(
            exceptions.CommandError, plugin.make_client,
            make_instance(endpoint='http://api', version='2'))
        self.assertIn('This client speaks versions 1.0 to', str(error))
        error = self.assertRaises(
            exceptions.CommandError, plugin.make_client,
            make_instance(endpoint='http://api', version='1.x'))
        self.assertIn("'1.x' is not a version", str(error))

    def test_a_pinned_version(self):
        made = plugin.make_client(make_instance(endpoint='http://api',
                                                version='1.0'))
        self.assertEqual('1.0', made.adapter.default_microversion)

    def test_the_openstack_client_takes_any_microversion(self):
        # Else it warns that 1.0 is not among API_VERSIONS.
        self.assertTrue(plugin.check_api_version('1.0'))

    def test_the_default_negotiates(self):
        for version in ('1', 'latest', 'LATEST', None):
            made = plugin.make_client(make_instance(endpoint='http://api',
                                                    version=version))
            self.assertIsNone(made.adapter.default_microversion)


class TestOptions(base.TestCase):

    def parse(self, *argv):
        parser = plugin.build_option_parser(argparse.ArgumentParser())
        return parser.parse_args(list(argv))

    def test_defaults(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_BACKUP_SCHEDULER_API_VERSION'))
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_BACKUP_SCHEDULER_URL'))
        options = self.parse()
        self.assertEqual('1', options.os_backup_scheduler_api_version)
        self.assertIsNone(options.os_backup_scheduler_url)

    def test_environment(self):
        self.useFixture(fixtures.EnvironmentVariable(
            'OS_BACKUP_SCHEDULER_URL', 'http://127.0.0.1:8798'))
        self.assertEqual('http://127.0.0.1:8798',
                         self.parse().os_backup_scheduler_url)
        self.assertEqual('http://other', self.parse(
            '--os-backup-scheduler-url', 'http://other'
        ).os_backup_scheduler_url)

    def test_api_version_option_names_the_parsed_option(self):
        self.assertTrue(hasattr(self.parse(), plugin.API_VERSION_OPTION))
