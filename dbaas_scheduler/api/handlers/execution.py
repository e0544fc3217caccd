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
"""Handlers of /v1/executions: the history of every run."""

import webob.dec

from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import execution as schema
from dbaas_scheduler.api import util
from dbaas_scheduler import exception
from dbaas_scheduler.objects import execution as execution_obj
from dbaas_scheduler.policies import execution as rules
from dbaas_scheduler import policy

_TIMES = ('scheduled_at', 'created_at', 'dispatched_at', 'started_at',
          'finished_at', 'held_at', 'backup_delete_after', 'start_deadline',
          'completion_deadline', 'verified_at')


def _deleted_backup(backup):
    """A deleted backup, its times written like every other."""
    shown = dict(backup)
    for field in ('created_at', 'deleted_at'):
        if shown.get(field):
            shown[field] = util.isotime_text(shown[field])
    return shown


def serialize(req, execution):
    body = execution_obj.as_dict(execution)
    for field in _TIMES:
        body[field] = util.isotime(body[field])
    body['deleted_backups'] = [_deleted_backup(backup)
                               for backup in body['deleted_backups'] or []]
    body['links'] = [{'rel': 'self', 'href': '%s/v1/executions/%s' % (
        util.base_url(req), execution.id)}]
    return microversion.response_fields(req, body, RESPONSE_SINCE)


# Response fields newer than 1.0, and the microversion they came with.
RESPONSE_SINCE = dict(
    dict.fromkeys(('start_deadline', 'completion_deadline',
                   'completion_window_exceeded'), '1.1'),
    **{field: '1.3' for field in (
        'held', 'held_at', 'held_by', 'backup_state',
        'backup_delete_after')},
    **{field: '1.7' for field in (
        'verified_at', 'verify_result', 'verify_reason',
        'verify_duration')})


@webob.dec.wsgify
def list_executions(req):
    """GET /v1/executions: a page of executions, newest slot first.

    Those of the caller's project, or of every project with
    ``all_projects`` (an administrator's), filtered by the query.
    200; 400 for an unknown or invalid query parameter or marker; 401;
    403 when a rule refuses the list or ``all_projects``.
    """
    return util.list_page(
        req, microversion.query_schema(req, schema.LIST_QUERY), rules,
        'executions', execution_obj.list_executions, serialize,
        filters=('policy_id', 'instance_id', 'status', 'since', 'held'))


@webob.dec.wsgify
def show_execution(req):
    """GET /v1/executions/{execution_id}: one execution.

    200; 401; 403 when a rule refuses it in the caller's project; 404
    when there is no such execution, or it is another project's and the
    rule refuses it.
    """
    context = util.context_of(req)
    execution_id = util.path_arg(req, 'execution_id')
    found = execution_obj.get_execution(context, execution_id)
    policy.authorize_owned(
        context, rules.SHOW, found,
        exception.ExecutionNotFound(execution_id=execution_id))
    return util.json_response({'execution': serialize(req, found)})


def _load(req, rule):
    context = util.context_of(req)
    execution_id = util.path_arg(req, 'execution_id')
    found = execution_obj.get_execution(context, execution_id)
    policy.authorize_owned(
        context, rule, found,
        exception.ExecutionNotFound(execution_id=execution_id),
        show_rule=rules.SHOW)
    return found


@microversion.since('1.3')
@webob.dec.wsgify
def hold_backup(req):
    """POST /v1/executions/{execution_id}/hold: keep its backup.

    Retention never deletes a held backup (nor what it is built on), and
    the hold outlives the policy.  Holding a held backup changes nothing.
    200 with the execution; 400 for a body; 401; 403 and 404 as for
    showing it; 409 when the execution has no backup, or the backup (or
    one of its instance it may be built on) is being deleted or is gone;
    413 for a body over 1 MiB.
    """
    util.extract_json(req, schema.EMPTY)
    found = _load(req, rules.HOLD)
    held = execution_obj.hold_backup(util.context_of(req),
                                     util.conf_of(req), found)
    return util.json_response({'execution': serialize(req, held)})


@microversion.since('1.3')
@webob.dec.wsgify
def release_backup(req):
    """POST /v1/executions/{execution_id}/release: end the hold.

    Retention decides about the backup again at its next pass (and gives
    it the grace before deleting it).  Releasing a backup that is not
    held changes nothing.  200 with the execution; 400 for a body; 401;
    403 and 404 as for showing it; 413 for a body over 1 MiB.
    """
    util.extract_json(req, schema.EMPTY)
    found = _load(req, rules.RELEASE)
    released = execution_obj.release_backup(util.context_of(req),
                                            util.conf_of(req), found)
    return util.json_response({'execution': serialize(req, released)})
