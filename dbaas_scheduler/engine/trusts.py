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
"""Deleting the trusts Keystone did not confirm deleting at the time.

Deleting a policy (or undoing a creation) deletes its trust at once; when
Keystone cannot be asked then, the trust goes to the ``trust_deletion``
queue (:mod:`dbaas_scheduler.db.trusts`).  Every engine's ``trusts`` loop
claims the due ones and asks Keystone again, as the service user, with a
backoff per trust from :data:`RETRY_INITIAL` up to :data:`RETRY_MAX`
seconds: a trust outlives its policy by Keystone's outage plus at most
:data:`RETRY_MAX` seconds.
"""

import datetime

from oslo_log import log as logging
from oslo_utils import timeutils

from dbaas_scheduler.db import trusts as db_trusts
from dbaas_scheduler import keystone

LOG = logging.getLogger(__name__)

# Seconds between two passes of the loop.
INTERVAL = 30
# Backoff of one trust's attempts, in seconds.
RETRY_INITIAL = 30
RETRY_MAX = 600
# Trusts per pass; a claim lasts this long if its engine dies.
BATCH = 100
LEASE = 300


def retry_delay(attempts):
    """Seconds before the next attempt after ``attempts`` failed ones."""
    return min(RETRY_MAX, RETRY_INITIAL * 2 ** min(attempts, 16))


def delete_pending(conf, context, now=None):
    """One pass: ``(deleted, failed)`` counts."""
    now = now or timeutils.utcnow(True)
    deleted = failed = 0
    for trust_id, attempts, project_id in db_trusts.claim_due(
            context, now, BATCH, LEASE):
        # Only if Keystone says the service made it (for that project).
        reason = keystone.try_delete_trust(conf, context, trust_id,
                                           project_id=project_id)
        if reason is None:
            db_trusts.forget(context, trust_id)
            deleted += 1
            continue
        failed += 1
        delay = retry_delay(attempts + 1)
        db_trusts.failed(context, trust_id,
                         now + datetime.timedelta(seconds=delay), reason)
        LOG.warning('Trust %s still to delete (attempt %d), next attempt in '
                    '%d s: %s', trust_id, attempts + 1, delay, reason)
    if deleted:
        LOG.info('Deleted %d trusts left behind by deleted policies',
                 deleted)
    return deleted, failed
