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
"""Serve ``dbaas_scheduler.wsgi.api:application`` on a path, with cheroot.

What devstack's Apache does for the uWSGI application (a path of the
host, given to the application as ``SCRIPT_NAME``), without Apache::

    python -m dbaas_scheduler.tests.functional.wsgi_server \\
        127.0.0.1 8798 /backup-scheduler

The configuration comes from OS_DBAAS_SCHEDULER_CONFIG_FILES, as under a
WSGI server. Requests outside the path get 404. SIGTERM stops it.
"""

import importlib
import signal
import sys

from cheroot import wsgi as cheroot_wsgi


def main(argv):
    host, port, path = argv[0], int(argv[1]), argv[2]
    # Loads the configuration, as a WSGI server loading the module does.
    api = importlib.import_module('dbaas_scheduler.wsgi.api')
    server = cheroot_wsgi.Server(
        (host, port), cheroot_wsgi.PathInfoDispatcher({path: api.application}),
        numthreads=8, server_name='dbaas-scheduler-api-wsgi')
    signal.signal(signal.SIGTERM, lambda *_: server.stop())
    print('serving http://%s:%d%s' % (host, port, path), flush=True)
    server.safe_start()
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
