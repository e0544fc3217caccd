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
"""Keeping to Trove's rate limits: when a project may send again.

Trove limits requests per project (by default 200 GETs and 200 POSTs a
minute) and answers one over the limit with 413 ``overLimit`` and a
``Retry-After``.  Every thread of a worker that acts in that project then
waits that long before its next request, instead of each one finding out
by itself.
"""

import dataclasses
import threading
import time

# Seconds between two requests of a project Trove rate-limited, to start
# with (Trove's default 200 a minute is one per 0.3 s); it grows while
# Trove still refuses and shrinks while it accepts.
FIRST_GAP = 0.25
SMALLEST_GAP = 0.02


@dataclasses.dataclass
class _Pace:
    next_at: float
    gap: float


class ProjectPacer:
    """Per project Trove rate-limited: when the next request may go.

    Waiting threads take turns a ``gap`` apart instead of all retrying at
    the moment Trove named, which would only get most of them refused
    again.
    """

    def __init__(self, clock=time.monotonic, sleep=time.sleep):
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._paces = {}

    def wait(self, project_id):
        """Sleep until this request's turn; returns the seconds slept."""
        with self._lock:
            pace = self._paces.get(project_id)
            if pace is None:
                return 0
            now = self._clock()
            turn = max(now, pace.next_at)
            pace.next_at = turn + pace.gap
        delay = turn - now
        if delay > 0:
            self._sleep(delay)
        return max(delay, 0)

    def limited(self, project_id, retry_after):
        """Trove refused a request of ``project_id`` for ``retry_after``."""
        with self._lock:
            now = self._clock()
            pace = self._paces.get(project_id)
            if pace is None:
                pace = self._paces[project_id] = _Pace(now, FIRST_GAP)
            else:
                pace.gap = min(pace.gap * 1.5, max(retry_after, FIRST_GAP))
            pace.next_at = max(pace.next_at, now + retry_after)

    def accepted(self, project_id):
        """Trove took a request of ``project_id``: go a little faster."""
        with self._lock:
            pace = self._paces.get(project_id)
            if pace is not None:
                pace.gap *= 0.95
                if pace.gap < SMALLEST_GAP:
                    del self._paces[project_id]
