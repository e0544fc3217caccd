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
"""Service rows: each engine, worker and API process registers and beats.

Every process has its own row (several engines may share a host), whose id
is also what a worker writes as the ``owner`` of the executions it runs.
A registration is made in the process it stands for, after the launcher's
fork: a child started again after a crash gets a new id and a new row.

A row also records which process it stands for, as a
:class:`ProcessIdentity`: the kernel's boot id, the pid namespace, the pid
and the process's start time.  A process on the same host (same boot, same
pid namespace) can then tell for certain that the process of a row is
gone -- no such pid, or a pid the kernel has given to another process
since -- without waiting for its heartbeat or its leases to run out
(``worker/orphans.py``).  Anywhere else it cannot tell, and does not try.

Each heartbeat also writes the process's own metrics (those of
:mod:`dbaas_scheduler.stats` the service names) as JSON into the row's
``stats``, for the API's metrics endpoint to read.
"""

import datetime
import json
import os
import typing

from oslo_db import exception as db_exc
from oslo_log import log as logging
from oslo_utils import timeutils
from oslo_utils import uuidutils

from dbaas_scheduler.db import services as db_services
from dbaas_scheduler import stats as process_stats

LOG = logging.getLogger(__name__)

_BOOT_ID = '/proc/sys/kernel/random/boot_id'

# What ProcessIdentity.judge answers.
ALIVE = 'alive'
GONE = 'gone'
UNKNOWN = 'unknown'     # another boot, pid namespace or host: cannot tell


def _read(path):
    try:
        with open(path) as stream:
            return stream.read().strip()
    except OSError:
        return None


def boot_id():
    """This boot of the kernel (a UUID), or None without /proc."""
    return _read(_BOOT_ID)


def pid_namespace():
    """This process's pid namespace (``pid:[<inode>]``), or None."""
    try:
        return os.readlink('/proc/self/ns/pid')
    except OSError:
        return None


def process_stat(pid):
    """``(state, start time in ticks since boot)`` of ``pid``, or None."""
    text = _read('/proc/%d/stat' % pid)
    if text is None:
        return None
    # "pid (comm) state ...": the command name may hold spaces and ")".
    fields = text.rpartition(')')[2].split()
    try:
        return fields[0], int(fields[19])
    except (IndexError, ValueError):
        return None


class ProcessIdentity(typing.NamedTuple):
    """Which process, on which boot of which kernel, in which pid space."""

    boot_id: str
    pid_namespace: str
    pid: int
    start_time: int

    SEPARATOR = ' '

    @classmethod
    def of(cls, pid=None):
        """The identity of process ``pid`` (this one), or None if unknown."""
        pid = os.getpid() if pid is None else pid
        boot, namespace = boot_id(), pid_namespace()
        stat = process_stat(pid)
        if not boot or not namespace or stat is None:
            return None
        return cls(boot, namespace, pid, stat[1])

    def __str__(self):
        return self.SEPARATOR.join((self.boot_id, self.pid_namespace,
                                    str(self.pid), str(self.start_time)))

    @classmethod
    def parse(cls, text):
        """The identity written by ``str()``, or None if it is not one."""
        try:
            boot, namespace, pid, start = (text or '').split(cls.SEPARATOR)
            identity = cls(boot, namespace, int(pid), int(start))
        except ValueError:
            return None
        return identity if identity.pid > 0 else None

    def judge(self):
        """Whether this process still runs: ALIVE, GONE or UNKNOWN.

        GONE only where it is certain: on this very boot and in this pid
        namespace, the pid is free, or a zombie, or a process that started
        at another time (the pid was reused).  On another boot the process
        is gone too, but its host may not be this one (a row names its
        host as configured, and hosts may share a name): UNKNOWN.
        """
        if (self.boot_id != boot_id()
                or self.pid_namespace != pid_namespace()):
            return UNKNOWN
        stat = process_stat(self.pid)
        if stat is None:
            # No /proc entry: no such process -- unless /proc hides other
            # users' processes (hidepid), which the kernel tells apart.
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return GONE
            except PermissionError:
                pass
            return UNKNOWN
        state, start = stat
        if state in ('Z', 'X', 'x') or start != self.start_time:
            return GONE
        return ALIVE


class ServiceRegistration:
    """This process's row in the service table."""

    def __init__(self, conf, context, binary, topic=None, stats_metrics=(),
                 registry=None):
        self.conf = conf
        self.context = context
        self.binary = binary
        self.topic = topic
        self.service_id = uuidutils.generate_uuid()
        self.registered = False
        # Made in the process the row stands for (after the fork).
        identity = ProcessIdentity.of()
        self.identity = str(identity) if identity else None
        # The names of the process's metrics this row carries.
        self.stats_metrics = tuple(stats_metrics)
        self.registry = registry or process_stats.REGISTRY

    def stats(self):
        """The JSON of this service's metrics now; None if it has none."""
        if not self.stats_metrics:
            return None
        try:
            return json.dumps(self.registry.snapshot(self.stats_metrics),
                              separators=(',', ':'), sort_keys=True)
        except Exception:
            # Figures are never worth a missed heartbeat.
            LOG.exception('Could not serialise the metrics of %s',
                          self.service_id)
            return None

    def _values(self, now):
        return {'id': self.service_id, 'host': self.conf.host,
                'binary': self.binary, 'topic': self.topic,
                'pid': os.getpid(), 'process_identity': self.identity,
                'started_at': now, 'heartbeat_at': now,
                'stats': self.stats()}

    def register(self):
        self._insert(timeutils.utcnow(True))
        self.registered = True
        LOG.info('Registered %s service %s on %s (pid %d)', self.binary,
                 self.service_id, self.conf.host, os.getpid())

    def _insert(self, now):
        try:
            db_services.register_service(self.context, self._values(now))
        except db_exc.DBDuplicateEntry:
            # The id is this process's alone, so the row is ours: an
            # earlier insert committed but its answer was lost with the
            # connection.  Stamp it instead of failing on every beat.
            db_services.update_service_heartbeat(
                self.context, self.service_id, now, stats=self.stats())

    def heartbeat(self):
        """Stamp the row; recreate it if it was expired while we were away.

        The row's ``stats`` are written anew with each beat.
        """
        now = timeutils.utcnow(True)
        if not self.registered:
            self.register()
        elif not db_services.update_service_heartbeat(
                self.context, self.service_id, now, stats=self.stats()):
            LOG.warning('Service row %s had expired; registering again',
                        self.service_id)
            self._insert(now)

    def unregister(self):
        if self.registered:
            db_services.delete_service(self.context, self.service_id)
            self.registered = False


def is_up(service, now, service_down_time):
    """A service is up if its last heartbeat is recent enough."""
    return (now - service.heartbeat_at
            <= datetime.timedelta(seconds=service_down_time))
