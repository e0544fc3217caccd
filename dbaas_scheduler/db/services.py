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
"""Database access for service rows: one per running process."""

import sqlalchemy as sa

from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models

_SERVICE = models.Service.__table__


@context_manager.writer
def register_service(context, values):
    context.session.execute(sa.insert(_SERVICE), [values])


@context_manager.writer
def update_service_heartbeat(context, service_id, now, stats=None):
    """Stamp a heartbeat; False if the row is gone (expired meanwhile).

    ``stats`` (JSON text), when given, replaces the process's metrics.
    """
    values = {'heartbeat_at': now}
    if stats is not None:
        values['stats'] = stats
    statement = (sa.update(_SERVICE).where(_SERVICE.c.id == service_id)
                 .values(**values))
    return context.session.execute(statement).rowcount == 1


@context_manager.writer
def delete_service(context, service_id):
    context.session.execute(
        sa.delete(_SERVICE).where(_SERVICE.c.id == service_id))


@context_manager.writer
def delete_expired_services(context, heartbeat_before):
    """Delete the rows of processes silent since ``heartbeat_before``."""
    statement = sa.delete(_SERVICE).where(
        _SERVICE.c.heartbeat_at < heartbeat_before)
    return context.session.execute(statement).rowcount


@context_manager.reader
def list_services(context):
    query = sa.select(models.Service).order_by(
        models.Service.binary, models.Service.host,
        models.Service.started_at)
    return list(context.session.scalars(query))


@context_manager.reader
def list_host_services(context, host):
    """The rows of every process registered on ``host``."""
    query = sa.select(models.Service).where(models.Service.host == host)
    return list(context.session.scalars(query))


@context_manager.writer
def delete_service_of(context, service_id, process_identity):
    """Delete the row of a process found gone; False if it changed.

    Conditional on the identity it was judged by: a row written meanwhile
    by a live process (which cannot happen for a gone one, but costs
    nothing to check) stays.
    """
    statement = sa.delete(_SERVICE).where(
        _SERVICE.c.id == service_id,
        _SERVICE.c.process_identity == process_identity)
    return context.session.execute(statement).rowcount == 1
