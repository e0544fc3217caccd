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
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

import fixtures
from testtools import content


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


def terminate_all(processes, timeout=60):
    """SIGTERM every process at once, then wait; their exit statuses."""
    for process in processes:
        process.killed = True
        process.process.send_signal(signal.SIGTERM)
    return [process.process.wait(timeout) for process in processes]


def wait_until(predicate, timeout, interval=0.1):
    """Poll ``predicate`` until it is true; return its last value."""
    deadline = time.time() + timeout
    while True:
        value = predicate()
        if value or time.time() >= deadline:
            return value
        time.sleep(interval)


class AllInOneProcessMixin:
    """dbaas-scheduler-all as a process of a test, and its REST API.

    The test writes the process's config file, with ``self.port`` as
    ``[api] bind_port``, and calls :meth:`start_all_in_one`: the process
    is killed at cleanup and its log (``all.log`` beside the config file)
    is attached to a failure.  :meth:`request` sends JSON to the API and
    answers the status and the decoded JSON body; a test adds headers
    (noauth's project, user and roles) by overriding
    :meth:`request_headers`.
    """

    def start_all_in_one(self, config, timeout=90):
        self.process = self.useFixture(ServiceProcess(
            'all', config, os.path.join(os.path.dirname(config), 'all.log')))
        self.addOnException(self._attach_log)
        self.wait_up(timeout)

    def wait_up(self, timeout=90):
        self.assertTrue(wait_until(self._up, timeout),
                        'dbaas-scheduler-all did not answer within %d s'
                        % timeout)

    def _attach_log(self, exc_info):
        self.addDetail('all.log',
                       content.text_content(self.process.log()[-20000:]))

    def _up(self):
        try:
            return self.request_text('GET', '/')[0] == 200
        except OSError:
            return False

    def request_headers(self):
        return {'Content-Type': 'application/json'}

    def request_text(self, method, path, body=None):
        """The status and the body, as text, of one request to the API."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            'http://127.0.0.1:%d%s' % (self.port, path), data=data,
            method=method, headers=self.request_headers())
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            return error.code, error.read().decode()

    def request(self, method, path, body=None):
        """The status and the JSON body (None if empty) of one request."""
        status, text = self.request_text(method, path, body)
        return status, json.loads(text or 'null')
