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
"""Test doubles shipped with the service, for tests, benchmarks and tools.

Like oslo.messaging's ``conffixture``: code outside ``dbaas_scheduler.tests``
(the benchmarks and the chaos tools under ``tools/``) uses them too, so
they live in the package and never import from the test suites.
"""
