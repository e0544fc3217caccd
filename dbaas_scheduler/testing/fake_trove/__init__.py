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
"""A Trove-compatible HTTP server for tests: backups and instances in memory.

It speaks the part of the Trove v1.0 API the trove backend uses, with
Trove's request and answer shapes (openstack/trove api-ref/source/
backups.inc and instances.inc) and its error bodies
(``{"itemNotFound": {"code": 404, "message": "..."}}``)::

    GET    /v1.0/{project_id}/instances/{id}
    GET    /v1.0/{project_id}/instances
    POST   /v1.0/{project_id}/instances (restorePoint only)
    DELETE /v1.0/{project_id}/instances/{id}
    GET    /v1.0/{project_id}/backups?instance_id=&limit=&marker=
    POST   /v1.0/{project_id}/backups
    GET    /v1.0/{project_id}/backups/{id}
    DELETE /v1.0/{project_id}/backups/{id}

Instances are registered by the test.  A backup's status follows from the
clock when it is read: NEW for ``new_seconds``, BUILDING for
``build_seconds``, then its final status; no thread runs in the
background.  Like Trove, an instance with a backup in progress shows the
status BACKUP and refuses another one with 422.  Tests inject failures
(:meth:`FakeTrove.inject_failure`) and slow answers
(:meth:`FakeTrove.inject_delay`: the request is slow to be served, or
served at once and slow to be answered), and read
:attr:`FakeTrove.requests`, :meth:`FakeTrove.create_count` and
:meth:`FakeTrove.history` (every backup ever stored, deleted or not).
"""

from dbaas_scheduler.testing.fake_trove.model import BACKUP_CREATE  # noqa
from dbaas_scheduler.testing.fake_trove.model import BACKUP_DELETE  # noqa
from dbaas_scheduler.testing.fake_trove.model import BACKUP_LIST  # noqa
from dbaas_scheduler.testing.fake_trove.model import BACKUP_SHOW  # noqa
from dbaas_scheduler.testing.fake_trove.model import BackupBehaviour  # noqa
from dbaas_scheduler.testing.fake_trove.model import BackupRecord  # noqa
from dbaas_scheduler.testing.fake_trove.model import DROP  # noqa
from dbaas_scheduler.testing.fake_trove.model import INSTANCE_SHOW  # noqa
from dbaas_scheduler.testing.fake_trove.model import RecordedRequest  # noqa
from dbaas_scheduler.testing.fake_trove.model import TroveFault  # noqa
from dbaas_scheduler.testing.fake_trove.service import FakeTrove  # noqa
