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
"""Handlers of /v1/backup-policies: list, create, show, change, act."""

import webob.dec

from dbaas_scheduler.api.handlers import execution
from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import backup_policy as schema
from dbaas_scheduler.api import util
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import restore as restore_obj
from dbaas_scheduler.policies import backup_policy as rules
from dbaas_scheduler import policy

_TIMES = ('start_at', 'end_at', 'next_execution_time', 'created_at',
          'updated_at', 'last_success_at', 'protected_until',
          'protection_changed_at', 'verify_next_at')


# The fields of a policy newer than 1.0: the version that added each.
SINCE = dict.fromkeys(
    ('rpo', 'effective_rpo', 'pause_after_failures', 'consecutive_failures',
     'last_success_at', 'protected_until', 'protection',
     'protection_changed_at'), '1.2')
SINCE['min_keep'] = '1.3'
SINCE.update(dict.fromkeys(('verify_every', 'verify_check'), '1.7'))
SINCE.update(dict.fromkeys(('verify_schedule', 'verify_next_at'), '1.8'))
SINCE.update(dict.fromkeys(
    ('start_window', 'completion_window', 'exclusions'), '1.1'))


def serialize(req, backup_policy):
    return serializer(req)(backup_policy)


def serializer(req):
    """A function serializing policies for ``req``: one, or a list's.

    What is the same for every policy of the answer -- the fields the
    request's microversion hides, the URL of the links -- is worked out
    once here rather than for each of a page's thousand policies.
    """
    hidden = microversion.hidden_fields(req, SINCE)
    prefix = '%s/v1/backup-policies/' % util.base_url(req)
    as_dict, isotime = backup_policy_obj.as_dict, util.isotime

    def serialize_one(backup_policy):
        body = as_dict(backup_policy)
        for field in _TIMES:
            body[field] = isotime(body[field])
        body['links'] = [{'rel': 'self', 'href': prefix + backup_policy.id}]
        if hidden:
            body = {name: value for name, value in body.items()
                    if name not in hidden}
        return body
    return serialize_one


def _values(body):
    """User fields of a request body, with times parsed."""
    return backup_policy_obj.parse_times(body)


def load(req, rule):
    """The policy named in the path, if the caller may ``rule`` it.

    Another project's policy answers 404, like one that does not exist:
    the API does not say what other projects have.
    """
    context = util.context_of(req)
    policy_id = util.path_arg(req, 'policy_id')
    found = backup_policy_obj.get_policy(context, policy_id)
    # 403 to whoever may see the policy (its project's readers, a system
    # reader), 404 to everyone else.
    policy.authorize_owned(context, rule, found,
                           exception.PolicyNotFound(policy_id=policy_id),
                           show_rule=rules.SHOW)
    return found


@webob.dec.wsgify
def list_policies(req):
    """GET /v1/backup-policies: a page of policies, oldest first.

    Those of the caller's project, or of every project with
    ``all_projects`` (an administrator's), filtered by the query.
    200; 400 for an unknown or invalid query parameter or marker; 401;
    403 when a rule refuses the list or ``all_projects``.
    """
    # The per-request work of serializing is done once for the page.
    one = serializer(req)
    return util.list_page(
        req, microversion.query_schema(req, schema.LIST_QUERY), rules,
        'backup_policies', backup_policy_obj.list_policies,
        lambda _req, item: one(item),
        filters=('name', 'instance_id', 'enabled', 'protection'))


@webob.dec.wsgify
def create_policy(req):
    """POST /v1/backup-policies: create a policy in the caller's project.

    201 with the policy and its URL in ``Location``; 400 for an invalid
    body, schedule or instance, or a backend that is not configured; 401;
    403 when a rule refuses it; 409 when another policy of the project
    has its name; 413 for a body over 1 MiB; 503 when Keystone cannot make
    the policy's trust.
    """
    context, conf = util.context_of(req), util.conf_of(req)
    body = util.extract_json(
        req, microversion.request_schema(req, schema.CREATE))['backup_policy']
    policy.authorize(context, rules.CREATE,
                     {'project_id': context.project_id})
    created = backup_policy_obj.create_policy(context, conf, _values(body))
    item = serialize(req, created)
    return util.json_response({'backup_policy': item}, status=201,
                              headers={'Location': item['links'][0]['href']})


@webob.dec.wsgify
def show_policy(req):
    """GET /v1/backup-policies/{policy_id}: one policy.

    200; 401; 403 when a rule refuses it in the caller's project; 404
    when there is no such policy, or it is another project's and the
    rule refuses it.
    """
    found = load(req, rules.SHOW)
    body = serialize(req, found)
    if microversion.is_at_least(req, '1.4'):
        # Measured, not promised: the last and p95 of its restores.
        body['restore_time'] = restore_obj.restore_times(
            util.context_of(req), found.id)
    return util.json_response({'backup_policy': body})


@webob.dec.wsgify
def update_policy(req):
    """PATCH /v1/backup-policies/{policy_id}: change what a user may.

    200 with the policy as changed; 400 for an invalid body, schedule or
    instance; 401; 403 and 404 as for showing it; 409 when another
    request changed or deleted it meanwhile; 413 for a body over 1 MiB.
    """
    context, conf = util.context_of(req), util.conf_of(req)
    body = util.extract_json(
        req, microversion.request_schema(req, schema.UPDATE))['backup_policy']
    found = load(req, rules.UPDATE)
    changed = backup_policy_obj.update_policy(context, conf, found,
                                              _values(body))
    return util.json_response({'backup_policy': serialize(req, changed)})


@webob.dec.wsgify
def delete_policy(req):
    """DELETE /v1/backup-policies/{policy_id}: delete it and its trust.

    Its executions stay, as history, and its backups stay unless
    ``delete_backups=true``: then they are deleted first, held backups
    (and what they are built on) excepted, each recorded on the execution
    that made it.  204; 400 for an unknown or invalid query parameter;
    401; 403 and 404 as for showing it; 409 when another request changed
    it meanwhile; 503 when the backend cannot list or delete the backups
    (the policy is not deleted then: repeat the request).
    """
    params = util.query_params(
        req, microversion.query_schema(req, schema.DELETE_QUERY))
    found = load(req, rules.DELETE)
    backup_policy_obj.delete_policy(
        util.context_of(req), util.conf_of(req), found,
        delete_backups=params.get('delete_backups', False))
    return util.json_response(None, status=204)


@webob.dec.wsgify
def pause_policy(req):
    """POST /v1/backup-policies/{policy_id}/pause: stop scheduling it.

    Running backups go on; pausing a paused policy changes nothing.
    200 with the policy; 400 for an invalid body; 401; 403 and 404 as for
    showing it; 409 when another request changed it meanwhile; 413 for a
    body over 1 MiB.
    """
    body = util.extract_json(req, schema.PAUSE) or {}
    found = load(req, rules.PAUSE)
    paused = backup_policy_obj.pause_policy(util.context_of(req),
                                            util.conf_of(req), found,
                                            body.get('reason'))
    return util.json_response({'backup_policy': serialize(req, paused)})


@webob.dec.wsgify
def resume_policy(req):
    """POST /v1/backup-policies/{policy_id}/resume: schedule it again.

    From now on, without the runs missed while paused.  200 with the
    policy; 400 for a body, or when the schedule has no run left; 401;
    403 and 404 as for showing it; 409 when another request changed it
    meanwhile; 413 for a body over 1 MiB.
    """
    util.extract_json(req, schema.EMPTY)
    found = load(req, rules.RESUME)
    resumed = backup_policy_obj.resume_policy(util.context_of(req),
                                              util.conf_of(req), found)
    return util.json_response({'backup_policy': serialize(req, resumed)})


@webob.dec.wsgify
def run_policy(req):
    """POST /v1/backup-policies/{policy_id}/run: take a backup now.

    A manual execution, cast to the workers with the application's RPC
    client.  202 with the execution; 400 for a body; 401; 403 and 404 as
    for showing it (403 also when manual runs are off); 409 when an
    execution of the policy is recorded for the same instant meanwhile;
    413 for a body over 1 MiB; 429 with ``Retry-After`` over the rate of
    manual runs; 503 when Keystone's limits cannot be read.
    """
    util.extract_json(req, schema.EMPTY)
    found = load(req, rules.RUN)
    started = backup_policy_obj.run_policy(
        util.context_of(req), util.conf_of(req), found,
        util.worker_api_of(req))
    return util.json_response(
        {'execution': execution.serialize(req, started)}, status=202)


@webob.dec.wsgify
def next_runs(req):
    """GET /v1/backup-policies/{policy_id}/next-runs: its next run times.

    A preview, in UTC, ``count`` of them (10 unless asked).  200; 400 for
    an unknown or invalid query parameter; 401; 403 and 404 as for
    showing it.
    """
    params = util.query_params(req, schema.NEXT_RUNS_QUERY)
    found = load(req, rules.NEXT_RUNS)
    times = backup_policy_obj.next_runs(util.conf_of(req), found,
                                        params.get('count', 10))
    return util.json_response(
        {'next_runs': [util.isotime(t) for t in times],
         'timezone': found.timezone})


def serialize_slots(slots):
    """Slots of a lifecycle preview, times as ISO 8601 text."""
    return [dict(slot, **{field: util.isotime(slot[field]) for field in (
        'scheduled_at', 'start_window_ends_at', 'completion_window_ends_at')})
        for slot in slots]
