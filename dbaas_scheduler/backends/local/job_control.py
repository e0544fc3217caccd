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
"""The worker's side of the dump jobs: starting, judging and stopping them.

A job is started before its manifest exists and only let go once the
manifest naming its pid is on disk (see :mod:`.job`).  Whether a job still
runs is judged by its pid and the pid's start time from ``/proc``, so that
any process on the host can tell, not only the one that started it.

Each job is watched by a thread that calls ``on_exit(backup_id)`` as soon
as the job has ended (the job writes its final manifest before it exits):
jobs this process started are waited for, and jobs an earlier worker of
this host started are watched through a pidfd (Linux), so that a worker
restarted mid-backup still learns at once that the backup ended.
"""

import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

from oslo_log import log as logging

from dbaas_scheduler.backends.local import files
from dbaas_scheduler.backends.local import job
from dbaas_scheduler.backends.local import manifests

LOG = logging.getLogger(__name__)

# Seconds stop() waits for a job it killed to be gone.
_KILL_WAIT = 10


def _proc_stat(pid):
    """(state, start time in ticks since boot) from /proc; None if absent."""
    try:
        with open('/proc/%d/stat' % pid) as stream:
            text = stream.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself hold spaces.
    fields = text.rpartition(')')[2].split()
    return fields[0], int(fields[19])


def process_start_time(pid):
    """When ``pid`` started (ticks since boot), or None where unknown.

    Recorded with the pid, so that a pid the kernel handed to another
    process since is not mistaken for the job.
    """
    stat = _proc_stat(pid)
    return None if stat is None else stat[1]


def job_alive(pid, started=None):
    """Whether the job process ``pid`` (started at ``started``) still runs.

    A zombie has finished; a process with another start time is not the
    job but a later one that was given the same pid.
    """
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    stat = _proc_stat(pid)
    if stat is None:
        # Either no /proc on this system (trust kill), or the process
        # exited between the two looks.
        return not os.path.exists('/proc/self/stat')
    state, start = stat
    if state in ('Z', 'X', 'x'):
        return False
    return started is None or start == started


class JobControl:
    """The job processes of one backend: started, reaped, judged, stopped."""

    def __init__(self, on_exit=None):
        # Jobs this process started, by backup id: reaped as they end, so
        # that a long-lived worker does not collect zombies.
        self._jobs = {}
        self._jobs_lock = threading.Lock()
        self._on_exit = on_exit
        # Backup ids whose job a thread watches.
        self._watched = set()

    def _exited(self, backup_id):
        with self._jobs_lock:
            self._watched.discard(backup_id)
        if self._on_exit is not None:
            self._on_exit(backup_id)

    def _watch_thread(self, backup_id, wait):
        with self._jobs_lock:
            if backup_id in self._watched:
                return
            self._watched.add(backup_id)

        def run():
            try:
                wait()
            except Exception:
                LOG.debug('Watching the job of backup %s failed',
                          backup_id, exc_info=True)
            self._exited(backup_id)

        threading.Thread(target=run, daemon=True,
                         name='local-job-%s' % backup_id[:8]).start()

    def watch(self, manifest):
        """Call ``on_exit`` once the job of ``manifest`` (of this host) ends.

        For a job another process started; best effort: where a pidfd
        cannot be had, the worker's poll sees the job end.
        """
        if self._on_exit is None or not hasattr(os, 'pidfd_open'):
            return
        backup_id = manifest['id']
        with self._jobs_lock:
            if backup_id in self._watched or backup_id in self._jobs:
                return
        try:
            fd = os.pidfd_open(manifest['pid'])
        except (OSError, KeyError, TypeError):
            return
        # Opened, then judged: the pidfd names the job, not a later
        # process given its pid.
        if not job_alive(manifest['pid'], manifest.get('pid_started')):
            os.close(fd)
            return

        def wait():
            try:
                select.select([fd], [], [])
            finally:
                os.close(fd)

        self._watch_thread(backup_id, wait)

    def start(self, directory, backup_id, orders, make_manifest):
        """Start the job, record its manifest, then let it go.

        ``orders`` go to the job's stdin; ``make_manifest(pid,
        pid_started)`` is the manifest to record.  Returns that manifest.
        """
        manifest_path = files.manifest_path(directory, backup_id)
        log_path = files.log_path(directory, backup_id)
        log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND,
                         0o600)
        try:
            process = subprocess.Popen(
                [sys.executable, '-m', job.__name__, manifest_path],
                stdin=subprocess.PIPE, stdout=log_fd, stderr=log_fd,
                cwd=directory, bufsize=0, start_new_session=True)
        finally:
            os.close(log_fd)
        try:
            process.stdin.write(json.dumps(orders).encode('utf-8') + b'\n')
            manifest = make_manifest(process.pid,
                                     process_start_time(process.pid))
            manifests.write_manifest(manifest_path, manifest)
        except BaseException:
            # No manifest, no backup: the job must not make one.
            process.kill()
            process.wait()
            files.remove(manifest_path)
            files.remove(log_path)
            raise
        with self._jobs_lock:
            self._jobs[backup_id] = process
        try:
            process.stdin.write(job.START + b'\n')
            process.stdin.close()
        except OSError:
            # The job is already gone; the manifest will say FAILED.
            pass
        if self._on_exit is not None:
            self._watch_thread(backup_id, process.wait)
        return manifest

    def reap(self):
        """Forget (and wait for) the jobs of this process that ended."""
        with self._jobs_lock:
            for backup_id, process in list(self._jobs.items()):
                if process.poll() is not None:
                    del self._jobs[backup_id]

    def running(self, manifest):
        """Whether the job a manifest names still runs."""
        with self._jobs_lock:
            process = self._jobs.get(manifest['id'])
        if process is not None and process.pid == manifest.get('pid'):
            return process.poll() is None
        return job_alive(manifest.get('pid'), manifest.get('pid_started'))

    def stop(self, manifest):
        """Kill the job a manifest names; False if it does not stop."""
        pid = manifest['pid']
        LOG.info('Stopping job process %(pid)d of local backup %(backup)s '
                 'to delete it.', {'pid': pid, 'backup': manifest['id']})
        try:
            # The job leads its own session: the dump tool dies with it.
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            return True
        deadline = time.monotonic() + _KILL_WAIT
        while self.running(manifest):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True
