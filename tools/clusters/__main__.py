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
"""python -m tools.clusters galera start|stop|status|kill N|rejoin N|destroy"""

import argparse
import sys

from tools.clusters import galera


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog='python -m tools.clusters',
        description='A MariaDB Galera cluster on loopback (galera-4), '
                    'under one directory, on ports of its own.')
    parser.add_argument('kind', choices=['galera'])
    parser.add_argument('action', choices=['start', 'stop', 'status', 'kill',
                                           'rejoin', 'destroy'])
    parser.add_argument('node', nargs='?', type=int,
                        help='the node to kill or rejoin (1-based)')
    parser.add_argument('--dir', default='/tmp/dbaas-scheduler-galera',
                        help='where the nodes keep their files')
    parser.add_argument('--base-port', type=int, default=33300,
                        help='node n listens for SQL on base + n, group '
                             'communication on base + 10 + n, IST on base '
                             '+ 20 + n, SST on base + 30 + n')
    parser.add_argument('--size', type=int, default=3)
    args = parser.parse_args(argv)
    cluster = galera.Cluster(args.dir, args.base_port, args.size)
    try:
        if args.action == 'start':
            cluster.start()
        elif args.action == 'stop':
            cluster.stop()
        elif args.action == 'destroy':
            cluster.destroy()
            return 0
        elif args.action in ('kill', 'rejoin'):
            if not args.node:
                parser.error('%s needs a node number' % args.action)
            if args.action == 'kill':
                cluster.node(args.node).kill()
            else:
                cluster.rejoin(args.node)
    except galera.ClusterError as exc:
        print('error: %s' % exc, file=sys.stderr)
        return 1
    print(cluster.describe())
    return 0


if __name__ == '__main__':
    sys.exit(main())
