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
"""Database and broker clusters on loopback, for tests and chaos runs.

``python -m tools.clusters galera start|stop|status|kill|rejoin`` runs a
MariaDB Galera cluster of three ``mariadbd`` processes (galera-4), and
``python -m tools.clusters rabbitmq start|stop|status|kill|restart`` a
RabbitMQ cluster of three nodes, each all under one directory, on ports
of its own; nothing of the machine's own MariaDB or RabbitMQ is touched.
See doc/source/contributor/clusters.rst.
"""
