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
"""No credential in the option dump a program logs at start with debug.

oslo.service logs every option's value when ``debug = True``; an option
marked ``secret`` is logged as ``****``.
"""

import logging
import os
import re

import fixtures
from keystoneauth1 import loading as ks_loading
from keystonemiddleware import auth_token
from oslo_config import cfg
import oslo_messaging as messaging

from dbaas_scheduler.conf import opts
from dbaas_scheduler import config
from dbaas_scheduler.tests import base

# Names of options that hold a credential, or a URL that may carry one.
CREDENTIAL = re.compile(r'(password|secret|connection$|transport_url$|'
                        r'^instances$)')

SECRETS = {
    'local': 'L0cal-Backend-Passw0rd',
    'database': 'Datab4se-Passw0rd',
    'broker': 'Br0ker-Passw0rd',
    'notifications': 'N0tification-Passw0rd',
    'service': 'Serv1ce-Passw0rd',
    'authtoken': 'Auth7oken-Passw0rd',
}


class ListHandler(logging.Handler):

    def __init__(self):
        super().__init__()
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


class TestSecrets(base.TestCase):

    def test_every_credential_option_of_ours_is_secret(self):
        credentials = [(getattr(group, 'name', group), opt.name)
                       for group, options in opts.list_opts()
                       for opt in options if CREDENTIAL.search(opt.name)]
        self.assertIn(('local_backend', 'instances'), credentials)
        self.assertIn(('database', 'connection'), credentials)
        self.assertIn(('service_credentials', 'password'), credentials)
        public = [(getattr(group, 'name', group), opt.name)
                  for group, options in opts.list_opts()
                  for opt in options
                  if CREDENTIAL.search(opt.name) and not opt.secret]
        self.assertEqual([], public)

    def test_the_startup_option_dump_hides_every_password(self):
        tempdir = self.useFixture(fixtures.TempDir()).path
        path = os.path.join(tempdir, 'dbaas-scheduler.conf')
        with open(path, 'w') as stream:
            stream.write(
                '[DEFAULT]\n'
                'debug = True\n'
                'transport_url = rabbit://dbaas:%(broker)s@mq1:5672/\n'
                '[oslo_messaging_notifications]\n'
                'transport_url = rabbit://notify:%(notifications)s@mq1/\n'
                '[database]\n'
                'connection = mysql+pymysql://dbaas:%(database)s@db1/dbaas\n'
                '[local_backend]\n'
                'instances = orders:postgresql://backup:%(local)s@db2/o,'
                'wiki:mysql+pymysql://backup:%(local)s@db3/wiki\n'
                '[service_credentials]\n'
                'auth_type = password\n'
                'auth_url = http://keystone/v3\n'
                'username = dbaas\n'
                'password = %(service)s\n'
                '[keystone_authtoken]\n'
                'auth_type = password\n'
                'auth_url = http://keystone/v3\n'
                'username = dbaas\n'
                'password = %(authtoken)s\n' % SECRETS)
        conf = cfg.ConfigOpts()
        # An OptGroup object keeps the options registered in it: a group
        # of our own, so that the Keystone plugin's options loaded below
        # stay out of the module's group (and out of other tests).
        conf.register_group(cfg.OptGroup('service_credentials'))
        config.parse_args(conf, ['--config-file', path],
                          default_config_files=[])
        # What the programs register as they start: the transports, the
        # Keystone plugins of both groups, the auth_token middleware's.
        messaging.get_rpc_transport(conf).cleanup()
        messaging.get_notification_transport(conf).cleanup()
        for group, options in auth_token.list_opts():
            conf.register_opts(options, group=group)
        for group in ('service_credentials', 'keystone_authtoken'):
            ks_loading.register_auth_conf_options(conf, group)
            ks_loading.load_auth_from_conf_options(conf, group)
        self.assertTrue(conf.debug)

        handler = ListHandler()
        logger = logging.getLogger('dbaas_scheduler.tests.option_dump')
        logger.addHandler(handler)
        logger.setLevel(logging.DEBUG)
        self.addCleanup(logger.removeHandler, handler)
        conf.log_opt_values(logger, logging.DEBUG)

        # oslo.config pads the names: 'name      = value'.
        dump = re.sub(r' +=', ' =', '\n'.join(handler.lines))
        self.assertIn('local_backend.instances = ****', dump)
        self.assertIn('service_credentials.password = ****', dump)
        self.assertIn('keystone_authtoken.password = ****', dump)
        for secret in SECRETS.values():
            self.assertNotIn(secret, dump)
