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
"""Benchmarks of real dbaas-scheduler services on real servers.

Each one runs from the top of the repository as python -m
tools.benchmarks.<name>; doc/source/contributor/benchmarks.rst
explains them and every figure they print.
"""

# Imported before anything else of a benchmark: selects oslo.service's
# threading backend (and keeps eventlet out) before oslo.messaging is
# imported, as every console script of the project does.
from dbaas_scheduler import cmd as _backend  # noqa: F401
