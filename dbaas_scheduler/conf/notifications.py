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
"""Options of ``[notifications]``: which notifications are sent.

Where and whether they are sent at all is oslo.messaging's
``[oslo_messaging_notifications]`` (its ``driver``, ``topics``,
``transport_url`` and ``retry``).
"""

from oslo_config import cfg

notifications_group = cfg.OptGroup(
    'notifications', title='Notifications of policy changes and executions',
    help='What this service tells other services (Ceilometer, a billing '
         'or audit system) over oslo.messaging; see the notifications '
         'page of the admin guide for every event and its payload.')

notifications_opts = [
    cfg.StrOpt(
        'notification_format',
        default='both',
        choices=[
            ('both', 'Send the versioned notifications and the '
                     'unversioned execution ones.'),
            ('versioned', 'Send only the versioned notifications '
                          '(backup_policy.*, backup_execution.*).'),
            ('unversioned', 'Send only the unversioned execution '
                            'notifications of the first release '
                            '(dbaas_scheduler.execution.*).'),
        ],
        help='Which notifications to send when [oslo_messaging_'
             'notifications] driver is set: the versioned ones '
             '(backup_policy.<action>.end and backup_execution.<status>, '
             'whose payload names its schema and version), the '
             'unversioned execution notifications of the first release '
             '(dbaas_scheduler.execution.<status>, a bare payload), or '
             'both. Default: both, so that consumers of the unversioned '
             'notifications keep working; set versioned once none is '
             'left.'),
]


def register_opts(conf):
    conf.register_group(notifications_group)
    conf.register_opts(notifications_opts, group=notifications_group)


def list_opts():
    return {notifications_group: notifications_opts}
