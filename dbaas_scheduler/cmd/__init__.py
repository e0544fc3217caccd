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
"""Console scripts: one small ``main()`` per program.

Importing this package selects oslo.service's threading backend.  It must
happen before anything imports oslo.messaging or oslo.service's service
machinery, otherwise oslo.service falls back to eventlet (or raises
``BackendAlreadySelected``); every console script lives in this package so
that the selection always comes first.
"""

import sys

# oslo.service still depends on eventlet, so it is installed, and futurist
# (used by the threading backend) imports it whenever it can.  This service
# never uses eventlet: making the import fail keeps it out of the process
# (and its deprecation warning out of every command's output).
sys.modules.setdefault('eventlet', None)

from oslo_service import backend  # noqa: E402

backend.init_backend(backend.BackendType.THREADING)
