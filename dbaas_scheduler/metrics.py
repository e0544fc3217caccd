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
"""Prometheus metrics of the whole cluster, read from the database.

One endpoint for the cluster rather than one per process: what an
operator alerts on -- backups late, slots missed, policies failing, a
backlog, no live engine -- is recorded in the database by whichever
engine or worker process did the work, and a process (a worker child the
launcher forks, one of several engines) sees only its own share.
:class:`ClusterCollector` runs a few bounded aggregate queries
(:mod:`dbaas_scheduler.db.metrics`) when Prometheus scrapes, at most once
per ``[metrics] cache_time``, and turns them into metric families; the
API serves them (:func:`make_app`) at ``[metrics] path``.

Figures of recent history (executions finished, lateness) cover the last
``[metrics] window`` seconds and are gauges: counts in a table that the
history purge shrinks could not be counters.

What only a process knows -- how long its backend calls and engine ticks
take, why backend calls fail, the leases a worker lost -- each engine and
worker counts in memory (:mod:`dbaas_scheduler.stats`) and its heartbeat
writes into its ``service`` row; the families of :data:`PROCESS_FAMILIES`
give them for the live services, labelled by ``service_id``, ``binary``
and ``host``.  They are counters and histograms since the process
started: a process started again is a new ``service_id``.
"""

import datetime
import json
import threading
import time

from oslo_log import log as logging
from oslo_utils import timeutils
from prometheus_client import core
from prometheus_client import exposition
from prometheus_client import registry as prom_registry

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import coverage
from dbaas_scheduler.db import capacity as db_capacity
from dbaas_scheduler.db import coverage as db_coverage
from dbaas_scheduler.db import metrics as db_metrics
from dbaas_scheduler.db import verifications as db_verifications
from dbaas_scheduler import enums

LOG = logging.getLogger(__name__)

PREFIX = 'dbaas_scheduler_'
# The binaries of the service table, always reported (0 when none lives).
BINARIES = ('dbaas-scheduler-engine', 'dbaas-scheduler-worker',
            'dbaas-scheduler-api')


# Labels of every family of a process's own metrics.
PROCESS_LABELS = ['service_id', 'binary', 'host']

# The process's metrics (dbaas_scheduler.stats) served: stats name ->
# (kind, family name, help, labels of its own).
PROCESS_FAMILIES = {
    'backend_call_seconds': (
        'histogram', 'backend_call_seconds',
        'Seconds the backend calls of a worker took, by call (each attempt '
        'of a retried call is one), since the process started.', ['call']),
    'backend_errors_total': (
        'counter', 'backend_errors_total',
        'Backend calls of a worker that failed, by call and kind of error '
        '(timeout, rate_limited, unavailable, busy, not_found, auth, '
        'other), since the process started.', ['call', 'kind']),
    'engine_tick_seconds': (
        'histogram', 'engine_tick_seconds',
        'Seconds an engine tick took (its transaction and its casts), '
        'since the process started.', []),
    'engine_casts_total': (
        'counter', 'engine_casts_total',
        'Executions an engine cast to the workers (sent) or could not '
        '(failed: the sweep casts them again), since the process started.',
        ['result']),
    'lease_renewals_lost_total': (
        'counter', 'lease_renewals_lost_total',
        'Claims a worker\'s lease renewal found taken by another claim or '
        'gone (its lease had expired), since the process started.', []),
    'stray_deletions_total': (
        'counter', 'stray_deletions_total',
        'Extra backups a worker deleted, by what found them (compensation, '
        'reconciliation), since the process started.', ['by']),
}


def _since(now, when):
    """Seconds from ``when`` to ``now``: 0 when None, never negative.

    The shape of every age gauge ("seconds since X, 0 when there is
    none"); a time to come is ``_since(when, now)``.
    """
    if when is None:
        return 0.0
    return max(0.0, (now - when).total_seconds())


class ClusterCollector(prom_registry.Collector):
    """Metric families of the cluster, from the database, on each scrape."""

    def __init__(self, conf, clock=None):
        self.conf = conf
        self.clock = clock or (lambda: timeutils.utcnow(True))
        self._lock = threading.Lock()
        self._cached = None
        self._cached_at = None

    def _snapshot(self):
        """(snapshot or None, seconds the queries took, when)."""
        with self._lock:
            cache_time = self.conf.metrics.cache_time
            if (self._cached is not None and cache_time
                    and time.monotonic() - self._cached_at < cache_time):
                return self._cached
            now = self.clock()
            window = datetime.timedelta(seconds=self.conf.metrics.window)
            reach = datetime.timedelta(
                seconds=self.conf.worker.reconcile_window)
            started = time.monotonic()
            try:
                snapshot = db_metrics.collect(
                    dbaas_context.get_admin_context(), now, now - window,
                    sorted(self.conf.metrics.lateness_buckets),
                    self.conf.service_down_time, reach,
                    longest_streak=max(self.conf.metrics.failure_streaks,
                                       default=0))
            except Exception:
                LOG.exception('Metrics: reading the database failed')
                snapshot = None
            self._cached = (snapshot, time.monotonic() - started, now)
            self._cached_at = time.monotonic()
            return self._cached

    def describe(self):
        # Registering must not query the database.
        return []

    def collect(self):
        snapshot, took, now = self._snapshot()
        up = core.GaugeMetricFamily(
            PREFIX + 'database_up',
            'Whether the last read of the database for these metrics '
            'succeeded (1) or failed (0, and no other figure is given).')
        up.add_metric([], 0 if snapshot is None else 1)
        yield up
        duration = core.GaugeMetricFamily(
            PREFIX + 'metrics_query_seconds',
            'Seconds the database queries of these metrics took.')
        duration.add_metric([], took)
        yield duration
        if snapshot is not None:
            yield from self._families(snapshot, now)
            yield from self._protection(snapshot, now)
            yield from self._coverage(now)
            yield from self._verification(now)
            yield from self._capacity(now)

    def _verification(self, now):
        """The age of the newest verified backup, at worst over policies.

        One series: bounded, whatever the number of policies.
        """
        try:
            age = db_verifications.oldest_newest_verified_age(
                dbaas_context.get_admin_context(), now)
        except Exception:
            LOG.exception('Metrics: reading the verifications failed')
            return
        family = core.GaugeMetricFamily(
            PREFIX + 'verified_backup_oldest_age_seconds',
            'Seconds since the newest backup whose verification passed, '
            'for the policy where that is longest ago, among the policies '
            'with verification on (a policy never verified counts from '
            'its creation; 0 when no policy has verification on).')
        family.add_metric([], age or 0.0)
        yield family

    def _capacity(self, now):
        """Executions waiting for capacity, and projects backing off.

        Fair capacity (``db/capacity.py``) queues the executions of a
        project at its limit, of a full region, or of a project the
        backend asked to slow down.  Totals by reason and the longest
        wait over every project; per project (label ``project_id``) only
        for the ``[metrics] capacity_projects`` that waited longest, and
        the backoffs that end last: bounded labels, whatever the number
        of projects.  Two statements, each on an index.
        """
        top = self.conf.metrics.capacity_projects
        context = dbaas_context.get_admin_context()
        try:
            queued = db_capacity.queued_for_capacity(context)
            backed_off, latest, backoffs = db_capacity.backoffs_now(
                context, now, top)
        except Exception:
            LOG.exception('Metrics: reading the capacity queue failed')
            return
        reasons = [name for name, _ in db_capacity.QUEUED_REASONS]
        executions = core.GaugeMetricFamily(
            PREFIX + 'capacity_queued_executions',
            'Executions waiting for capacity, by reason: project_limit '
            '([worker] max_running_per_project), region_limit ([worker] '
            'max_running), backoff (the backend asked the project to slow '
            'down: [worker] project_backoff).', labels=['reason'])
        for reason in reasons:
            executions.add_metric([reason], sum(
                project.counts[reason] for project in queued))
        yield executions
        projects = core.GaugeMetricFamily(
            PREFIX + 'capacity_queued_projects',
            'Projects with executions waiting for capacity.')
        projects.add_metric([], len(queued))
        yield projects
        oldest = core.GaugeMetricFamily(
            PREFIX + 'capacity_queued_oldest_seconds',
            'Seconds since the slot of the execution that has waited '
            'longest for capacity, over every project (0 when none '
            'waits): a project starved by the limits.')
        oldest.add_metric([], max([0.0] + [
            _since(now, project.oldest) for project in queued]))
        yield oldest

        longest = sorted(queued, key=lambda project: (
            project.oldest, -sum(project.counts.values()),
            project.project_id))[:top]
        per_project = core.GaugeMetricFamily(
            PREFIX + 'capacity_project_queued_executions',
            'Executions waiting for capacity, by project and reason, for '
            'the [metrics] capacity_projects projects that have waited '
            'longest.', labels=['project_id', 'reason'])
        per_project_oldest = core.GaugeMetricFamily(
            PREFIX + 'capacity_project_queued_oldest_seconds',
            'Seconds since the slot of the project\'s execution that has '
            'waited longest for capacity, for the [metrics] '
            'capacity_projects projects that have waited longest.',
            labels=['project_id'])
        for project in longest:
            for reason in reasons:
                per_project.add_metric([project.project_id, reason],
                                       project.counts[reason])
            per_project_oldest.add_metric(
                [project.project_id],
                _since(now, project.oldest))
        yield per_project
        yield per_project_oldest

        backing_off = core.GaugeMetricFamily(
            PREFIX + 'capacity_backoff_projects',
            'Projects the backend asked to slow down (Trove\'s 413: rate '
            'limit or backup quota) whose backoff has not ended: no new '
            'backup of theirs starts before it ends.')
        backing_off.add_metric([], backed_off)
        yield backing_off
        remaining = core.GaugeMetricFamily(
            PREFIX + 'capacity_backoff_longest_remaining_seconds',
            'Seconds until the backoff that ends last ends (0 when no '
            'project backs off).')
        remaining.add_metric([], _since(latest, now) if latest else 0.0)
        yield remaining
        ends = core.GaugeMetricFamily(
            PREFIX + 'capacity_backoff_end_timestamp_seconds',
            'When the backoff of a project ends (Unix time), for the '
            '[metrics] capacity_projects projects whose backoff ends '
            'last.', labels=['project_id'])
        for project_id, until in backoffs:
            ends.add_metric([project_id], until.timestamp())
        yield ends

    def _protection(self, snap, now):
        """Policies by protection state, and the oldest success of each.

        Aggregated per state: bounded labels, whatever the number of
        policies or projects (per policy is what the API is for).
        """
        totals = {state: snap.protection.get(state, (0, None))
                  for state in enums.Protection.ALL}
        policies = core.GaugeMetricFamily(
            PREFIX + 'policies_protection',
            'Backup policies by protection state (ok, at_risk: the RPO '
            'will be breached unless the next backup succeeds in time, '
            'breached: the newest successful backup is older than the '
            'RPO).', labels=['state'])
        age = core.GaugeMetricFamily(
            PREFIX + 'protection_oldest_success_age_seconds',
            'Age of the oldest newest-successful-backup among the policies '
            'of each protection state (0 when none has succeeded yet).',
            labels=['state'])
        for state, (count, oldest) in totals.items():
            policies.add_metric([state], count)
            age.add_metric([state], _since(now, oldest))
        yield policies
        yield age

    def _coverage(self, now):
        """Instances by coverage state, from the stored coverage reports.

        Listing every project's instances from the backends on each
        scrape would cost too much: each coverage report (GET
        /v1/coverage) stores its project's counts, and those younger
        than ``[coverage] counts_max_age`` are served.  Totals per state,
        and per project for the [coverage] metrics_projects projects with
        the most instances not protected: bounded labels.
        """
        max_age = datetime.timedelta(seconds=self.conf.coverage.counts_max_age)
        try:
            rows = db_coverage.stored_counts(
                dbaas_context.get_admin_context(), now - max_age)
        except Exception:
            LOG.exception('Metrics: reading the coverage counts failed')
            return
        totals = coverage.count(())
        by_project = {}
        for project_id, state, number in rows:
            if state in totals:
                totals[state] += number
                by_project.setdefault(project_id, {})[state] = number
        instances = core.GaugeMetricFamily(
            PREFIX + 'coverage_instances',
            'Instances by coverage state (unprotected: no policy; paused; '
            'stale; verification_failed; below_minimum; protected), over '
            'the projects whose coverage report is younger than '
            '[coverage] counts_max_age.', labels=['state'])
        for state, number in totals.items():
            instances.add_metric([state], number)
        yield instances
        reported = core.GaugeMetricFamily(
            PREFIX + 'coverage_projects_reported',
            'Projects whose coverage counts are younger than [coverage] '
            'counts_max_age (the projects the coverage metrics cover).')
        reported.add_metric([], len(by_project))
        yield reported
        worst = sorted(
            by_project.items(),
            key=lambda item: (-sum(number for state, number in
                                   item[1].items()
                                   if state != coverage.PROTECTED),
                              item[0]))
        per_project = core.GaugeMetricFamily(
            PREFIX + 'coverage_project_instances',
            'Instances not protected, by project and coverage state, for '
            'the [coverage] metrics_projects projects with the most.',
            labels=['project_id', 'state'])
        for project_id, counts in worst[:self.conf.coverage.metrics_projects]:
            if not any(number for state, number in counts.items()
                       if state != coverage.PROTECTED):
                break
            for state in coverage.PRECEDENCE:
                if state != coverage.PROTECTED:
                    per_project.add_metric([project_id, state],
                                           counts.get(state, 0))
        yield per_project

    def _families(self, snap, now):
        window = self.conf.metrics.window
        policies = core.GaugeMetricFamily(
            PREFIX + 'policies', 'Backup policies, by whether they are '
            'enabled (paused, finished and errored ones are not).',
            labels=['enabled'])
        for enabled in (True, False):
            policies.add_metric([str(enabled).lower()],
                                snap.policies.get(enabled, 0))
        yield policies

        backlog = core.GaugeMetricFamily(
            PREFIX + 'backlog_policies',
            'Enabled policies whose next run time has come and that no '
            'engine tick has claimed yet.')
        backlog.add_metric([], snap.backlog)
        yield backlog
        oldest = core.GaugeMetricFamily(
            PREFIX + 'backlog_oldest_seconds',
            'Seconds since the earliest due time of an unclaimed policy '
            '(0 without a backlog): how far behind the engines are.')
        oldest.add_metric([], _since(now, snap.backlog_oldest))
        yield oldest

        in_flight = core.GaugeMetricFamily(
            PREFIX + 'executions_in_flight',
            'Executions not finished: PENDING and DISPATCHED wait for a '
            'worker, RUNNING are held by one.', labels=['status'])
        waiting_age = core.GaugeMetricFamily(
            PREFIX + 'executions_oldest_seconds',
            'Age of the oldest unfinished execution of each status (0 '
            'when there is none).', labels=['status'])
        for status in (enums.ExecutionStatus.WAITING
                       + (enums.ExecutionStatus.RUNNING,)):
            count, created_at = snap.in_flight.get(status, (0, None))
            in_flight.add_metric([status], count)
            waiting_age.add_metric([status], _since(now, created_at))
        yield in_flight
        yield waiting_age

        finished = core.GaugeMetricFamily(
            PREFIX + 'executions_finished',
            'Executions that finished in the last [metrics] window seconds '
            '(label window), by final status and reason class.',
            labels=['status', 'reason', 'window'])
        for (status, reason), count in sorted(snap.finished.items()):
            finished.add_metric([status, reason, str(window)], count)
        # Always present, so that an alert on it has a series to read.
        for status in enums.ExecutionStatus.FINISHED:
            if not any(key[0] == status for key in snap.finished):
                finished.add_metric(
                    [status, db_metrics.REASON_NONE, str(window)], 0)
        yield finished

        missed = core.GaugeMetricFamily(
            PREFIX + 'slots_missed',
            'Policies whose slots were recorded as missed (a SKIPPED '
            'execution with the reason missed, which stands for one or '
            'more slots) or coalesced into one run, in the last window.',
            labels=['kind', 'window'])
        missed.add_metric(['missed', str(window)], sum(
            count for (status, reason), count in snap.finished.items()
            if reason == 'missed'))
        missed.add_metric(['coalesced', str(window)], sum(
            count for (status, reason), count in snap.finished.items()
            if reason == 'coalesced'))
        yield missed

        buckets = sorted(self.conf.metrics.lateness_buckets)
        for name, lateness, text in (
                ('dispatch_lateness_seconds', snap.dispatch_lateness,
                 'handed to the workers'),
                ('start_lateness_seconds', snap.start_lateness,
                 'started by a worker')):
            family = core.GaugeHistogramMetricFamily(
                PREFIX + name,
                'Seconds after its scheduled time that a scheduled '
                'execution of the last window was %s.' % text,
                labels=['window'])
            family.add_metric(
                [str(window)],
                [(_bound(bound), count)
                 for bound, count in zip(buckets, lateness.buckets)]
                + [('+Inf', lateness.count)],
                gsum_value=lateness.total)
            yield family

        failing = core.GaugeMetricFamily(
            PREFIX + 'policies_failing',
            'Policies whose latest outcomes have all failed, at least as '
            'many in a row as the label consecutive ([metrics] '
            'failure_streaks): their consecutive_failures.',
            labels=['consecutive'])
        for length in sorted(set(self.conf.metrics.failure_streaks)):
            failing.add_metric([str(length)], sum(
                count for streak, count in snap.failure_streaks.items()
                if streak >= length))
        yield failing

        strays = core.GaugeMetricFamily(
            PREFIX + 'stray_backups_deleted',
            'Extra backups of an execution deleted in the last window: '
            'duplicate (it had another) or orphan (it had none recorded).',
            labels=['reason', 'window'])
        for reason, count in sorted(snap.strays_deleted.items()):
            strays.add_metric([reason, str(window)], count)
        yield strays

        reconciliations = core.GaugeMetricFamily(
            PREFIX + 'reconciliations_due',
            'Instances whose reconciliation pass is due and not yet '
            'taken by a worker.')
        reconciliations.add_metric([], snap.reconciliations_due)
        yield reconciliations

        services = core.GaugeMetricFamily(
            PREFIX + 'services',
            'Processes in the service table, by binary and whether their '
            'heartbeat is within service_down_time.',
            labels=['binary', 'state'])
        binaries = sorted(set(BINARIES)
                          | {binary for binary, _ in snap.services})
        for binary in binaries:
            for is_up in (True, False):
                services.add_metric(
                    [binary, 'up' if is_up else 'down'],
                    snap.services.get((binary, is_up), 0))
        yield services

        yield from _process_families(snap.process_stats)


def _process_families(rows):
    """The families of the live services' own metrics (``stats`` rows)."""
    families = {}
    for name, (kind, family_name, text, labels) in PROCESS_FAMILIES.items():
        family_class = (core.HistogramMetricFamily if kind == 'histogram'
                        else core.CounterMetricFamily)
        families[name] = family_class(PREFIX + family_name, text,
                                      labels=PROCESS_LABELS + labels)
    for service_id, binary, host, text in rows:
        try:
            stats = json.loads(text)
            for name, series in stats.get('counters', {}).items():
                _add_counter(families, name, [service_id, binary, host],
                             series)
            for name, histogram in stats.get('histograms', {}).items():
                _add_histogram(families, name, [service_id, binary, host],
                               histogram)
        except (ValueError, TypeError, AttributeError, KeyError):
            # A row this release cannot read: its figures are left out.
            LOG.debug('Metrics: unreadable stats of service %s',
                      service_id, exc_info=True)
    return list(families.values())


def _known(families, name, kind):
    spec = PROCESS_FAMILIES.get(name)
    if spec is None or spec[0] != kind:
        return None, None
    return families[name], len(spec[3])


def _add_counter(families, name, service, series):
    family, labels = _known(families, name, 'counter')
    if family is None:
        return
    for values, value in series:
        if len(values) == labels:
            family.add_metric(service + [str(v) for v in values],
                              float(value))


def _add_histogram(families, name, service, histogram):
    family, labels = _known(families, name, 'histogram')
    if family is None:
        return
    bounds = [_bound(float(bound)) for bound in histogram['le']]
    for values, counts, total in histogram['series']:
        if len(values) != labels or len(counts) != len(bounds) + 1:
            continue
        family.add_metric(
            service + [str(v) for v in values],
            list(zip(bounds + ['+Inf'], [float(c) for c in counts])),
            sum_value=float(total))


def _bound(value):
    return ('%g' % value) if value != int(value) else '%d.0' % value


def make_registry(conf):
    """A registry holding only the cluster collector."""
    registry = prom_registry.CollectorRegistry(auto_describe=False)
    registry.register(ClusterCollector(conf))
    return registry


def make_app(conf, registry=None):
    """The WSGI application that serves the metrics in text format.

    prometheus_client's application answers GET only; a HEAD gets the
    headers of a GET without its body.
    """
    application = exposition.make_wsgi_app(registry or make_registry(conf))

    def metrics_app(environ, start_response):
        if environ.get('REQUEST_METHOD') != 'HEAD':
            return application(environ, start_response)
        body = application(dict(environ, REQUEST_METHOD='GET'),
                           start_response)
        close = getattr(body, 'close', None)
        if close is not None:
            close()
        return [b'']
    return metrics_app
