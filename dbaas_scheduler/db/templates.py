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
"""Database access of policy templates and the instances they enrolled.

An enrolment is reserved by inserting its row, whose primary key
``(template_id, instance_id)`` makes a second reservation of the same
instance by the same template impossible on every backend, whichever
engine, thread or restart tries it.
"""

from oslo_db import exception as db_exc
import sqlalchemy as sa

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models
from dbaas_scheduler import exception

Template = models.PolicyTemplate
Enrolment = models.TemplateEnrolment


@context_manager.writer
def create_template(context, values):
    """Insert a template; a name the project has raises TemplateNameExists."""
    template = Template(**values)
    context.session.add(template)
    try:
        context.session.flush()
    except db_exc.DBDuplicateEntry:
        raise exception.TemplateNameExists(name=values['name'])
    return template


@context_manager.reader
def get_template(context, template_id):
    """One template, of any project; raises TemplateNotFound."""
    template = context.session.get(Template, template_id)
    if template is None:
        raise exception.TemplateNotFound(template_id=template_id)
    return template


@context_manager.reader
def list_templates(context, project_id=None, backend=None, limit=None,
                   marker=None):
    """Templates (of one project, of one backend), oldest first."""
    query = sa.select(Template)
    if project_id is not None:
        query = query.where(Template.project_id == project_id)
    if backend is not None:
        query = query.where(Template.backend == backend)
    columns = (Template.created_at, Template.id)
    if marker is not None:
        query = query.where(db_api._after_marker(
            context.session, Template, marker, columns, False, project_id))
    query = query.order_by(*columns)
    if limit:
        query = query.limit(limit)
    return list(context.session.scalars(query))


@context_manager.writer
def delete_template(context, template_id):
    """Delete a template and its enrolment records; its policies stay."""
    template = context.session.get(Template, template_id)
    if template is None:
        raise exception.TemplateNotFound(template_id=template_id)
    context.session.execute(sa.delete(Enrolment).where(
        Enrolment.template_id == template_id))
    context.session.delete(template)
    return template


@context_manager.reader
def enrolments(context, template_id, instance_ids=None):
    """The template's enrolments, by instance id."""
    query = sa.select(Enrolment).where(Enrolment.template_id == template_id)
    if instance_ids is not None:
        query = query.where(Enrolment.instance_id.in_(list(instance_ids)))
    return {row.instance_id: row for row in context.session.scalars(query)}


def reserve_enrolment(context, template, instance_id, policy_id, now):
    """The enrolment of ``instance_id`` by ``template``, reserved once.

    Inserts it with ``policy_id`` unless it exists; returns the row as
    stored, whoever inserted it (its ``policy_id`` is the one to create).
    """
    try:
        _insert_enrolment(context, template, instance_id, policy_id, now)
    except db_exc.DBDuplicateEntry:
        pass
    return enrolments(context, template.id, [instance_id])[instance_id]


@context_manager.writer
def _insert_enrolment(context, template, instance_id, policy_id, now):
    context.session.add(Enrolment(
        template_id=template.id, instance_id=instance_id,
        project_id=template.project_id, policy_id=policy_id,
        created_at=now))
    context.session.flush()


@context_manager.writer
def mark_policy_created(context, template_id, instance_id, now):
    """Record that the enrolment's policy exists."""
    context.session.execute(
        sa.update(Enrolment).where(
            Enrolment.template_id == template_id,
            Enrolment.instance_id == instance_id,
            Enrolment.policy_created_at.is_(None))
        .values(policy_created_at=now))
