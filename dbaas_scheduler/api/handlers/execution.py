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
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler import exception
from dbaas_scheduler.policies import execution as rules
from dbaas_scheduler import policy

FIELDS = (
    'id', 'policy_id', 'project_id', 'instance_id', 'scheduled_at',
    'trigger', 'status', 'status_reason', 'attempts', 'backup_id',
    'deleted_backups', 'created_at', 'dispatched_at', 'started_at',
    'finished_at', 'fault')
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
    body = {field: getattr(execution, field) for field in FIELDS}
    for field in _TIMES:
        body[field] = util.isotime(body[field])
    body['deleted_backups'] = [_deleted_backup(backup)
                               for backup in body['deleted_backups'] or []]
    body['links'] = [{'rel': 'self', 'href': '%s/v1/executions/%s' % (
        util.base_url(req), execution.id)}]
    return body


@webob.dec.wsgify
def list_executions(req):
    context, conf = util.context_of(req), util.conf_of(req)
    params = util.query_params(req, schema.LIST_QUERY)
    project_id = policy.authorize_list(context, rules.LIST,
                                       rules.LIST_ALL_PROJECTS,
                                       params.get('all_projects'))
    limit = util.page_limit(conf, params)
    found = db_api.list_executions(
        context, project_id=project_id, policy_id=params.get('policy_id'),
        instance_id=params.get('instance_id'), status=params.get('status'),
        since=params.get('since'), limit=limit, marker=params.get('marker'))
    items = [serialize(req, e) for e in found]
    return util.json_response({'executions': items,
                               'links': util.next_link(req, items, limit)})


@webob.dec.wsgify
def show_execution(req):
    context = util.context_of(req)
    execution_id = util.path_arg(req, 'execution_id')
    found = db_api.get_execution(context, execution_id)
    try:
        policy.authorize(context, rules.SHOW,
                         {'project_id': found.project_id})
    except exception.Forbidden:
        if found.project_id != context.project_id:
            raise exception.ExecutionNotFound(execution_id=execution_id)
        raise
    return util.json_response({'execution': serialize(req, found)})
