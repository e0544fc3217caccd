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
"""Options of ``[upgrade_levels]``: RPC versions pinned for an upgrade."""

from oslo_config import cfg

upgrade_levels_group = cfg.OptGroup(
    'upgrade_levels', title='RPC API versions pinned during an upgrade',
    help='The newest version of each RPC API this process sends. While '
         'processes of the old and the new release run side by side, pin '
         'the senders of the new release to what the old receivers '
         'understand; unset the pins once every process is upgraded. '
         'Each option takes a version such as 1.0, or the name of a '
         'release (see the upgrade guide for the versions of each '
         'release); a value the program does not know stops it at start.')

upgrade_levels_opts = [
    cfg.StrOpt(
        'engine',
        help='Newest version of the engines\' RPC API (topic [engine] '
             'topic) sent by this process: a version such as 1.0, or a '
             'release name. Default: unset (the newest version this code '
             'speaks). Set it on the callers of the RPC API (other '
             'services, such as Trove) while engines of an older release '
             'still run.'),
    cfg.StrOpt(
        'worker',
        help='Newest version of the workers\' RPC API (topic [worker] '
             'topic) sent by the engines and the API of this host: a '
             'version such as 1.0, or a release name. Default: unset (the '
             'newest version this code speaks). Set it on upgraded '
             'engines and APIs while workers of an older release still '
             'run; pinned to 1.0, a group of executions travels as one '
             'message per execution. Ignored with [DEFAULT] rpc_transport '
             '= none, where the worker is in the same process.'),
]


def register_opts(conf):
    conf.register_group(upgrade_levels_group)
    conf.register_opts(upgrade_levels_opts, group=upgrade_levels_group)


def list_opts():
    return {upgrade_levels_group: upgrade_levels_opts}
