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
"""Options of the ``[api]`` group: limits applied to user input."""

from oslo_config import cfg
from oslo_middleware import cors

api_group = cfg.OptGroup(
    'api', title='API options',
    help='Limits applied to what users may ask of the service, through the '
         'REST API and the RPC API alike.')

api_opts = [
    cfg.HostAddressOpt(
        'bind_host',
        default='127.0.0.1',
        help='Address the dbaas-scheduler-api and dbaas-scheduler-all '
             'processes listen on. Default: 127.0.0.1 (this host only); '
             'set 0.0.0.0 or a routable address to serve other hosts. '
             'Deployments behind uWSGI or mod_wsgi ignore it.'),
    cfg.PortOpt(
        'bind_port',
        default=8798,
        help='TCP port the REST API listens on (dbaas-scheduler-api and '
             'dbaas-scheduler-all). Default: 8798. The service catalog\'s '
             'backup-scheduler endpoint must name the same port.'),
    cfg.IntOpt(
        'server_threads',
        default=16,
        min=1,
        help='Threads of the built-in (cheroot) HTTP server, each serving '
             'one request at a time. Default: 16. Every request holds a '
             'database connection while it runs.'),
    cfg.StrOpt(
        'default_backend',
        help='Backend of a policy created without one. Default: unset, '
             'which means trove when auth_strategy is keystone (a cloud), '
             'and local when it is noauth (dbaas-scheduler-all on one '
             'machine, where no Keystone exists to reach Trove through). '
             'It must name an installed backend.'),
    cfg.ListOpt(
        'enabled_backends',
        help='Backends a backup policy may name, through the REST API and '
             'the RPC API alike; creating a policy with another one, or '
             'changing a policy to another one, is refused (400). '
             'Default: unset, which means trove when auth_strategy is '
             'keystone (a cloud: local and fake act with the operator\'s '
             'own databases and credentials, not the tenant\'s), and local '
             'when it is noauth (dbaas-scheduler-all on one machine). Who '
             'may use an enabled backend is a policy rule of its own, '
             'dbaas_scheduler:backup_policy:backend:<name> (local and fake '
             'are admin-only by default). Policies that already name a '
             'backend left out keep running; only new choices are '
             'refused.'),
    cfg.ListOpt(
        'trust_roles',
        default=['member'],
        help='Roles a user delegates to the service user, through a Keystone '
             'trust created with each policy, so that the worker can ask '
             'Trove for backups in the user\'s project. Default: member '
             '(what Trove\'s default policy requires to create and delete '
             'backups). The user must hold every role listed, or creating a '
             'policy fails.'),
    cfg.IntOpt(
        'max_limit',
        default=1000,
        min=1,
        help='Largest number of items one list request returns; larger '
             'limits are lowered to it. Default: 1000. Pages are cheap, '
             'the database work grows with the page.'),
    cfg.IntOpt(
        'min_schedule_interval',
        default=300,
        min=1,
        help='Shortest gap, in seconds, allowed between two runs of one '
             'backup policy; a schedule that can fire more often is refused '
             'with a clear error. Default: 300 (5 minutes). Cron schedules '
             'are measured in local wall-clock time, so on a daylight '
             'saving change a real gap may be shorter by the size of the '
             'change. Lowering it lets users ask for more backups, and each '
             'backup costs the database instance I/O and the cloud storage.'),
    cfg.IntOpt(
        'max_next_runs',
        default=100,
        min=1,
        max=10000,
        help='Largest number of future run times one next-runs preview may '
             'return. Default: 100. Each one costs a schedule step '
             '(a few microseconds for a daily schedule) on the API '
             'process.'),
    cfg.BoolOpt(
        'allow_unauthenticated_public_access',
        default=False,
        help='Let dbaas-scheduler-all and dbaas-scheduler-api serve the '
             'REST API without authentication (auth_strategy = noauth) on '
             'a bind_host that is not a loopback address. Default: false: '
             'they refuse to start, since with noauth anyone who reaches '
             'the port acts as any user of any project, by naming it in '
             'X-Project-Id and X-Roles. Set it only on a network where '
             'every client is trusted; dbaas-scheduler-status upgrade '
             'check still warns about it.'),
    cfg.URIOpt(
        'public_endpoint',
        schemes=['http', 'https'],
        help='The URL clients reach the API at, as in the service catalog '
             '(e.g. https://cloud.example/backup-scheduler, without /v1). '
             'Every link in an answer (self, next, the version document, '
             'the Location of a new policy, the OpenAPI servers) is built '
             'from it. Default: unset, which builds links from the URL of '
             'each request, that is from its Host header (or the '
             'X-Forwarded-* headers with [oslo_middleware] '
             'enable_proxy_headers_parsing): a client or a proxy cache '
             'could then be handed links to a host of an attacker\'s '
             'choosing. Set it on every cloud.'),
]


def register_opts(conf):
    conf.register_group(api_group)
    conf.register_opts(api_opts, group=api_group)
    # The pipeline reads [cors] allowed_origin to decide whether to add
    # the CORS middleware (oslo.middleware lists the options itself).
    conf.register_opts(cors.CORS_OPTS, group='cors')


def list_opts():
    return {api_group: api_opts}
