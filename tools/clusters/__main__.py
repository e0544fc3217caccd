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
"""python -m tools.clusters galera|rabbitmq start|stop|status|kill N|...

``galera ... rejoin N`` and ``rabbitmq ... restart N`` start a killed
node again and wait until it is back in the cluster.
"""

import argparse
import sys

from tools.clusters import galera
from tools.clusters import rabbitmq

KINDS = {
    # kind: (module, default directory, default base port, what the
    # action that brings a node back is called)
    'galera': (galera, '/tmp/dbaas-scheduler-galera', 33300, 'rejoin'),
    'rabbitmq': (rabbitmq, '/tmp/dbaas-scheduler-rabbitmq', 35670,
                 'restart'),
}


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python -m tools.clusters',
        description='A MariaDB Galera cluster (galera-4) or a RabbitMQ '
                    'cluster on loopback, under one directory, on ports of '
                    'its own.')
    parser.add_argument('kind', choices=sorted(KINDS))
    parser.add_argument('action', choices=['start', 'stop', 'status', 'kill',
                                           'rejoin', 'restart', 'destroy'])
    parser.add_argument('node', nargs='?', type=int,
                        help='the node to kill, rejoin (galera) or restart '
                             '(rabbitmq), 1-based')
    parser.add_argument('--dir',
                        help='where the nodes keep their files (default: '
                             '/tmp/dbaas-scheduler-<kind>)')
    parser.add_argument('--base-port', type=int,
                        help='galera (default 33300): node n listens for '
                             'SQL on base + n, group communication on base '
                             '+ 10 + n, IST on base + 20 + n, SST on base + '
                             '30 + n; rabbitmq (default 35670): AMQP on '
                             'base + n, Erlang distribution on base + 10 + '
                             'n, rabbitmqctl on base + 20 to base + 29')
    parser.add_argument('--size', type=int, default=3)
    args = parser.parse_args(argv)
    module, directory, base_port, back = KINDS[args.kind]
    if args.action in ('rejoin', 'restart') and args.action != back:
        parser.error('%s nodes come back with %s' % (args.kind, back))
    cluster = module.Cluster(args.dir or directory,
                             args.base_port or base_port, args.size)
    try:
        if args.action == 'start':
            cluster.start()
        elif args.action == 'stop':
            cluster.stop()
        elif args.action == 'destroy':
            cluster.destroy()
            return 0
        elif args.action in ('kill', back):
            if not args.node:
                parser.error('%s needs a node number' % args.action)
            if args.action == 'kill':
                cluster.node(args.node).kill()
            else:
                getattr(cluster, back)(args.node)
    except module.ClusterError as exc:
        print('error: %s' % exc, file=sys.stderr)
        return 1
    print(cluster.describe())
    return 0


if __name__ == '__main__':
    sys.exit(main())
