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
"""The start-up checks of authentication: who the REST API will trust.

``dbaas-scheduler-all`` authenticates with Keystone when its configuration
was written for a cloud (``[keystone_authtoken]``) and ``auth_strategy``
is not set; an API without authentication refuses a public address unless
``[api] allow_unauthenticated_public_access`` says so.
"""

import ipaddress
import socket

from oslo_config import cfg
from oslo_log import log as logging

from dbaas_scheduler.cmd.common import StartupRefused

LOG = logging.getLogger(__name__)

AUTHTOKEN_GROUP = 'keystone_authtoken'


def auth_strategy_is_set(conf):
    """Whether ``auth_strategy`` was given (file, command line, override)."""
    location = conf.get_location('auth_strategy')
    return location is not None and location.location not in (
        cfg.Locations.opt_default, cfg.Locations.set_default)


def keystone_configured(conf):
    """Whether the configuration files have a ``[keystone_authtoken]``."""
    return AUTHTOKEN_GROUP in conf.list_all_sections()


def all_in_one_auth_strategy(conf):
    """What dbaas-scheduler-all authenticates with.

    ``auth_strategy`` when it is set; otherwise Keystone when the
    configuration is written for a cloud (it has ``[keystone_authtoken]``),
    and noauth for the embedded default on one machine.
    """
    if auth_strategy_is_set(conf):
        return conf.auth_strategy
    return 'keystone' if keystone_configured(conf) else 'noauth'


def is_loopback(host):
    """Whether ``host`` (an address or a name) reaches this machine only."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None)
    except OSError:
        return False
    addresses = {info[4][0].split('%')[0] for info in found}
    return bool(addresses) and all(
        ipaddress.ip_address(address).is_loopback for address in addresses)


def unauthenticated_public_access(conf, auth_strategy=None):
    """A sentence if the API serves without authentication off loopback."""
    if (auth_strategy or conf.auth_strategy) != 'noauth' \
            or is_loopback(conf.api.bind_host):
        return None
    return ('the REST API would serve without authentication '
            '(auth_strategy = noauth) on [api] bind_host %s, which is not a '
            'loopback address: anyone who reaches it could act as any user '
            'of any project' % conf.api.bind_host)


def check_authentication(conf):
    """Refuse noauth on a public address, unless explicitly allowed."""
    problem = unauthenticated_public_access(conf)
    if problem is None:
        return
    if not conf.api.allow_unauthenticated_public_access:
        raise StartupRefused(reason=(
            '%s. Configure Keystone (auth_strategy = keystone and '
            '[keystone_authtoken]), bind to 127.0.0.1, or set [api] '
            'allow_unauthenticated_public_access = true' % problem))
    LOG.warning('%s ([api] allow_unauthenticated_public_access is set).',
                problem[0].upper() + problem[1:])
