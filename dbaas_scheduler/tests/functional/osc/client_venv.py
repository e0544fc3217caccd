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
"""A virtualenv with the client and the OpenStack client, not the service.

The CLI tests run the ``openstack`` program of a virtualenv that holds
only python-dbaas-schedulerclient (built from ``client/`` of this
repository, as ``pip install ./client`` builds it) and
python-openstackclient: a command that needed the service's code, or a
module the client's packaging left out, fails there as it would for a
user.  The virtualenv is built by the first test that needs it, under
``.tox/cli-client`` (``DBAAS_SCHEDULER_TEST_CLIENT_VENV`` names another
place), and kept between runs; when a file of ``client/`` changes (a
stamp holds their hash) the client is installed again.  A lock keeps the
test processes of one run from building it at the same time.
"""

import fcntl
import hashlib
import os
import subprocess
import sys

import dbaas_scheduler

# pip may take minutes on a busy machine: python-openstackclient and its
# dependencies are some 60 packages.
BUILD_TIMEOUT = 900
_SKIPPED_DIRS = ('__pycache__', 'build', 'dist', '.stestr')


def repository():
    """The checkout the service runs from; it holds ``client/``."""
    top = os.path.dirname(os.path.dirname(os.path.abspath(
        dbaas_scheduler.__file__)))
    if not os.path.isfile(os.path.join(top, 'client', 'pyproject.toml')):
        raise RuntimeError(
            'The CLI tests build the client from client/ of the checkout; '
            '%s has none: install the service from the checkout in '
            'development mode (pip install -e .), as tox does.' % top)
    return top


def _client_hash(client_dir):
    digest = hashlib.sha256()
    for directory, dirs, files in os.walk(client_dir):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS
                         and not d.endswith('.egg-info'))
        for name in sorted(files):
            if name.endswith('.pyc'):
                continue
            path = os.path.join(directory, name)
            digest.update(os.path.relpath(path, client_dir).encode())
            with open(path, 'rb') as stream:
                digest.update(stream.read())
    return digest.hexdigest()


def _run(argv):
    result = subprocess.run(argv, capture_output=True, text=True,
                            timeout=BUILD_TIMEOUT)
    if result.returncode != 0:
        raise RuntimeError('%s failed (%d):\n%s%s' % (
            ' '.join(argv), result.returncode, result.stdout[-3000:],
            result.stderr[-3000:]))


def ensure():
    """The virtualenv's directory, built or brought up to date."""
    top = repository()
    path = os.environ.get('DBAAS_SCHEDULER_TEST_CLIENT_VENV') or os.path.join(
        top, '.tox', 'cli-client')
    client_dir = os.path.join(top, 'client')
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + '.lock', 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = os.path.join(path, 'client.sha256')
        wanted = _client_hash(client_dir)
        try:
            with open(stamp) as stream:
                if stream.read() == wanted:
                    return path
        except FileNotFoundError:
            pass
        pip = os.path.join(path, 'bin', 'pip')
        if not os.path.exists(pip):
            # The interpreter the service runs on, not its virtualenv.
            _run([getattr(sys, '_base_executable', sys.executable), '-m',
                  'venv', '--clear', path])
        # pip installs a local directory again even at the same version.
        _run([pip, 'install', '--quiet', '--disable-pip-version-check',
              client_dir, 'python-openstackclient'])
        with open(stamp, 'w') as stream:
            stream.write(wanted)
    return path
