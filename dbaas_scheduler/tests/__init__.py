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
"""Tests run with the oslo.service threading backend, as the programs do."""

import sys

# The same guard as dbaas_scheduler.cmd: eventlet stays out of the process.
sys.modules.setdefault('eventlet', None)

from oslo_service import backend  # noqa: E402

backend.init_backend(backend.BackendType.THREADING)
