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
"""A benchmark's report: progress lines, percentiles, plain-text sections."""

import collections
import math
import os
import sys
import time

_STARTED = time.time()


def progress(message, *args):
    """A progress line on stderr; the report itself goes to stdout."""
    print('[%7.1fs] %s' % (time.time() - _STARTED, message % args),
          file=sys.stderr, flush=True)


def percentile(ordered, fraction):
    """Nearest-rank percentile of an already sorted list."""
    if not ordered:
        return float('nan')
    rank = max(1, math.ceil(fraction * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


def spread(values, unit='s', digits=3):
    """'p50 / p99 / max' of a list of numbers."""
    ordered = sorted(values)
    if not ordered:
        return 'n/a (no values)'
    form = '%%.%df %s' % (digits, unit)
    return '%s / %s / %s  (n=%d)' % (
        form % percentile(ordered, 0.5), form % percentile(ordered, 0.99),
        form % ordered[-1], len(ordered))


def per_second(offsets):
    """How many of ``offsets`` (seconds) fall in each second from 0."""
    if not offsets:
        return []
    counts = collections.Counter(int(offset) for offset in offsets)
    return [counts.get(second, 0) for second in range(int(max(offsets)) + 1)]


def mib(value):
    return '%.1f MiB' % (value / 2 ** 20)


class Report:
    """Plain text sections, printed to stdout and kept for a file."""

    def __init__(self):
        self.lines = []

    def title(self, text):
        self.add(text)
        self.add('=' * len(text))

    def section(self, title):
        self.add('')
        self.add(title)
        self.add('-' * len(title))

    def add(self, text=''):
        self.lines.append(text)
        print(text, flush=True)

    def item(self, key, value):
        self.add('  %-44s %s' % (key + ':', value))

    def text(self):
        return '\n'.join(self.lines) + '\n'

    def write(self, directory):
        """Keep a copy of the report as ``report.txt`` in ``directory``."""
        path = os.path.join(directory, 'report.txt')
        with open(path, 'w') as stream:
            stream.write(self.text())
        progress('report written to %s', path)
