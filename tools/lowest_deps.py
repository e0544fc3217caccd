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
"""Install the lowest versions requirements.txt allows, and prove it.

Run by ``tox -e lowest`` with the python of its virtualenv::

    python tools/lowest_deps.py

1. ``uv pip install --resolution lowest-direct -r requirements.txt -e .``:
   every direct requirement at its lower bound (what they need in turn at
   the newest version that fits);
2. the test runner and fixtures the unit and trove tests use, constrained
   to what step 1 installed, so that nothing of it moves;
3. checks that each requirement is installed at exactly its lower bound:
   a bound no release has (or that cannot be installed here) fails, and
   must be raised to a version that is tested.
"""

from importlib import metadata
import os
import re
import subprocess
import sys
import tempfile

TEST_TOOLS = ['stestr>=4.0.0', 'fixtures>=4.0.0', 'oslotest>=5.0.0',
              'testtools>=2.7.0', 'testscenarios>=0.5.0',
              'testresources>=2.0.0', 'PyMySQL>=1.0.0',
              'hypothesis>=6.0.0']

_REQUIREMENT = re.compile(
    r'^(?P<name>[A-Za-z0-9._-]+)(?:\[[^\]]*\])?\s*>=\s*(?P<low>[^,;#\s]+)')


def uv(*args):
    command = [sys.executable, '-m', 'uv', 'pip'] + list(args) + [
        '--python', sys.executable]
    print('+ uv pip %s' % ' '.join(args), flush=True)
    return subprocess.run(command, check=True, capture_output=True,
                          text=True).stdout


def lower_bounds(path):
    bounds = {}
    with open(path) as stream:
        for line in stream:
            match = _REQUIREMENT.match(line.strip())
            if match:
                bounds[match.group('name')] = match.group('low')
    return bounds


def main():
    uv('install', '-q', '--resolution', 'lowest-direct', '-r',
       'requirements.txt', '-e', '.')
    pins = uv('freeze', '--exclude-editable')
    with tempfile.NamedTemporaryFile('w', suffix='.txt',
                                     delete=False) as stream:
        stream.write(pins)
    try:
        uv('install', '-q', '-c', stream.name, *TEST_TOOLS)
    finally:
        os.unlink(stream.name)
    wrong = []
    for name, low in sorted(lower_bounds('requirements.txt').items()):
        installed = metadata.version(name)
        print('%-24s lower bound %-10s installed %s' % (name, low,
                                                        installed))
        if installed != low:
            wrong.append('%s %s (bound %s)' % (name, installed, low))
    if wrong:
        print('Not at their lower bound, so the bound is untested: %s'
              % ', '.join(wrong))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
