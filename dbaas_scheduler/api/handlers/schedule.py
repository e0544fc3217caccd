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
"""Handler of /v1/schedule-preview: run times of a schedule, before a policy.

The same validation as creating a policy, so that a user (or a UI) can
try a schedule and see both its errors and its next run times.
"""

import webob.dec

from dbaas_scheduler.api.handlers import backup_policy
from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import backup_policy as schema
from dbaas_scheduler.api import util
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.policies import schedule as rules
from dbaas_scheduler import policy

DEFAULT_COUNT = 10


@webob.dec.wsgify
def preview_schedule(req):
    """GET /v1/schedule-preview: the next run times of a schedule.

    Validated as creating a policy validates it; ``example`` is true when
    ``H`` fields make the times depend on the policy's future ID.
    ``slots`` are the same times with the draft's windows and exclusions
    (``start_window``, ``completion_window``, ``exclusions`` separated by
    ``;``), as ``/v1/backup-policies/{id}/lifecycle`` shows them.  200;
    400 for a missing or invalid schedule or query parameter; 401; 403
    when a rule refuses it.
    """
    context, conf = util.context_of(req), util.conf_of(req)
    params = util.query_params(
        req, microversion.query_schema(req, schema.PREVIEW_QUERY))
    policy.authorize(context, rules.PREVIEW,
                     {'project_id': context.project_id})
    if not params.get('schedule'):
        raise exception.Invalid(
            reason='query parameter schedule is required: the cron '
                   'expression, interval or time to preview.')
    count = params.pop('count', DEFAULT_COUNT)
    if 'exclusions' in params:
        params['exclusions'] = [
            text for text in params['exclusions'].split(';')
            if text.strip()]
    times, example, slots = backup_policy_obj.preview_lifecycle(
        conf, params, count)
    body = {'next_runs': [util.isotime(t) for t in times],
            'timezone': params.get('timezone', 'UTC'),
            'example': example}
    if microversion.is_at_least(req, '1.1'):
        body['slots'] = backup_policy.serialize_slots(slots)
    return util.json_response(body)
