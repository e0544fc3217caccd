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
"""Run dbaas-scheduler programs as real processes, with their own config."""

import configparser
import os
import signal
import subprocess
import sys
import time

import fixtures


def write_config(path, sections):
    """Write an oslo.config file: {'group': {'option': value}}."""
    parser = configparser.ConfigParser(interpolation=None)
    for group, options in sections.items():
        parser[group] = {name: str(value) for name, value in options.items()}
    with open(path, 'w') as stream:
        parser.write(stream)


class ServiceProcess(fixtures.Fixture):
    """One program (``dbaas_scheduler.cmd.<module>``) in its own session.

    ``kill()`` signals the whole process group: the oslo.service launcher
    runs the service in a forked child, and a crash of the host takes both.
    """

    def __init__(self, module, config_file, log_file):
        super().__init__()
        self.module = module
        self.config_file = config_file
        self.log_file = log_file
        self.process = None
        # Killed on purpose by the test (not a crash).
        self.killed = False

    def _setUp(self):
        self.start()
        self.addCleanup(self.kill, signal.SIGKILL)

    def start(self):
        self.killed = False
        code = ('import sys; from dbaas_scheduler.cmd import %s as m; '
                'sys.exit(m.main())' % self.module)
        log = open(self.log_file, 'ab')
        self.process = subprocess.Popen(
            [sys.executable, '-c', code, '--config-file', self.config_file],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()

    def kill(self, sig=signal.SIGKILL):
        self.killed = True
        if self.process is None or self.process.poll() is not None:
            return
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            return
        if sig == signal.SIGKILL:
            self.process.wait()

    def terminate(self, timeout=60):
        """SIGTERM the launcher and wait; returns the exit status."""
        self.killed = True
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def restart(self):
        self.kill(signal.SIGKILL)
        self.start()

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def log(self):
        with open(self.log_file, errors='replace') as stream:
            return stream.read()


def wait_until(predicate, timeout, interval=0.1):
    """Poll ``predicate`` until it is true; return its last value."""
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value or time.time() >= deadline:
            return value
        time.sleep(interval)
