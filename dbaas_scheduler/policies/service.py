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
"""Policy rules of the cluster view: /v1/services and the metrics."""

from dbaas_scheduler.policies import base

LIST = 'dbaas_scheduler:service:list'
METRICS = 'dbaas_scheduler:metrics:get'

rules = [
    base.rule(LIST, base.SYSTEM_ADMIN, base.ADMIN,
              'List the engine, worker and API processes, with their '
              'hosts, heartbeats and state.',
              [('GET', '/v1/services')], base.SYSTEM_AND_PROJECT),
    base.rule(METRICS, base.SYSTEM_READER, base.ADMIN,
              'Scrape the Prometheus metrics of the cluster, when [metrics] '
              'require_authentication is set.',
              [('GET', '/metrics')], base.SYSTEM_AND_PROJECT),
]


def list_rules():
    return rules
