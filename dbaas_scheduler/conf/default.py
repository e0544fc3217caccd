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
"""Options of the ``[DEFAULT]`` group: where a process runs, keeps state."""

import os
import socket

from oslo_config import cfg


def default_state_path():
    """The state directory used when ``state_path`` is not configured.

    ``$XDG_STATE_HOME/dbaas-scheduler`` (``~/.local/state/dbaas-scheduler``
    when the variable is unset) is writable by whoever runs the service, so
    the embedded default works for a non-root user on a fresh machine.
    """
    base = os.environ.get('XDG_STATE_HOME') or os.path.join(
        os.path.expanduser('~'), '.local', 'state')
    return os.path.join(base, 'dbaas-scheduler')


default_opts = [
    cfg.StrOpt(
        'host',
        default=socket.gethostname(),
        sample_default='<current hostname>',
        help='Name of this host as recorded in the service table and shown '
             'by the cluster view. Default: the machine\'s hostname. It must '
             'be unique per host; changing it makes the processes on this '
             'host appear as new services (the old rows expire).'),
    cfg.StrOpt(
        'state_path',
        default=default_state_path(),
        sample_default='$XDG_STATE_HOME/dbaas-scheduler',
        help='Directory where dbaas-scheduler keeps local state: the SQLite '
             'database of the embedded default and the local backend\'s '
             'backup files ([local_backend] backup_dir). Default: '
             '$XDG_STATE_HOME/dbaas-scheduler (~/.local/state/'
             'dbaas-scheduler). It is created on first use; packaged '
             'deployments usually set /var/lib/dbaas-scheduler.'),
    cfg.StrOpt(
        'rpc_transport',
        default='oslo',
        choices=[
            ('oslo', 'Engines cast executions to workers over '
                     'oslo.messaging (RabbitMQ, see transport_url).'),
            ('none', 'Engine and worker run in one process '
                     '(dbaas-scheduler-all) and executions are handed '
                     'over in memory.'),
        ],
        help='How engines hand executions to workers. Default: oslo. '
             '"none" needs no message broker but only works when the '
             'engine and the worker share a process (dbaas-scheduler-all), '
             'so it cannot spread work over hosts; dbaas-scheduler-all uses '
             'it unless this option is set.'),
    cfg.StrOpt(
        'auth_strategy',
        default='keystone',
        choices=[('keystone', 'Validate Keystone tokens (keystonemiddleware '
                              'auth_token; see [keystone_authtoken]).'),
                 ('noauth', 'No authentication: requests act as the user '
                            'and project they name (X-User-Id, '
                            'X-Project-Id, X-Roles headers) or as the admin '
                            'of project "admin". Only for the all-in-one '
                            'process on one machine, and tests.')],
        help='How the REST API authenticates requests. Default: keystone; '
             'dbaas-scheduler-all uses noauth unless this option is set.'),
    cfg.IntOpt(
        'heartbeat_interval',
        default=10,
        min=1,
        help='Seconds between two heartbeats a process writes to its row '
             'in the service table. Default: 10. Each heartbeat is one '
             'small UPDATE; a longer interval must stay well below '
             'service_down_time.'),
    cfg.IntOpt(
        'service_down_time',
        default=60,
        min=2,
        help='Seconds without a heartbeat after which a process is shown '
             'as down in the cluster view. Default: 60. Keep it several '
             'times heartbeat_interval, or a busy database makes live '
             'processes look down.'),
    cfg.IntOpt(
        'service_expiry',
        default=86400,
        min=60,
        help='Seconds without a heartbeat after which the row of a dead '
             'process is deleted from the service table. Default: 86400 '
             '(one day), so that a crashed process stays visible as down '
             'long enough for an operator to notice.'),
    cfg.StrOpt(
        'cron_engine',
        default='native',
        choices=[
            ('native', 'The cron module\'s own search over the parsed '
                       'fields: the default, about ten times faster.'),
            ('croniter', 'croniter finds the next run; our grammar, H '
                         'and cronie\'s day rule stay in front of it.'),
        ],
        help='What finds the next run time of a cron schedule in the API '
             'and the engine. Both give the same run times (the same '
             'tests hold them to cronie\'s meaning and the daylight saving '
             'rule); croniter is there for those who prefer the library '
             'every OpenStack scheduler uses. Default: native.'),
]


def register_opts(conf):
    conf.register_opts(default_opts)


def list_opts():
    return {'DEFAULT': default_opts}
