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
"""Handlers of /v1/policy-templates: list, create, show, delete, apply."""

import webob.dec

from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import template as schema
from dbaas_scheduler.api import util
from dbaas_scheduler import exception
from dbaas_scheduler.objects import template as template_obj
from dbaas_scheduler.policies import template as rules
from dbaas_scheduler import policy

# The microversion policy templates appeared in.
TEMPLATES = '1.6'

_TIMES = ('created_at', 'updated_at')

# The fields of a template newer than 1.6: the version that added each.
SINCE = dict.fromkeys(('verify_every', 'verify_check', 'verify_schedule'),
                      '1.8')


def serialize(req, template):
    body = template_obj.as_dict(template)
    for field in _TIMES:
        body[field] = util.isotime(body[field])
    body['links'] = [{'rel': 'self', 'href': '%s/v1/policy-templates/%s' % (
        util.base_url(req), template.id)}]
    return microversion.response_fields(req, body, SINCE)


def load(req, rule):
    """The template named in the path, if the caller may ``rule`` it.

    Another project's template answers 404, like one that does not exist.
    """
    context = util.context_of(req)
    template_id = util.path_arg(req, 'template_id')
    found = template_obj.get_template(context, template_id)
    policy.authorize_owned(
        context, rule, found,
        exception.TemplateNotFound(template_id=template_id),
        show_rule=rules.SHOW)
    return found


@microversion.since(TEMPLATES)
@webob.dec.wsgify
def list_templates(req):
    """GET /v1/policy-templates: a page of templates, oldest first.

    200; 400 for an unknown or invalid query parameter or marker; 401;
    403 when a rule refuses the list or ``all_projects``.
    """
    return util.list_page(
        req, schema.LIST_QUERY, rules, 'policy_templates',
        template_obj.list_templates, serialize)


@microversion.since(TEMPLATES)
@webob.dec.wsgify
def create_template(req):
    """POST /v1/policy-templates: a default policy of the caller's project.

    201 with the template and its URL in ``Location``; 400 for an invalid
    body or schedule, or a backend that is not offered; 401; 403 when a
    rule refuses it or the backend; 409 when another template of the
    project has its name; 413 for a body over 1 MiB.
    """
    context, conf = util.context_of(req), util.conf_of(req)
    body = util.extract_json(
        req, microversion.request_schema(req, schema.CREATE)
    )['policy_template']
    policy.authorize(context, rules.CREATE,
                     {'project_id': context.project_id})
    created = template_obj.create_template(context, conf, body)
    item = serialize(req, created)
    return util.json_response({'policy_template': item}, status=201,
                              headers={'Location': item['links'][0]['href']})


@microversion.since(TEMPLATES)
@webob.dec.wsgify
def show_template(req):
    """GET /v1/policy-templates/{template_id}: one template.

    200; 401; 403 when a rule refuses it in the caller's project; 404
    when there is no such template, or it is another project's.
    """
    return util.json_response(
        {'policy_template': serialize(req, load(req, rules.SHOW))})


@microversion.since(TEMPLATES)
@webob.dec.wsgify
def delete_template(req):
    """DELETE /v1/policy-templates/{template_id}: the policies it made stay.

    204; 401; 403 and 404 as for showing it.
    """
    found = load(req, rules.DELETE)
    template_obj.delete_template(util.context_of(req), found)
    return util.json_response(None, status=204)


@microversion.since(TEMPLATES)
@webob.dec.wsgify
def apply_template(req):
    """POST /v1/policy-templates/{template_id}/apply: enrol instances.

    ``all_instances`` (the project's instances, listed by the backend with
    the caller's credentials) or ``instance_ids``; with ``dry_run``,
    nothing is created: the answer says what would be.  200 with one
    entry per instance; 400 for an invalid body, instances that are not
    the project's, or a backend that cannot list instances; 401; 403 and
    404 as for showing it; 413 for a body over 1 MiB; 503 when the
    backend cannot list the instances.
    """
    context, conf = util.context_of(req), util.conf_of(req)
    body = util.extract_json(req, schema.APPLY)
    found = load(req, rules.APPLY)
    if bool(body.get('all_instances')) == ('instance_ids' in body):
        raise exception.Invalid(
            reason='give either all_instances: true or instance_ids.')
    dry_run = body.get('dry_run', False)
    results = template_obj.apply_template(
        context, conf, found, instance_ids=body.get('instance_ids'),
        dry_run=dry_run)
    return util.json_response({'dry_run': dry_run, 'enrolments': results})
