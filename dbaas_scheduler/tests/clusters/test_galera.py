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
"""The Galera cluster of tools/clusters: three nodes, a kill, a rejoin.

The short version of the cluster runs (doc/source/contributor/
clusters.rst): the schema is migrated through node 1, a policy written on
node 1 is read on node 3, node 2 is killed while node 3 takes a write, and
node 2 rejoins with that write.
"""

import os
import time

import fixtures
import sqlalchemy as sa
import testtools
from testtools import content
from tools.clusters import galera

from dbaas_scheduler.db import migration
from dbaas_scheduler.db import models
from dbaas_scheduler.testing import ports
from dbaas_scheduler.tests import clusters
from dbaas_scheduler.tests.functional.engine import test_engine


class TestGaleraCluster(testtools.TestCase):

    def setUp(self):
        super().setUp()
        clusters.require_galera()
        directory = self.useFixture(fixtures.TempDir()).path
        # The nodes run as mysql when started by root: let it in.
        os.chmod(directory, 0o755)
        self.cluster = galera.Cluster(os.path.join(directory, 'galera'),
                                      base_port=ports.free_base_port(
                                          39, 26000, 28000))
        self.addCleanup(self.cluster.destroy)
        started = time.monotonic()
        self.cluster.start()
        self.addDetail('cluster start', content.text_content(
            '%.1f s' % (time.monotonic() - started)))

    def _engine(self, number):
        url = '%s/dbaas?charset=utf8mb4' % self.cluster.node(number).url
        # A node applies other nodes' writes a moment after they commit:
        # a read waits for them (causal reads), as oslo.db's
        # [database] mysql_wsrep_sync_wait does for the services.
        engine = sa.create_engine(url, connect_args={
            'init_command': 'SET SESSION wsrep_sync_wait = 1'})
        self.addCleanup(engine.dispose)
        return engine

    def test_schema_writes_kill_and_rejoin(self):
        self.cluster.node(1).query('CREATE DATABASE dbaas')
        migration.upgrade('head', engine=self._engine(1))
        policies = models.BackupPolicy.__table__
        first = test_engine.add_policies(self._engine(1), 1)
        with self._engine(3).connect() as connection:
            self.assertEqual(first, [row.id for row in connection.execute(
                sa.select(policies.c.id))])
        self.cluster.node(2).kill()
        second = test_engine.add_policies(self._engine(3), 1)
        self.cluster.rejoin(2)
        with self._engine(2).connect() as connection:
            self.assertEqual(sorted(first + second), sorted(
                row.id for row in connection.execute(
                    sa.select(policies.c.id))))
        self.assertEqual('3', self.cluster.node(2).status(
            'wsrep_cluster_size'))
