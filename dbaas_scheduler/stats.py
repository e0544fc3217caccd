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
"""What only a process knows: counters and histograms kept in memory.

The cluster's metrics (:mod:`dbaas_scheduler.metrics`) are read from the
database; how long a backend call took, why it failed, how long an engine
tick ran or how many leases a worker lost are seen by one process only.
Each process counts them here, cumulatively since it started, and its
heartbeat writes :meth:`Registry.snapshot` as JSON into its ``service``
row, where the API's metrics collector reads it back for the live
processes.  A process that starts again has a new service id, so its
counters start from zero under a new label, as Prometheus expects.

Every metric has a fixed set of label values and a histogram a fixed list
of buckets, so that the JSON stays small whatever happens: a value outside
the set is counted as ``other`` when the set has one, else dropped.
Thread-safe; no prometheus_client in the engines and workers.
"""

import bisect
import contextlib
import itertools
import threading
import time

# Bumped when the layout of a snapshot changes.
VERSION = 1

# Seconds; the upper bounds of the histograms' buckets.
SECONDS_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0, 30.0, 60.0, 120.0)

OTHER = 'other'


class _Metric:

    def __init__(self, name, labels):
        # labels: ((label name, allowed values), ...)
        self.name = name
        self.labelnames = tuple(name for name, _ in labels)
        self._allowed = tuple(frozenset(values) for _, values in labels)
        self._lock = threading.Lock()
        self._series = {}

    def _key(self, values):
        if len(values) != len(self._allowed):
            raise ValueError('%s takes the labels %s, not %r' % (
                self.name, ', '.join(self.labelnames), values))
        key = []
        for value, allowed in zip(values, self._allowed):
            if value not in allowed:
                if OTHER not in allowed:
                    return None
                value = OTHER
            key.append(value)
        return tuple(key)

    def series(self):
        """``{label values: state}``, a copy."""
        with self._lock:
            return {key: self._copy(state)
                    for key, state in self._series.items()}

    def reset(self):
        with self._lock:
            self._series.clear()


class Counter(_Metric):
    """A count that only goes up, per combination of label values."""

    kind = 'counter'

    def inc(self, *values, amount=1):
        key = self._key(values)
        if key is None:
            return
        with self._lock:
            self._series[key] = self._series.get(key, 0) + amount

    @staticmethod
    def _copy(state):
        return state

    def value(self, *values):
        with self._lock:
            return self._series.get(self._key(values), 0)

    def dump(self):
        series = self.series()
        if not self.labelnames and not series:
            # Always there: a counter of no label is a series from the
            # start, which a rate() can read.
            series = {(): 0}
        return [[list(key), value] for key, value in sorted(series.items())]


class Histogram(_Metric):
    """Observations (seconds) in fixed buckets, with their sum and count."""

    kind = 'histogram'

    def __init__(self, name, labels, buckets=SECONDS_BUCKETS):
        super().__init__(name, labels)
        self.buckets = tuple(sorted(buckets))

    def observe(self, seconds, *values):
        key = self._key(values)
        if key is None:
            return
        index = bisect.bisect_left(self.buckets, seconds)
        with self._lock:
            state = self._series.get(key)
            if state is None:
                # Per bucket (not cumulative), then +Inf; sum.
                state = self._series[key] = [
                    [0] * (len(self.buckets) + 1), 0.0]
            state[0][index] += 1
            state[1] += seconds

    @contextlib.contextmanager
    def time(self, *values):
        """Observe how long the ``with`` block took (even if it raised)."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.observe(time.monotonic() - started, *values)

    @staticmethod
    def _copy(state):
        return [list(state[0]), state[1]]

    def dump(self):
        series = []
        for key, (counts, total) in sorted(self.series().items()):
            # Cumulative, as Prometheus reads them; the last is the count.
            series.append([list(key), list(itertools.accumulate(counts)),
                           round(total, 6)])
        return {'le': list(self.buckets), 'series': series}


class Registry:
    """The metrics of one process, by name."""

    def __init__(self):
        self._lock = threading.Lock()
        self._metrics = {}

    def _add(self, metric):
        with self._lock:
            existing = self._metrics.get(metric.name)
            if existing is not None:
                if (type(existing) is not type(metric)
                        or existing.labelnames != metric.labelnames):
                    raise ValueError('metric %s is already registered '
                                     'otherwise' % metric.name)
                return existing
            self._metrics[metric.name] = metric
            return metric

    def counter(self, name, labels=()):
        """The counter ``name``; ``labels``: ((name, values), ...)."""
        return self._add(Counter(name, labels))

    def histogram(self, name, labels=(), buckets=SECONDS_BUCKETS):
        return self._add(Histogram(name, labels, buckets))

    def snapshot(self, names=None):
        """A JSON-able dict of the metrics (those of ``names``, if given).

        ``{"v": 1, "counters": {name: [[label values], value], ...},
        "histograms": {name: {"le": [bounds], "series": [[label values],
        [cumulative counts, +Inf last], sum]}}}``; a labelled metric
        lists only the label values it has seen.
        """
        with self._lock:
            metrics = [metric for name, metric in sorted(self._metrics.items())
                       if names is None or name in names]
        result = {'v': VERSION, 'counters': {}, 'histograms': {}}
        for metric in metrics:
            result[metric.kind + 's'][metric.name] = metric.dump()
        return result

    def reset(self):
        """Every metric back to zero (tests)."""
        with self._lock:
            metrics = list(self._metrics.values())
        for metric in metrics:
            metric.reset()


# The process's registry, and its metrics.
REGISTRY = Registry()

# The calls of the backend interface (dbaas_scheduler.backends.base).
BACKEND_CALLS = ('create_backup', 'get_backup', 'get_backups', 'find_backup',
                 'list_backups', 'delete_backup', 'check_instance')
# Why a backend call failed (see backends.base.error_kind).
ERROR_KINDS = ('timeout', 'rate_limited', 'unavailable', 'busy', 'not_found',
               'auth', OTHER)

BACKEND_CALL_SECONDS = REGISTRY.histogram(
    'backend_call_seconds', labels=(('call', BACKEND_CALLS),))
BACKEND_ERRORS = REGISTRY.counter(
    'backend_errors_total',
    labels=(('call', BACKEND_CALLS), ('kind', ERROR_KINDS)))
ENGINE_TICK_SECONDS = REGISTRY.histogram('engine_tick_seconds')
# Executions cast to the workers (by the tick or a sweep), and those whose
# cast failed (the sweep casts them again).
ENGINE_CASTS = REGISTRY.counter(
    'engine_casts_total', labels=(('result', ('sent', 'failed')),))
LEASE_RENEWALS_LOST = REGISTRY.counter('lease_renewals_lost_total')
STRAY_DELETIONS = REGISTRY.counter(
    'stray_deletions_total',
    labels=(('by', ('compensation', 'reconciliation', OTHER)),))

# What each program's service row carries.
ENGINE_METRICS = ('engine_tick_seconds', 'engine_casts_total')
WORKER_METRICS = ('backend_call_seconds', 'backend_errors_total',
                  'lease_renewals_lost_total', 'stray_deletions_total')
