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
"""Options of ``[service_credentials]``: the service's own Keystone user."""

from keystoneauth1 import loading as ks_loading
from oslo_config import cfg

GROUP = 'service_credentials'

service_credentials_group = cfg.OptGroup(
    GROUP, title='Service credentials',
    help='The Keystone user dbaas-scheduler authenticates as when it calls '
         'other services (Trove). keystoneauth1 options: auth_type, '
         'auth_url, username, password, project_name, and the session '
         'options (cafile, insecure, timeout, ...).')


def register_opts(conf):
    conf.register_group(service_credentials_group)
    ks_loading.register_auth_conf_options(conf, GROUP)
    ks_loading.register_session_conf_options(conf, GROUP)


def list_opts():
    options = (ks_loading.get_session_conf_options()
               + ks_loading.get_auth_common_conf_options()
               + ks_loading.get_auth_plugin_conf_options('password'))
    # One entry per option name, in a stable order.
    unique = {option.dest: option for option in options}
    return {service_credentials_group: sorted(unique.values(),
                                              key=lambda o: o.name)}
