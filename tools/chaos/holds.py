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
"""Holds arriving while retention deletes.

A thread of the tool holds backups of the retention policies at random,
the ``expiring`` ones first (those retention is about to delete), through
the service's own :func:`dbaas_scheduler.db.retention.hold_backup` -- the
transaction ``POST /v1/executions/{id}/hold`` runs.  The checker then
asserts that no backup whose hold succeeded was deleted.
"""

import random
import threading

from oslo_config import cfg
from oslo_utils import timeutils
import sqlalchemy as sa

from dbaas_scheduler import context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import models
from dbaas_scheduler.db import retention as db_retention
from dbaas_scheduler import exception

EXECUTIONS = models.BackupExecution.__table__


class Holder(threading.Thread):

    def __init__(self, db, policy_ids, every, seed=None):
        super().__init__(name='chaos-holds', daemon=True)
        self.db = db
        self.policy_ids = list(policy_ids)
        self.every = every
        self.random = random.Random(seed)
        self.stopping = threading.Event()
        self.held = []
        self.refused = 0
        self.errors = 0
        conf = cfg.ConfigOpts()
        conf.register_opts([cfg.StrOpt('connection')], group='database')
        conf([], default_config_files=[])
        conf.set_override('connection', db.url_string, group='database')
        db_api.configure(conf)

    def _candidates(self, state):
        query = sa.select(EXECUTIONS.c.id).where(
            EXECUTIONS.c.status == 'SUCCEEDED',
            EXECUTIONS.c.held_at.is_(None),
            EXECUTIONS.c.policy_id.in_(
                self.random.sample(self.policy_ids,
                                   min(50, len(self.policy_ids)))))
        query = query.where(EXECUTIONS.c.backup_state == state
                            if state else
                            EXECUTIONS.c.backup_state.is_(None))
        return [row.id for row in self.db.rows(query.limit(20))]

    def hold_one(self):
        # Mostly a backup retention is about to delete.
        state = 'expiring' if self.random.random() < 0.8 else None
        candidates = self._candidates(state) or self._candidates(None)
        if not candidates:
            return
        execution_id = self.random.choice(candidates)
        try:
            db_retention.hold_backup(context.get_admin_context(),
                                     execution_id, 'chaos',
                                     timeutils.utcnow(True))
        except exception.Conflict:
            self.refused += 1
            return
        self.held.append(execution_id)

    def run(self):
        while not self.stopping.wait(self.every):
            try:
                self.hold_one()
            except Exception:
                # The database restarts under the run: try again later.
                self.errors += 1

    def finish(self):
        self.stopping.set()
        self.join(30)
