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
"""Where the machine's CPU time goes during a measurement, and what it is."""

import collections
from importlib import metadata
import os
import platform
import subprocess
import sys
import time

from oslo_utils import timeutils
import psutil
from tools.benchmarks import database
from tools.benchmarks import reporting

from dbaas_scheduler import version

# The servers a measurement uses, by process name.
_SERVERS = {'postgres': 'PostgreSQL', 'mariadbd': 'MariaDB',
            'mysqld': 'MySQL', 'beam.smp': 'RabbitMQ'}
_TOP = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def cpu_ticks():
    """The machine's CPU time so far, /proc/stat's first eight fields."""
    with open('/proc/stat') as stream:
        return [int(value) for value in stream.readline().split()[1:9]]


def snapshot(known=None):
    """/proc/stat's CPU line and the CPU time of the processes we know.

    ``known``: CPU seconds of other processes the benchmark started, by
    name (e.g. its stand-in worker).
    """
    ticks = cpu_ticks()
    seconds = collections.Counter()
    for proc in psutil.process_iter(['name', 'cpu_times']):
        group = _SERVERS.get(proc.info['name'])
        if group and proc.info['cpu_times'] is not None:
            times = proc.info['cpu_times']
            seconds[(group, proc.pid)] = times.user + times.system
    times = psutil.Process().cpu_times()
    seconds[('benchmark process', 0)] = times.user + times.system
    for name, value in (known or {}).items():
        seconds[(name, 0)] = value
    return time.time(), ticks, seconds


def usage(before, after, measured, seconds):
    """What the machine did between two snapshots, as one line.

    CPU seconds of the processes measured (given, named ``measured``), the
    servers, the processes of :func:`snapshot` and this process; what the
    rest of the machine used ("other": another test run or benchmark on
    the machine makes the figures unreliable); the idle and steal shares
    (steal: time the hypervisor gave to other guests).
    """
    elapsed = after[0] - before[0]
    ticks = [b - a for a, b in zip(before[1], after[1])]
    total = max(sum(ticks), 1)
    used = collections.Counter({measured: seconds})
    for key, value in after[2].items():
        used[key[0]] += value - before[2].get(key, 0.0)
    busy = (total - ticks[3] - ticks[4] - ticks[7]) / os.sysconf(
        'SC_CLK_TCK')
    return ('%.1f s; CPU seconds: %s, other processes %.1f; machine idle '
            '%.0f%%, steal %.0f%%' % (
                elapsed, ', '.join('%s %.1f' % item
                                   for item in sorted(used.items())),
                max(busy - sum(used.values()), 0.0),
                100 * (ticks[3] + ticks[4]) / total,
                100 * ticks[7] / total))


def wait_for_idle(limit):
    """Wait up to ``limit`` seconds for the machine to be 90% idle.

    Another test run or benchmark sharing the machine makes the figures
    unreliable.
    """
    deadline = time.time() + limit
    while True:
        before = cpu_ticks()
        time.sleep(2)
        ticks = [b - a for a, b in zip(before, cpu_ticks())]
        idle = (ticks[3] + ticks[4]) / max(sum(ticks), 1)
        if idle >= 0.9 or time.time() >= deadline:
            if idle < 0.9:
                reporting.progress(
                    'warning: the machine is still %.0f%% busy',
                    100 * (1 - idle))
            return
        reporting.progress(
            'waiting for the machine to be idle (%.0f%% busy)',
            100 * (1 - idle))


def versions_section(report, broker, libraries, workdir):
    """The report's last section: the machine, the versions, the command."""
    report.section('Machine and versions')
    with open('/proc/meminfo') as stream:
        memory = int(stream.readline().split()[1]) * 1024
    model = platform.processor()
    try:
        with open('/proc/cpuinfo') as stream:
            for line in stream:
                if line.startswith('model name'):
                    model = line.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    report.item('date (UTC)', timeutils.utcnow().strftime('%Y-%m-%d %H:%M'))
    report.item('CPUs (nproc)', '%d x %s' % (len(os.sched_getaffinity(0)),
                                             model))
    report.item('memory', '%.1f GiB' % (memory / 2 ** 30))
    report.item('kernel / python', '%s / %s' % (platform.release(),
                                                platform.python_version()))
    report.item('dbaas-scheduler', '%s (git %s)' % (
        version.version_string(), git_revision()))
    for server in sorted(database.SERVER_VERSIONS):
        report.item('database', server)
    report.item('broker', broker)
    report.item('libraries', ', '.join(
        '%s %s' % (name, module_version(name)) for name in libraries))
    report.item('command', command_line())
    report.item('work directory', workdir)


def command_line():
    """The command that ran the benchmark, as it was typed."""
    spec = getattr(sys.modules['__main__'], '__spec__', None)
    if spec is None:
        return ' '.join(sys.argv)
    module = spec.name.rpartition('.__main__')[0] or spec.name
    return ' '.join(['python -m', module] + sys.argv[1:])


def module_version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return '-'


def git_revision():
    """The commit measured, and the package files changed since it."""
    def git(*args):
        return subprocess.run(('git',) + args, cwd=_TOP, capture_output=True,
                              text=True, check=True).stdout.rstrip()
    try:
        changed = git('status', '--porcelain', '--', 'dbaas_scheduler')
        revision = git('rev-parse', '--short', 'HEAD')
    except (OSError, subprocess.CalledProcessError):
        return '?'
    if changed:
        revision += '; uncommitted changes to %s' % ', '.join(
            line[3:] for line in changed.splitlines())
    return revision
