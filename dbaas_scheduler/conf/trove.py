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
"""Options of the ``[trove]`` group: how workers reach the Trove API."""

from oslo_config import cfg

trove_group = cfg.OptGroup(
    'trove', title='Trove backend options',
    help='The trove backend takes backups through the Trove (OpenStack '
         'DBaaS) v1.0 REST API.')

trove_opts = [
    cfg.StrOpt(
        'endpoint_override',
        help='Trove API URL to use instead of the one in the service '
             'catalog, with %(project_id)s where the project of the policy '
             'goes, e.g. http://trove.example.com:8779/v1.0/%(project_id)s. '
             'Default: unset (the catalog\'s "database" endpoint). Set it '
             'when the catalog is wrong or to reach Trove on another '
             'network.'),
    cfg.StrOpt(
        'region_name',
        help='Region whose Trove endpoint is taken from the catalog. '
             'Default: unset (the only one, or the first one).'),
    cfg.StrOpt(
        'interface',
        default='internal',
        choices=['public', 'internal', 'admin'],
        help='Catalog interface of the Trove endpoint. Default: internal, '
             'the one for service-to-service traffic.'),
    cfg.IntOpt(
        'rate_limit_max_wait',
        default=120,
        min=0,
        help='Seconds one request to Trove may wait out Trove\'s rate '
             'limiting (413 overLimit "This request was rate-limited" with '
             'Retry-After) before it counts as a transient failure, retried '
             'like a connection error. Default: 120. Trove limits requests '
             'per project (200 GETs and 200 POSTs a minute by default); a '
             'real quota (413 "Quota exceeded") fails at once. Keep it well '
             'below [worker] lease_duration.'),
    cfg.StrOpt(
        'service_type',
        default='database',
        help='Catalog service type of Trove. Default: database, the type '
             'Trove registers; change it only if your catalog differs.'),
]


def register_opts(conf):
    conf.register_group(trove_group)
    conf.register_opts(trove_opts, group=trove_group)


def list_opts():
    return {trove_group: trove_opts}
