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
"""The ``local`` backend: dumps of databases this host reaches, as files.

Instances are the names of ``[local_backend] instances``.  Every backup is
a JSON manifest ``<backup_dir>/<instance>/<backup id>.json`` and, once
COMPLETED, a gzip file next to it.  The dump itself runs in a detached
:mod:`~dbaas_scheduler.backends.local.job` process, so that a worker dying
mid-backup neither stops it nor loses it: whichever worker asks next reads
the manifest.  A manifest left BUILDING by a job that is no longer alive is
reported FAILED (and recorded so, its partial files removed).

Job liveness is judged by pid, which makes this backend host-local: only
a worker on the host that made a backup (``[DEFAULT] host``, recorded in
the manifest) judges whether its job died; on a backup directory shared
between hosts, the others report it BUILDING until its own host says.

The modules, by job:

* :mod:`.backend` -- :class:`LocalBackend`, the backend interface;
* :mod:`.commands` -- a database URL as a dump command;
* :mod:`.files` -- the names of a backup's files and how they are removed;
* :mod:`.manifests` -- the manifest format, read and written atomically;
* :mod:`.job_control` -- starting, judging and stopping job processes;
* :mod:`.job` -- the job process (``python -m``) that makes one backup;
* :mod:`.dump` -- writing the compressed dump, in the job process.

Nothing is imported here: the job process runs with ``python -m``, which
imports this package first, and must not load the backend with it.
"""
