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
"""Policy templates: a project's default policies, and enrolling instances.

A template holds the fields of a backup policy but its instance.  When
Trove announces a new instance of the project (the engines' trusted
notification path, :mod:`dbaas_scheduler.engine.notification_listener`),
or when a user applies a template to the project's existing instances,
each template of the instance's backend gives it one policy -- once: the
enrolment row is reserved first (:mod:`dbaas_scheduler.db.templates`),
with the id of the policy to create, so that a notification delivered
again, a second engine, or an engine restarted mid-way creates that one
policy or finds it made.

Credentials: a policy of a backend that acts with a Keystone trust is
created **paused**, without a trust, with the reason :data:`ADOPT_REASON`;
the member of the project who resumes it makes its trust then
(``backup_policy.resume_policy``).  A template does not keep its author's
trust: whoever could publish one forged ``trove.instance.create.end`` to
the broker would otherwise have the service act in the project with
that author's roles, on an instance the attacker names, for as long as
the template lives (doc/source/admin/policy-templates.rst).  A backend
that needs no trust (``local``), or a deployment without Keystone, gets
its policies enabled at once.
"""

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.backends import base as backends_base
from dbaas_scheduler.backends import loader
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import templates as db_templates
from dbaas_scheduler import exception
from dbaas_scheduler import keystone
from dbaas_scheduler.objects import access
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler.objects import coverage as coverage_obj
from dbaas_scheduler import schedule

LOG = logging.getLogger(__name__)

ADOPT_REASON = ('adopt: a member of the project must resume it so that its '
                'trust is created')

# The policy fields a template gives each policy it makes.
POLICY_FIELDS = (
    'backend', 'backup_params', 'schedule_type', 'schedule', 'timezone',
    'overlap_policy', 'catchup_window', 'keep_last', 'keep_daily',
    'keep_weekly', 'keep_monthly', 'max_age_days', 'min_keep', 'rpo',
    'pause_after_failures', 'start_window', 'completion_window',
    'exclusions', 'verify_every', 'verify_check', 'verify_schedule')

# What every interface shows of a template (and ``policy``'s fields).
VISIBLE_FIELDS = ('id', 'name', 'description', 'project_id', 'user_id',
                  'backend', 'created_at', 'updated_at')


def as_dict(template):
    body = {field: getattr(template, field) for field in VISIBLE_FIELDS}
    body.update({field: template.policy.get(field)
                 for field in POLICY_FIELDS if field != 'backend'})
    return body


def create_template(context, conf, values, now=None):
    """Validate and store a template of the caller's project; returns it.

    ``values``: ``name``, ``description`` and :data:`POLICY_FIELDS`
    (``schedule`` at least).  The fields are checked as a policy's are,
    the schedule with the template's id as the key of its ``H`` fields
    (each policy then resolves them with its own id).
    """
    now = now or timeutils.utcnow(True)
    values = dict(values)
    template_id = uuidutils.generate_uuid()
    name = values.pop('name')
    description = values.pop('description', None)
    policy = {field: value for field, value in values.items()
              if value is not None}
    backup_policy_obj.check_fields(policy)
    if policy.get('schedule') is None:
        raise exception.Invalid(reason='schedule is required.')
    policy = dict(backup_policy_obj.DEFAULTS, **policy)
    policy.setdefault('backend', access.default_backend(conf))
    backup_policy_obj.check_fields({'backend': policy['backend']})
    access.check_backend_allowed(conf, context, policy['backend'],
                                 context.project_id)
    backup_policy_obj.check_verify_check(conf, policy['backend'],
                                         policy.get('verify_check'))
    if policy['schedule_type'] != schedule.CRON:
        # An interval or a single time is anchored at a moment: a
        # template's policies are made at any time after it.
        raise exception.Invalid(
            reason='a template\'s schedule_type must be cron: an interval '
                   'or a single time would be anchored when each policy '
                   'is made.')
    backup_policy_obj.validate_schedule(conf, policy, template_id, now)
    # Each policy gets its own slots (verify_next_at) when it is made.
    backup_policy_obj.verify_values(conf, policy, template_id, now)
    return db_templates.create_template(context, {
        'id': template_id, 'name': name, 'description': description,
        'project_id': context.project_id, 'user_id': context.user_id,
        'backend': policy.pop('backend'), 'policy': policy,
        'created_at': now})


def get_template(context, template_id):
    """One template, of any project; raises TemplateNotFound."""
    return db_templates.get_template(context, template_id)


def list_templates(context, project_id=None, limit=None, marker=None):
    """Templates, oldest first (of one project unless None)."""
    return db_templates.list_templates(context, project_id=project_id,
                                       limit=limit, marker=marker)


def delete_template(context, template):
    """Delete a template; the policies it made stay, as their own."""
    db_templates.delete_template(context, template.id)
    LOG.info('Policy template %s of project %s deleted', template.id,
             template.project_id)


def needs_adoption(conf, backend):
    """Whether a template's policy waits paused for a member's trust."""
    return (conf.auth_strategy != 'noauth'
            and loader.needs_trust(conf, backend))


def _policy_values(context, conf, template, instance_id, policy_id):
    values = dict(template.policy, backend=template.backend,
                  instance_id=instance_id, id=policy_id,
                  project_id=template.project_id, user_id=template.user_id,
                  description='Made by policy template %s (%s) for a new '
                              'instance.' % (template.name, template.id))
    values['name'] = backup_policy_obj.default_name(
        context, template.project_id, instance_id, policy_id,
        prefix=template.name)
    if needs_adoption(conf, template.backend):
        values.update(enabled=False, paused_reason=ADOPT_REASON)
    return values


def _policy_exists(context, policy_id):
    try:
        db_api.get_policy(context, policy_id)
    except exception.PolicyNotFound:
        return False
    return True


def enrol_instance(context, conf, template, instance_id, now=None):
    """Give ``instance_id`` the template's policy, once; its id or None.

    None when the template had enrolled the instance already (its policy
    made then, and perhaps deleted since by the project: an instance is
    enrolled once).  Exceptions of the policy's creation (the project's
    quota, a backend no longer offered) leave the enrolment reserved and
    without its policy: trying again creates it.
    """
    now = now or timeutils.utcnow(True)
    reason = loader.get_backend(conf, template.backend).instance_id_error(
        instance_id)
    if reason:
        raise exception.InvalidInstanceId(backend=template.backend,
                                          reason=reason)
    enrolment = db_templates.reserve_enrolment(
        context, template, instance_id, uuidutils.generate_uuid(), now)
    if enrolment.policy_created_at is not None:
        return None
    policy_id = enrolment.policy_id
    if not _policy_exists(context, policy_id):
        if template.backend not in access.enabled_backends(conf):
            raise exception.BackendNotEnabled(
                backend=template.backend,
                enabled=', '.join(access.enabled_backends(conf)) or 'none')
        values = _policy_values(context, conf, template, instance_id,
                                policy_id)
        try:
            backup_policy_obj.create_policy(context, conf, values, now=now,
                                            enrolled=True)
        except (exception.PolicyNameExists, db_exc.DBDuplicateEntry):
            # Another engine enrolling the same instance made it first.
            if not _policy_exists(context, policy_id):
                raise
            policy_id = None
    db_templates.mark_policy_created(context, template.id, instance_id, now)
    if policy_id:
        LOG.info('Policy template %s enrolled instance %s of project %s: '
                 'policy %s', template.id, instance_id, template.project_id,
                 policy_id)
    return policy_id


def enrol_new_instance(context, conf, project_id, instance_id, backend):
    """Every template of the project and backend enrols the instance.

    Returns the ids of the policies made now.  A template that fails
    (quota, a backend withdrawn) is logged and does not stop the others.
    """
    made = []
    for template in db_templates.list_templates(
            context, project_id=project_id, backend=backend):
        try:
            policy_id = enrol_instance(context, conf, template, instance_id)
        except exception.DbaasSchedulerException as exc:
            LOG.warning('Policy template %s could not enrol instance %r of '
                        'project %s: %s', template.id, instance_id,
                        project_id, exc)
            continue
        if policy_id:
            made.append(policy_id)
    return made


def project_instances(context, conf, template):
    """The ids of the instances of the template's project, from its backend.

    Trove lists them with the credentials of the request (a member's
    token); ``local``, those ``[local_backend] instance_projects`` gives
    the project.  ServiceUnavailable when the backend cannot answer.
    """
    backend = loader.get_backend(conf, template.backend)
    # A request without a token (noauth) lists as the service itself,
    # which Trove's client allows in the service's own project only.
    actor = coverage_obj.Actor(
        template.project_id,
        user_auth=(keystone.user_auth(conf, context)
                   if conf.auth_strategy == 'keystone' and context.auth_token
                   else None))
    try:
        found = backend.list_instances(actor)
    except backends_base.BackendError as exc:
        raise exception.ServiceUnavailable(
            reason='the %s backend could not list the instances of project '
                   '%s: %s' % (template.backend, template.project_id, exc))
    if found is None:
        raise exception.Invalid(
            reason='the %s backend cannot list instances' % template.backend)
    return sorted(found)


def apply_template(context, conf, template, instance_ids=None,
                   dry_run=False):
    """Enrol existing instances: those given, or all the project's.

    Returns one dict per instance, in order: ``instance_id``,
    ``policy_id`` and ``action`` -- ``create`` (made now, or would be on a
    dry run), ``enrolled`` (the template had enrolled it already).
    """
    if instance_ids is None:
        instance_ids = project_instances(context, conf, template)
    else:
        known = set(project_instances(context, conf, template))
        unknown = [i for i in instance_ids if i not in known]
        if unknown:
            raise exception.Invalid(
                reason='not instances of project %s on the %s backend: %s'
                       % (template.project_id, template.backend,
                          ', '.join(unknown)))
    done = db_templates.enrolments(context, template.id, instance_ids)
    results = []
    for instance_id in instance_ids:
        enrolment = done.get(instance_id)
        if enrolment is not None and enrolment.policy_created_at:
            results.append({'instance_id': instance_id,
                            'policy_id': enrolment.policy_id,
                            'action': 'enrolled'})
            continue
        policy_id = None
        if not dry_run:
            policy_id = enrol_instance(context, conf, template, instance_id)
            if policy_id is None:
                policy_id = db_templates.enrolments(
                    context, template.id, [instance_id])[
                        instance_id].policy_id
        results.append({'instance_id': instance_id, 'policy_id': policy_id,
                        'action': 'create'})
    return results
