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
"""py-spy profiles of a benchmark's processes, summarised for the report."""

import collections
import signal
import subprocess


class Profiler:
    """py-spy sampling one process, only the threads holding the GIL.

    It shows where the process spends CPU time in Python code (a thread
    waiting for the database or the network releases the GIL).  Stopped
    with SIGINT, it writes collapsed stacks (``--format raw``).
    """

    def __init__(self, binary, pid, path):
        self.path = path
        self.popen = subprocess.Popen(
            [binary, 'record', '--pid', str(pid), '--format', 'raw',
             '--output', path, '--gil', '--nonblocking', '--nolineno',
             '--rate', '100'],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop(self):
        self.popen.send_signal(signal.SIGINT)
        try:
            self.popen.wait(60)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()

    def summary(self, top):
        """Where the samples are: by package, by function, in our code.

        Returns ``(samples, [(package, n)], [(function, n)],
        [(dbaas_scheduler function, n)])``: the package and the function
        of the innermost frame (self time), and the functions of this
        project a sample passes through (total time).
        """
        packages, own, ours = (collections.Counter(), collections.Counter(),
                               collections.Counter())
        samples = 0
        try:
            with open(self.path) as stream:
                lines = stream.read().splitlines()
        except OSError:
            return 0, [], [], []
        for line in lines:
            stack, _, count = line.rpartition(' ')
            frames = [frame for frame in stack.split(';')
                      if frame.endswith(')') and ' (' in frame
                      and not frame.startswith(('process ', 'thread '))]
            if not frames or not count.isdigit():
                continue
            samples += int(count)
            own[frames[-1]] += int(count)
            where = frames[-1].rsplit(' (', 1)[1].rstrip(')')
            packages[where.split('/')[0]] += int(count)
            for frame in set(frames):
                if '(dbaas_scheduler/' in frame:
                    ours[frame] += int(count)
        return (samples, packages.most_common(top), own.most_common(top),
                ours.most_common(top))


def report_profile(report, profiler, seconds, top):
    samples, packages, own, ours = profiler.summary(top)
    report.item('py-spy samples holding the GIL', '%d in %.0f s at 100 Hz '
                '(%.0f%% of one core in Python); %s' % (
                    samples, seconds, samples / max(seconds, 1e-6),
                    profiler.path))
    share = 100.0 / max(samples, 1)
    report.item('  self time by package', ', '.join(
        '%s %.1f%%' % (package, count * share) for package, count in packages))
    for title, rows in (('self', own), ('in', ours)):
        for frame, count in rows:
            report.item('  %s %5.1f%%' % (title, count * share), frame)
