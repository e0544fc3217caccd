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
"""The timeline chart of a policy's page, as plain inline SVG.

One mark per slot, oldest on the left: its colour is the execution's
status, its height the backup's duration (relative to the longest shown),
and a thin line above it the lateness (the time from the slot to the
start).  Every mark has a <title> with the same facts in words, so that
the chart needs no JavaScript and can be read with a screen reader.
"""

from django.utils.translation import gettext as _

from dbaas_scheduler_dashboard import utils

WIDTH = 720
HEIGHT = 140
BAR_AREA = 100  # the bars' height at most; lateness above them
MARK = 12
# Drawn as attributes, not only CSS: the chart keeps its colours where the
# stylesheet does not load.
COLOURS = {'succeeded': '#3c9a3c', 'failed': '#d9534f',
           'skipped': '#aaaaaa'}
RUNNING = '#5bc0de'


def build(executions):
    """What the template draws; executions come newest first."""
    slots = list(reversed(executions))
    if not slots:
        return None
    durations = [utils.seconds_between(e.started_at, e.finished_at) or 0
                 for e in slots]
    lateness = [utils.seconds_between(e.scheduled_at, e.started_at) or 0
                for e in slots]
    longest = max(durations) or 1
    latest = max(lateness) or 1
    step = min(max(WIDTH // len(slots), MARK + 2), 3 * MARK)
    marks = []
    for index, execution in enumerate(slots):
        height = max(int(BAR_AREA * durations[index] / longest), 4)
        late = int(30 * lateness[index] / latest) if lateness[index] else 0
        x = index * step + 2
        marks.append({
            'id': execution.id,
            'status': execution.status.lower(),
            'colour': COLOURS.get(execution.status.lower(), RUNNING),
            'x': x,
            'y': 10 + BAR_AREA - height + 30,
            'height': height,
            'width': step - 4,
            'late_y': 10 + BAR_AREA - height + 30 - late,
            'late_x': x + (step - 4) // 2,
            'title': _('%(slot)s: %(status)s, %(trigger)s; late by '
                       '%(lateness)s, took %(duration)s') % {
                'slot': utils.user_time(execution.scheduled_at),
                'status': execution.status,
                'trigger': execution.trigger,
                'lateness': utils.duration_words(lateness[index]) or '-',
                'duration': utils.duration_words(durations[index]) or '-'},
        })
    return {'width': max(len(slots) * step + 4, 200), 'height': HEIGHT + 20,
            'marks': marks, 'axis_y': 10 + BAR_AREA + 30 + 2}
