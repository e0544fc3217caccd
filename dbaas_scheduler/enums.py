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
"""Enumerated values of the domain, as they are stored in the database."""


class ExecutionStatus:
    """Lifecycle of a backup execution (exactly-once.rst, "Data model")."""

    PENDING = 'PENDING'
    DISPATCHED = 'DISPATCHED'
    RUNNING = 'RUNNING'
    SUCCEEDED = 'SUCCEEDED'
    FAILED = 'FAILED'
    SKIPPED = 'SKIPPED'

    ALL = (PENDING, DISPATCHED, RUNNING, SUCCEEDED, FAILED, SKIPPED)
    # Waiting for a worker to claim it.
    WAITING = (PENDING, DISPATCHED)
    FINISHED = (SUCCEEDED, FAILED, SKIPPED)


class ExecutionTrigger:
    """Why an execution exists."""

    SCHEDULE = 'schedule'
    MANUAL = 'manual'
    BACKFILL = 'backfill'

    ALL = (SCHEDULE, MANUAL, BACKFILL)


class OverlapPolicy:
    """What a new execution does while another one of its instance runs."""

    SKIP = 'skip'
    QUEUE = 'queue'

    ALL = (SKIP, QUEUE)
