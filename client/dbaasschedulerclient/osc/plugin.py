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
"""OpenStackClient plugin: the ``openstack database backup ...`` commands.

Where the API is, first found wins:

1. ``--os-backup-scheduler-url`` (``OS_BACKUP_SCHEDULER_URL``);
2. ``backup_scheduler_endpoint_override`` of clouds.yaml
   (``OS_BACKUP_SCHEDULER_ENDPOINT_OVERRIDE``), as for every service;
3. with ``--os-auth-type none``, ``--os-endpoint`` -- how the all-in-one
   process (no Keystone, ``auth_strategy = noauth``) is reached::

       openstack --os-auth-type none --os-endpoint http://127.0.0.1:8798 \\
           database backup policy list

4. the ``backup-scheduler`` entry of the Keystone service catalog.

Which API microversion: ``--os-backup-scheduler-api-version 1.N``
(``OS_BACKUP_SCHEDULER_API_VERSION``) pins one; ``1`` or ``latest``, the
default, is the newest that both the server (its version document) and
this client speak.
"""

import logging

from keystoneauth1 import exceptions as ks_exceptions
from osc_lib import exceptions
from osc_lib import utils

from dbaasschedulerclient.v1 import client

LOG = logging.getLogger(__name__)

DEFAULT_API_VERSION = '1'
API_NAME = 'backup_scheduler'
API_VERSION_OPTION = 'os_backup_scheduler_api_version'
API_VERSIONS = {'1': 'dbaasschedulerclient.v1.client.Client'}

# The key the OpenStack SDK's config loader gives --os-backup-scheduler-url.
URL_KEY = 'backup_scheduler_url'


def endpoint_of(instance):
    """The URL of the API for this ClientManager (see the module doc)."""
    url = instance._cli_options.config.get(URL_KEY)
    if url:
        return url
    try:
        # osc-lib answers the endpoint override, then the catalog of a
        # token, then the endpoint of an endpoint-only plugin (none).
        endpoint = instance.get_endpoint_for_service_type(
            client.SERVICE_TYPE, region_name=instance.region_name,
            interface=instance.interface)
    except ks_exceptions.EndpointNotFound:
        endpoint = None
    if not endpoint:
        if instance._cli_options.config.get('auth_type') == 'none':
            raise exceptions.CommandError(
                'No URL of the backup scheduler API: with --os-auth-type '
                'none, give it with --os-endpoint, e.g. --os-endpoint '
                'http://127.0.0.1:8798.')
        raise exceptions.CommandError(
            'No %(type)s endpoint found in the service catalog (region '
            '%(region)s, interface %(interface)s). Give the API\'s URL with '
            '--os-backup-scheduler-url.' % {
                'type': client.SERVICE_TYPE,
                'region': instance.region_name or '<any>',
                'interface': instance.interface or 'public'})
    return endpoint


def _microversion(requested):
    """The microversion pinned, or None to negotiate (``1``, ``latest``)."""
    requested = (requested or DEFAULT_API_VERSION).strip()
    if requested.lower() in (DEFAULT_API_VERSION, 'latest'):
        return None
    try:
        return client.check_api_version(requested)
    except client.UnsupportedVersion as exc:
        raise exceptions.CommandError(str(exc))


def check_api_version(check_version):
    """The OpenStack client's hook: is ``check_version`` one we take?

    ``1``, ``latest`` and ``1.N`` all name the commands of API v1, not
    only the ``1`` of API_VERSIONS: answering True keeps the OpenStack
    client from warning about a microversion.  A version this client does
    not speak is refused by :func:`make_client`, with a message.
    """
    return True


def make_client(instance):
    """The backup scheduler client of an OpenStackClient ClientManager."""
    requested = instance._api_version[API_NAME]
    microversion = _microversion(requested)
    client_class = utils.get_client_class(
        API_NAME, DEFAULT_API_VERSION, API_VERSIONS)
    endpoint = endpoint_of(instance)
    LOG.debug('Backup scheduler API at %s, microversion %s', endpoint,
              microversion or 'negotiated')
    return client_class(instance.session, endpoint=endpoint,
                        region_name=instance.region_name,
                        interface=instance.interface,
                        api_version=microversion)


def build_option_parser(parser):
    """Add the plugin's global options to the ``openstack`` parser."""
    parser.add_argument(
        '--os-backup-scheduler-api-version',
        metavar='<backup-scheduler-api-version>',
        default=utils.env('OS_BACKUP_SCHEDULER_API_VERSION',
                          default=DEFAULT_API_VERSION),
        help='Backup scheduler API microversion, such as 1.0; default: '
             'the newest that both the server and this client speak '
             '(Env: OS_BACKUP_SCHEDULER_API_VERSION)')
    parser.add_argument(
        '--os-backup-scheduler-url',
        metavar='<url>',
        default=utils.env('OS_BACKUP_SCHEDULER_URL'),
        help='URL of the backup scheduler API, instead of the one in the '
             'service catalog, e.g. http://127.0.0.1:8798 '
             '(Env: OS_BACKUP_SCHEDULER_URL)')
    return parser
