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
"""GET /v1/backup-policies/{policy_id}/lifecycle: a look ahead.

One key of the answer per part of the preview, each built by its own
function: ``slots`` (1.1, :func:`slots_part`), ``rpo_coverage`` (1.2,
:func:`coverage_part`) and ``retention`` (1.3, :func:`retention_part`).
"""

import webob.dec

from dbaas_scheduler.api.handlers import backup_policy
from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import backup_policy as schema
from dbaas_scheduler.api import util
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import lifecycle
from dbaas_scheduler.policies import backup_policy as rules


def _coverage_body(coverage):
    """The RPO coverage of a lifecycle preview, times as ISO 8601 text."""
    body = {'rpo': coverage['rpo'], 'protection': coverage['protection'],
            'last_success_at': util.isotime(coverage['last_success_at']),
            'protected_until': util.isotime(coverage['protected_until'])}
    slots = []
    for slot in coverage['slots']:
        gap = slot['breach_if_fails']
        slots.append({
            'scheduled_at': util.isotime(slot['scheduled_at']),
            'expected_end': util.isotime(slot['expected_end']),
            'protected_until_if_succeeds': util.isotime(
                slot['protected_until_if_succeeds']),
            'breach_if_fails': None if gap is None else {
                'from': util.isotime(gap['from']),
                'to': util.isotime(gap['to'])}})
    body['slots'] = slots
    return body


def slots_part(req, found, count):
    """The ``slots`` key: the next slots with their windows and exclusions."""
    preview = backup_policy_obj.lifecycle(util.conf_of(req), found, count)
    return backup_policy.serialize_slots(preview['slots'])


def coverage_part(req, found, count):
    """The ``rpo_coverage`` key: the RPO its next slots would keep."""
    return _coverage_body(backup_policy_obj.rpo_coverage(
        util.conf_of(req), found, count))


def retention_part(req, found, count):
    """The ``retention`` key: one entry per coming successful run."""
    forecast = lifecycle.retention_preview(
        util.context_of(req), util.conf_of(req), found, count)
    return [{
        'at': util.isotime(run.at),
        'backup_id': run.backup_id,
        'expires': [{'backup_id': backup_id,
                     'delete_after': util.isotime(after)}
                    for backup_id, after in run.expires],
        'deletes': [{'backup_id': backup_id, 'with': with_id}
                    for backup_id, with_id in run.deletes],
        'remaining': run.remaining,
    } for run in forecast]


@microversion.since('1.1')
@webob.dec.wsgify
def show_lifecycle(req):
    """GET /v1/backup-policies/{policy_id}/lifecycle: a look ahead.

    For the next ``count`` slots or runs (10 unless asked): ``slots``
    (1.1), each with the end of its start and completion windows and the
    exclusion window it falls in, if any; ``rpo_coverage`` (1.2), the RPO
    coverage the slots give; and
    ``retention`` (1.3), supposing each run succeeds, which backups
    retention marks expiring and which it deletes, holds, the floor,
    chains and the grace applied.  200; 400 for an unknown or invalid
    query parameter; 401; 403 and 404 as for showing the policy; 503
    when the backend cannot list the instance's backups (1.3).
    """
    params = util.query_params(req, schema.LIFECYCLE_QUERY)
    found = backup_policy.load(req, rules.LIFECYCLE)
    count = params.get('count', 10)
    body = {'slots': slots_part(req, found, count)}
    if microversion.is_at_least(req, '1.2'):
        body['rpo_coverage'] = coverage_part(req, found, count)
    if microversion.is_at_least(req, '1.3'):
        body['retention'] = retention_part(req, found, count)
    return util.json_response(body)
