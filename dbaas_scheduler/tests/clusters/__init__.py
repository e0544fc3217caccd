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
"""Tests on clusters started on loopback by tools/clusters."""

import unittest

from tools.clusters import galera
from tools.clusters import rabbitmq

from dbaas_scheduler.tests.functional.fixtures import db_fixtures


def require_galera():
    """Skip without galera-4, or fail when the backends are required."""
    try:
        galera._provider()
    except galera.ClusterError as exc:
        if db_fixtures.backends_required():
            raise
        raise unittest.SkipTest(str(exc))


def require_rabbitmq():
    """Skip without RabbitMQ, or fail when the backends are required."""
    try:
        rabbitmq._program('rabbitmq-server')
    except rabbitmq.ClusterError as exc:
        if db_fixtures.backends_required():
            raise
        raise unittest.SkipTest(str(exc))
