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

from dbaas_scheduler.api.schemas import execution as schema
from dbaas_scheduler.api import util
from dbaas_scheduler import exception
from dbaas_scheduler.objects import execution as execution_obj
from dbaas_scheduler.policies import execution as rules
from dbaas_scheduler import policy

_TIMES = ('scheduled_at', 'created_at', 'dispatched_at', 'started_at',
          'finished_at')


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
    return body


@webob.dec.wsgify
def list_executions(req):
    """GET /v1/executions: a page of executions, newest slot first.

    Those of the caller's project, or of every project with
    ``all_projects`` (an administrator's), filtered by the query.
    200; 400 for an unknown or invalid query parameter or marker; 401;
    403 when a rule refuses the list or ``all_projects``.
    """
    context, conf = util.context_of(req), util.conf_of(req)
    params = util.query_params(req, schema.LIST_QUERY)
    project_id = policy.authorize_list(context, rules.LIST,
                                       rules.LIST_ALL_PROJECTS,
                                       params.get('all_projects'))
    limit = util.page_limit(conf, params)
    found = execution_obj.list_executions(
        context, project_id=project_id, policy_id=params.get('policy_id'),
        instance_id=params.get('instance_id'), status=params.get('status'),
        since=params.get('since'), limit=limit, marker=params.get('marker'))
    items = [serialize(req, e) for e in found]
    return util.json_response({'executions': items,
                               'links': util.next_link(req, items, limit)})


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
