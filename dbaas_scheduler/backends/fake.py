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
"""The fake backend: backups that exist only in this process's memory.

For tests and benchmarks of the scheduler itself, like Ironic's fake
hardware interfaces: it answers at once and makes no backup of anything.
A policy's ``backup_params`` may set ``fake_build_seconds`` (how long a
backup stays BUILDING, default 0) and ``fake_final_status`` (COMPLETED or
FAILED).  Backups are lost when the process exits, so executions resumed
by another worker process find nothing: use the trove or local backend to
test crash recovery.
"""

import collections
import threading

from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base


class FakeBackend(base.BackupBackend):

    name = 'fake'

    # ``{project_id: {instance_id: name}}``: the instances the tests say
    # each project has (the coverage report lists them).
    instances = {}

    def __init__(self, conf):
        super().__init__(conf)
        self._lock = threading.Lock()
        self._backups = {}
        self._by_instance = collections.defaultdict(dict)
        self._restores = {}
        self.scratch = set()

    def _status(self, backup, params):
        build = float(params.get('fake_build_seconds', 0))
        elapsed = (timeutils.utcnow(True) - backup.created_at).total_seconds()
        if elapsed < build:
            return base.BackupStatus.BUILDING
        return params.get('fake_final_status', base.BackupStatus.COMPLETED)

    lists_instances = True

    def list_instances(self, actor):
        return dict(self.instances.get(actor.project_id, {}))

    def create_backup(self, policy, name, description):
        backup = base.Backup(
            id=uuidutils.generate_uuid(), instance_id=policy.instance_id,
            status=base.BackupStatus.NEW, created_at=timeutils.utcnow(True),
            name=name, description=description)
        with self._lock:
            self._backups[backup.id] = backup
            self._by_instance[backup.instance_id][backup.id] = backup
        return backup

    def get_backup(self, policy, backup_id):
        with self._lock:
            backup = self._backups.get(backup_id)
        if backup is None:
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        backup.status = self._status(backup, policy.backup_params or {})
        return backup

    def find_backup(self, policy, tag):
        for backup in self.list_backups(policy):
            if tag in (backup.description or ''):
                return backup
        return None

    def list_backups(self, policy):
        with self._lock:
            return list(self._by_instance[policy.instance_id].values())

    def delete_backup(self, policy, backup_id):
        with self._lock:
            backup = self._backups.pop(backup_id, None)
            if backup is not None:
                self._by_instance[backup.instance_id].pop(backup_id, None)

    # Restores: a target in memory, ready at once (or after the policy's
    # fake_build_seconds); a backup this process does not hold fails.

    def check_restore(self, policy, backup_id, params):
        pass

    def restore_backup(self, policy, backup_id, params, restore_id):
        with self._lock:
            known = backup_id in self._backups
        if not known:
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        target_id = 'fake-restore-%s' % restore_id
        with self._lock:
            self._restores[target_id] = timeutils.utcnow(True)
        return self.get_restore(policy, target_id)

    def find_restore(self, policy, restore_id, params):
        target_id = 'fake-restore-%s' % restore_id
        with self._lock:
            known = target_id in self._restores
        return self.get_restore(policy, target_id) if known else None

    def get_restore(self, policy, target_id):
        with self._lock:
            started = self._restores.get(target_id)
        if started is None:
            return base.RestoreProgress(target_id=target_id, failed=True,
                                        reason='the fake target is gone')
        build = float((policy.backup_params or {}).get(
            'fake_build_seconds', 0))
        elapsed = (timeutils.utcnow(True) - started).total_seconds()
        return base.RestoreProgress(target_id=target_id,
                                    done=elapsed >= build)

    def verify_backup(self, policy, backup_id, check, scratch):
        with self._lock:
            known = backup_id in self._backups
            if known:
                # Made, checked and deleted by the next call.
                self.scratch.add(scratch)
        if not known:
            raise base.BackupNotFound(backend=self.name, backup_id=backup_id)
        self.delete_scratch(policy, scratch)
        return None

    def delete_scratch(self, policy, scratch):
        with self._lock:
            self.scratch.discard(scratch)
