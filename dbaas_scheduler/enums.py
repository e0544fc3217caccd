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
    # Its backup could not start within the slot's start window
    # (doc/source/user/windows.rst); nothing was taken for it.
    EXPIRED = 'EXPIRED'

    ALL = (PENDING, DISPATCHED, RUNNING, SUCCEEDED, FAILED, SKIPPED, EXPIRED)
    # Waiting for a worker to claim it.
    WAITING = (PENDING, DISPATCHED)
    FINISHED = (SUCCEEDED, FAILED, SKIPPED, EXPIRED)
    # The outcomes that count as a failure of the policy: they lengthen
    # its streak of consecutive failures (pause_after_failures, the
    # protection state).  SKIPPED is no outcome: it neither lengthens nor
    # ends a streak.
    FAILED_OUTCOMES = (FAILED, EXPIRED)
    # The outcomes a streak is made of: a success ends it.
    OUTCOMES = (SUCCEEDED,) + FAILED_OUTCOMES


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


class Protection:
    """How fresh a policy's newest successful backup is (its RPO)."""

    OK = 'ok'
    AT_RISK = 'at_risk'
    BREACHED = 'breached'

    ALL = (OK, AT_RISK, BREACHED)


class BackupState:
    """What retention decided about an execution's backup (NULL: none)."""

    EXPIRING = 'expiring'
    DELETING = 'deleting'
    DELETED = 'deleted'

    ALL = (EXPIRING, DELETING, DELETED)


class RestoreStatus:
    """Lifecycle of a restore of a backup (doc/source/user/restoring.rst)."""

    PENDING = 'PENDING'
    RUNNING = 'RUNNING'
    SUCCEEDED = 'SUCCEEDED'
    FAILED = 'FAILED'
    # A verification whose backup was deleted (by retention or by the
    # user) while it ran: nothing was learnt about the backup.
    CANCELLED = 'CANCELLED'

    ALL = (PENDING, RUNNING, SUCCEEDED, FAILED, CANCELLED)
    FINISHED = (SUCCEEDED, FAILED, CANCELLED)


class RestoreKind:
    """Why a restore is made: a user asked, or a scheduled verification."""

    RESTORE = 'restore'
    VERIFY = 'verify'

    ALL = (RESTORE, VERIFY)


class VerifyResult:
    """What a verification found (an execution's ``verify_result``)."""

    PASSED = 'passed'
    FAILED = 'failed'

    ALL = (PASSED, FAILED)
