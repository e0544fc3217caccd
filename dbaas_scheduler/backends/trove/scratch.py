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
"""Verifying a Trove backup in a scratch instance, deleted afterwards.

The scratch instance is a new Trove instance restored from the backup
(``restorePoint``), in the policy's project, named after the verification
(:func:`dbaas_scheduler.backends.base.scratch_name`): the name is the
service's mark, recorded on the verification before the instance is
asked for.  Only instances of exactly that name are ever deleted, so an
instance the service did not make for that verification is never
touched.

What passes: Trove restored the backup and the new instance became
ACTIVE, with its database HEALTHY when Trove reports an
``operating_status`` (its guest agent started the database on the
restored data).  The service has no credentials on the database inside a
Trove instance, so a policy's ``verify_check`` (SQL) cannot run there;
the policy API refuses one on a Trove policy, and a verification that
finds one anyway (a policy from before) fails saying so.
"""

import math
import time
import urllib.parse

from oslo_log import log as logging

from dbaas_scheduler.backends import base
from dbaas_scheduler.backends.trove import errors
from dbaas_scheduler.backends.trove import views

LOG = logging.getLogger(__name__)

# Seconds between two looks at a scratch instance.
POLL = 5.0
# Seconds a verification waits for its scratch instance to be gone after
# deleting it; longer, the scratch reconciler makes sure later.
DELETE_WAIT = 300.0
# Seconds ``delete_scratch`` waits for Trove to finish a delete it asked
# for (the scratch reconciler asks again at its next pass).
CONFIRM_WAIT = 10.0

CHECK_NOT_RUN = (
    'the backup restored into a new Trove instance, but the policy\'s '
    'verify_check cannot run on a Trove instance (the service has no '
    'credentials on the database inside it): remove verify_check from the '
    'policy')


def _quote(identifier):
    return urllib.parse.quote(str(identifier), safe='')


def volume_size(backup, source):
    """GB of the scratch volume: the smallest Trove accepts for the backup.

    The backup's size rounded up (at least 1); the source instance's
    volume size when Trove does not say how large the backup is.
    """
    if backup.size_bytes:
        return max(1, math.ceil(backup.size_bytes / views.GIB))
    size = (source.get('volume') or {}).get('size')
    return int(size) if size else None


class ScratchInstances:
    """Scratch instances of one trove backend: make, watch, delete."""

    def __init__(self, backend, sleep=time.sleep, clock=time.monotonic):
        self.backend = backend
        self.conf = backend.conf
        self.sleep = sleep
        self.clock = clock

    def _request(self, policy, method, path, action, **kwargs):
        return self.backend._client.request(policy, method, path, action,
                                            **kwargs)

    # Verify ----------------------------------------------------------

    def verify(self, policy, backup_id, check, scratch):
        """Restore into a scratch instance, wait for it, delete it.

        Returns None when it passed, else why not; raises a BackendError
        when the backup cannot be restored.
        """
        backup, datastore = self._backup(policy, backup_id)
        source = self.backend._source_instance(policy) or {}
        flavor = self.conf.verify.flavor or (source.get('flavor') or {}).get(
            'id')
        size = volume_size(backup, source)
        if not flavor or not size:
            raise base.PermanentBackendError(
                backend=errors.NAME,
                reason='the source instance %s is gone, so the flavor (or '
                       'volume size) of a scratch instance is unknown; the '
                       'operator sets [verify] flavor' % policy.instance_id)
        # A scratch instance left by a verifier that died is replaced.
        self.delete(policy, scratch)
        action = 'restore backup %s into scratch instance %s' % (
            backup_id, scratch)
        response = self._request(
            policy, 'POST', 'instances', action,
            json=views.restore_request(scratch, flavor, size, backup_id,
                                       datastore or source.get('datastore')))
        if response.status_code == 404:
            raise base.BackupNotFound(backend=errors.NAME,
                                      backup_id=backup_id)
        instance_id = errors.json_body(response, 'instance',
                                       action)['instance']['id']
        LOG.info('Verification %(scratch)s: Trove is restoring backup '
                 '%(backup)s of instance %(source)s into scratch instance '
                 '%(instance)s (flavor %(flavor)s, %(size)d GB)',
                 {'scratch': scratch, 'backup': backup_id,
                  'source': policy.instance_id, 'instance': instance_id,
                  'flavor': flavor, 'size': int(size)})
        try:
            self._wait_ready(policy, instance_id, scratch)
        finally:
            try:
                left = self.delete(policy, scratch, wait=DELETE_WAIT)
                if left:
                    LOG.warning('Verification %s: scratch instances %s are '
                                'still being deleted; the scratch '
                                'reconciler will see to them.', scratch,
                                ', '.join(left))
            except base.BackendError as e:
                LOG.warning('Verification %s: could not delete its scratch '
                            'instance yet: %s', scratch, e)
        if check:
            return CHECK_NOT_RUN
        return None

    def _backup(self, policy, backup_id):
        """The backup to restore, and the datastore it was made of."""
        action = 'show backup %s' % backup_id
        response = self._request(policy, 'GET', 'backups/%s'
                                 % _quote(backup_id), action)
        if response.status_code == 404:
            raise base.BackupNotFound(backend=errors.NAME,
                                      backup_id=backup_id)
        body = errors.json_body(response, 'backup', action)['backup']
        backup = views.backup_from_trove(body)
        if backup.status != base.BackupStatus.COMPLETED:
            raise base.PermanentBackendError(
                backend=errors.NAME,
                reason='backup %s is %s in Trove, not COMPLETED: it cannot '
                       'be restored%s' % (
                           backup_id, backup.status,
                           ' (%s)' % backup.fault if backup.fault else ''))
        datastore = body.get('datastore')
        return backup, datastore if isinstance(datastore, dict) else None

    def _show(self, policy, instance_id, scratch):
        action = 'show scratch instance %s (%s)' % (instance_id, scratch)
        response = self._request(policy, 'GET', 'instances/%s'
                                 % _quote(instance_id), action)
        if response.status_code == 404:
            raise base.PermanentBackendError(
                backend=errors.NAME,
                reason='scratch instance %s (%s) disappeared before it was '
                       'ready' % (instance_id, scratch))
        return errors.json_body(response, 'instance', action)['instance']

    def _wait_ready(self, policy, instance_id, scratch):
        """Wait until ACTIVE and HEALTHY; raise why it did not get there.

        Up to ``[worker] restore_timeout`` for Trove to build the instance
        and restore the backup (ACTIVE), then up to ``[verify]
        check_timeout`` for its database to report HEALTHY.
        """
        started = self.clock()
        active_at = None
        while True:
            try:
                instance = self._show(policy, instance_id, scratch)
            except base.TransientBackendError as e:
                # Trove hiccupped: look again (within the same timeouts)
                # rather than start the whole restore over.
                LOG.warning('Verification %s: %s; looking again.', scratch, e)
                if self.clock() - started > self.conf.worker.restore_timeout:
                    raise
                self.sleep(POLL)
                continue
            status = str(instance.get('status') or '').upper()
            operating = instance.get('operating_status')
            operating = str(operating).upper() if operating else None
            if status in errors.BROKEN_STATUSES:
                fault = instance.get('fault') or {}
                fault = (fault.get('message') if isinstance(fault, dict)
                         else fault)
                raise base.PermanentBackendError(
                    backend=errors.NAME,
                    reason='the backup did not restore: its scratch instance '
                           '%s is %s in Trove%s' % (
                               instance_id, status,
                               ': %s' % fault if fault else ' (Trove gives '
                               'no reason; its task manager\'s log tells '
                               'why)'))
            if status in errors.READY_STATUSES:
                if operating in (None, 'HEALTHY'):
                    return
                if operating in errors.UNHEALTHY_OPERATING_STATUSES:
                    raise base.PermanentBackendError(
                        backend=errors.NAME,
                        reason='the backup restored, but the database of '
                               'its scratch instance %s is %s, not HEALTHY'
                               % (instance_id, operating))
                if active_at is None:
                    active_at = self.clock()
                waited = self.clock() - active_at
                limit = self.conf.verify.check_timeout
                what = ('its database still %s, not HEALTHY' % operating)
                option = '[verify] check_timeout'
            else:
                waited = self.clock() - started
                limit = self.conf.worker.restore_timeout
                what = 'still %s, not ACTIVE' % (status or 'without status')
                option = '[worker] restore_timeout'
            if waited > limit:
                raise base.PermanentBackendError(
                    backend=errors.NAME,
                    reason='timed out: scratch instance %s is %s after %d '
                           'seconds (%s)' % (instance_id, what, waited,
                                             option))
            self.sleep(POLL)

    # Delete ----------------------------------------------------------

    def find(self, policy, scratch):
        """The ids of the project's instances named ``scratch``."""
        return [instance['id']
                for instance in self.backend.project_instances(policy)
                if instance.get('name') == scratch]

    def delete(self, policy, scratch, wait=0.0):
        """Delete every instance named ``scratch``; the ids still there.

        Waits up to ``wait`` seconds for Trove to finish deleting (it
        deletes in its task manager, after its 202).  An instance Trove
        will not delete yet (still being built, or being deleted) is
        among those returned.
        """
        asked, busy = [], []
        for instance_id in self.find(policy, scratch):
            action = 'delete scratch instance %s (%s)' % (instance_id,
                                                          scratch)
            try:
                response = self._request(policy, 'DELETE', 'instances/%s'
                                         % _quote(instance_id), action)
            except base.InstanceBusy as e:
                # Still being built: Trove deletes it once it is not.
                LOG.debug('Verification %s: %s', scratch, e)
                busy.append(instance_id)
                continue
            if response.status_code != 404:
                LOG.info('Verification %s: deleting scratch instance %s',
                         scratch, instance_id)
                asked.append(instance_id)
        deadline = self.clock() + wait
        while asked and wait:
            asked = [instance_id for instance_id in asked
                     if self._exists(policy, instance_id, scratch)]
            if not asked or self.clock() > deadline:
                break
            self.sleep(POLL)
        return asked + busy

    def _exists(self, policy, instance_id, scratch):
        action = 'show scratch instance %s (%s)' % (instance_id, scratch)
        response = self._request(policy, 'GET', 'instances/%s'
                                 % _quote(instance_id), action)
        return response.status_code != 404

    def delete_scratch(self, policy, scratch):
        """Delete the scratch instances; raise while some are still there.

        Transient: the verification, or the scratch reconciler's next
        pass, asks again until Trove lists none.
        """
        left = self.delete(policy, scratch, wait=CONFIRM_WAIT)
        if left:
            raise base.TransientBackendError(
                backend=errors.NAME,
                reason='scratch instances %s (%s) are still being deleted'
                       % (', '.join(left), scratch))
