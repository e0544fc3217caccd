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
"""Handlers of restores: POST /v1/executions/{id}/restore, /v1/restores."""

import webob.dec

from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import restore as schema
from dbaas_scheduler.api import util
from dbaas_scheduler import exception
from dbaas_scheduler.objects import execution as execution_obj
from dbaas_scheduler.objects import restore as restore_obj
from dbaas_scheduler.policies import execution as execution_rules
from dbaas_scheduler.policies import restore as rules
from dbaas_scheduler import policy

# The microversion restores appeared in.
RESTORES = '1.4'

_TIMES = ('created_at', 'started_at', 'finished_at')


def serialize(req, restore):
    body = restore_obj.as_dict(restore)
    for field in _TIMES:
        body[field] = util.isotime(body[field])
    body['params'] = body['params'] or {}
    body['links'] = [{'rel': 'self', 'href': '%s/v1/restores/%s' % (
        util.base_url(req), restore.id)}]
    return microversion.response_fields(req, body, {'kind': '1.7'})


@microversion.since(RESTORES)
@webob.dec.wsgify
def create_restore(req):
    """POST /v1/executions/{execution_id}/restore: restore its backup.

    Authorized in the project of the execution (and its policy).  202
    with the restore, PENDING; 400 for an invalid body or a request the
    backend cannot do (a target the project may not use, the source
    without ``allow_source``); 401; 403 and 404 as for showing the
    execution; 409 when the execution has no backup or its policy was
    deleted; 413 for a body over 1 MiB; 503 when the backend cannot be
    asked about the source.
    """
    context = util.context_of(req)
    body = util.extract_json(req, schema.CREATE) or {}
    execution_id = util.path_arg(req, 'execution_id')
    found = execution_obj.get_execution(context, execution_id)
    policy.authorize_owned(
        context, rules.CREATE, found,
        exception.ExecutionNotFound(execution_id=execution_id),
        show_rule=execution_rules.SHOW)
    restore = restore_obj.create_restore(
        context, util.conf_of(req), found, util.worker_api_of(req), body)
    return util.json_response({'restore': serialize(req, restore)},
                              status=202)


@microversion.since(RESTORES)
@webob.dec.wsgify
def list_restores(req):
    """GET /v1/restores: a page of restores, newest first.

    200; 400 for an unknown or invalid query parameter or marker; 401;
    403 when a rule refuses the list or ``all_projects``.
    """
    return util.list_page(
        req, schema.LIST_QUERY, rules, 'restores', restore_obj.list_restores,
        serialize, filters=('execution_id', 'policy_id', 'status'))


@microversion.since(RESTORES)
@webob.dec.wsgify
def show_restore(req):
    """GET /v1/restores/{restore_id}: one restore.

    200; 401; 403 when a rule refuses it in the caller's project; 404
    when there is no such restore, or it is another project's.
    """
    context = util.context_of(req)
    restore_id = util.path_arg(req, 'restore_id')
    found = restore_obj.get_restore(context, restore_id)
    policy.authorize_owned(
        context, rules.SHOW, found,
        exception.RestoreNotFound(restore_id=restore_id))
    return util.json_response({'restore': serialize(req, found)})
