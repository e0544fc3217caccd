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
"""The coverage report's reads and its stored counts (set-based).

One aggregate query gives every instance the policies of a project (or of
all projects) name, with what the coverage rules need
(:class:`dbaas_scheduler.coverage.Instance`); the cost is one pass over
the policies, grouped by instance, whatever their number -- never a
query per instance.
"""

import sqlalchemy as sa
from sqlalchemy.ext import compiler

from dbaas_scheduler import coverage
from dbaas_scheduler.db.api import context_manager
from dbaas_scheduler.db import models

_POLICY = models.BackupPolicy.__table__
_COUNT = models.CoverageCount.__table__

# Projects whose counts one statement replaces.
_CHUNK = 500

_RULES = ('keep_last', 'keep_daily', 'keep_weekly', 'keep_monthly',
          'max_age_days')


class _Greatest(sa.sql.expression.FunctionElement):
    """The largest of its arguments: ``max(a, b, ...)`` on SQLite."""

    name = 'greatest'
    type = sa.Float()
    inherit_cache = True


@compiler.compiles(_Greatest)
def _greatest(element, sql_compiler, **kw):
    return 'greatest(%s)' % sql_compiler.process(element.clauses, **kw)


@compiler.compiles(_Greatest, 'sqlite')
def _greatest_sqlite(element, sql_compiler, **kw):
    return 'max(%s)' % sql_compiler.process(element.clauses, **kw)


class _TimeText(sa.sql.expression.FunctionElement):
    """A stored UTC time as fixed-width text, ``YYYY-MM-DDTHH:MM:SS.ffffff``.

    Always the six digits of the microseconds, so that two such texts
    compare as the times do; NULL stays NULL.  The database formats it:
    the client reads a string instead of building an aware datetime.
    """

    name = 'time_text'
    type = sa.String()
    inherit_cache = True


@compiler.compiles(_TimeText)
def _time_text(element, sql_compiler, **kw):
    # PostgreSQL (timestamp without time zone, UTC): US is 6 digits.
    return sql_compiler.process(sa.func.to_char(
        *element.clauses, sa.literal('YYYY-MM-DD"T"HH24:MI:SS.US')), **kw)


@compiler.compiles(_TimeText, 'mysql')
@compiler.compiles(_TimeText, 'mariadb')
def _time_text_mysql(element, sql_compiler, **kw):
    # DATETIME(6); %f is 6 digits.
    return sql_compiler.process(sa.func.date_format(
        *element.clauses, sa.literal('%Y-%m-%dT%H:%i:%s.%f')), **kw)


@compiler.compiles(_TimeText, 'sqlite')
def _time_text_sqlite(element, sql_compiler, **kw):
    # Stored as text, 'YYYY-MM-DD HH:MM:SS.ffffff' (SQLAlchemy writes the
    # six digits; fewer or none are padded).
    value = sql_compiler.process(element.clauses, **kw)
    return ("substr(%(v)s, 1, 10) || 'T' || substr(%(v)s, 12, 8) || '.' "
            "|| substr(substr(%(v)s, 21) || '000000', 1, 6)" % {'v': value})


def _when_enabled(value, otherwise=None):
    return sa.case((_POLICY.c.enabled == sa.true(), value), else_=otherwise)


def _sum(value, type_):
    # SUM is DECIMAL on MySQL: cast, so that the figures are numbers.
    return sa.cast(sa.func.coalesce(sa.func.sum(value), 0), type_)


def _aggregates(as_text=False):
    """The columns of :class:`coverage.Instance`, in its order.

    ``as_text``: the two times as :class:`_TimeText`.
    """
    p = _POLICY.c
    no_rules = sa.and_(p.enabled == sa.true(),
                       *[p[name].is_(None) for name in _RULES])
    # What one policy keeps at least; max_age_days keeps about that many
    # days of backups.
    keeps = _Greatest(*[sa.func.coalesce(value, 0) for value in (
        p.keep_last, p.keep_daily, p.keep_weekly, p.keep_monthly,
        p.min_keep, p.max_age_days * p.daily_runs)])
    last_success_at = sa.func.max(p.last_success_at)
    first_created_at = sa.func.min(p.created_at)
    if as_text:
        last_success_at = _TimeText(last_success_at)
        first_created_at = _TimeText(first_created_at)
    return [
        p.backend, p.project_id, p.instance_id,
        sa.func.count(),
        _sum(_when_enabled(1, 0), sa.Integer),
        last_success_at,
        first_created_at,
        sa.func.min(_when_enabled(p.rpo)),
        sa.cast(sa.func.sum(_when_enabled(p.daily_runs)), sa.Float),
        sa.cast(sa.func.max(_when_enabled(keeps)), sa.Float),
        _sum(sa.case((no_rules, 1), else_=0), sa.Integer),
        # Enabled policies whose newest verification failed (the flag
        # the verification's outcome keeps: db.verifications).
        _sum(sa.case((sa.and_(p.enabled == sa.true(),
                              p.verify_failing == sa.true()), 1),
                     else_=0), sa.Integer),
    ]


@context_manager.reader
def policy_instances(context, project_id=None):
    """Every instance the policies of ``project_id`` (None: all) name.

    A list of :class:`~dbaas_scheduler.coverage.Instance`, in no order.
    """
    p = _POLICY.c
    query = sa.select(*_aggregates()).group_by(
        p.project_id, p.backend, p.instance_id)
    if project_id is not None:
        query = query.where(p.project_id == project_id)
    # Typed columns (UTCDateTime) come back aware from min/max too.
    make = coverage.Instance
    return [make(*row[:-1], bool(row[-1]))
            for row in context.session.execute(query).all()]


@context_manager.reader
def policy_rows(context, project_id=None):
    """:func:`policy_instances` as plain tuples, read through the driver.

    The fields of :class:`~dbaas_scheduler.coverage.Instance` (the last,
    ``verification_failed``, as a number of policies), the two times as
    the fixed-width text of :class:`_TimeText` (None stays None): for the
    report of 100,000 instances, which neither needs the datetimes nor
    can afford the typed result rows (issue 29).
    """
    p = _POLICY.c
    query = sa.select(*_aggregates(as_text=True)).group_by(
        p.project_id, p.backend, p.instance_id)
    if project_id is not None:
        query = query.where(p.project_id == project_id)
    connection = context.session.connection()
    compiled = query.compile(dialect=connection.dialect)
    params = compiled.construct_params()
    if compiled.positional:
        params = tuple(params[name] for name in compiled.positiontup)
    # Plain tuples from the DBAPI cursor: no typed Row per instance.
    result = connection.exec_driver_sql(compiled.string, params)
    try:
        return result.cursor.fetchall()
    finally:
        result.close()


@context_manager.reader
def listing_trusts(context, backend, project_ids):
    """``{project_id: trust_id}``: a trust of each project's policies.

    A trust of one of the project's policies of ``backend`` (any: each
    was delegated by a member of the project): the credentials the
    backend lists the project's instances with.
    """
    p = _POLICY.c
    query = sa.select(p.project_id, sa.func.max(p.trust_id)).where(
        p.backend == backend, p.trust_id.is_not(None),
        p.project_id.in_(project_ids)).group_by(p.project_id)
    return dict(context.session.execute(query).all())


@context_manager.writer
def store_counts(context, counts, now):
    """Keep ``{project_id: {state: instances}}`` as the latest counts."""
    projects = sorted(counts)
    for start in range(0, len(projects), _CHUNK):
        chunk = projects[start:start + _CHUNK]
        context.session.execute(_COUNT.delete().where(
            _COUNT.c.project_id.in_(chunk)))
        context.session.execute(_COUNT.insert(), [
            {'project_id': project_id, 'state': state, 'instances': number,
             'computed_at': now}
            for project_id in chunk
            for state, number in counts[project_id].items()])


@context_manager.reader
def stored_counts(context, since):
    """``[(project_id, state, instances)]`` computed at ``since`` or later."""
    c = _COUNT.c
    query = sa.select(c.project_id, c.state, c.instances).where(
        c.computed_at >= since).order_by(c.project_id, c.state)
    return [tuple(row) for row in context.session.execute(query)]
