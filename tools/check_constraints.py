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
"""Check that requirements.txt is installed at OpenStack's constraints.

Run by ``tox -e upper`` with the python of its virtualenv::

    python tools/check_constraints.py tools/upper-constraints.txt

For each requirement of ``requirements.txt``: its lower bound must not be
above the release's constraint (else the service cannot be installed with
that release), and the version installed must be the constraint (else the
tests do not test what the release ships).  A requirement the constraints
do not name is listed, not refused.
"""

from importlib import metadata
import re
import sys

from packaging import markers
from packaging import version

_REQUIREMENT = re.compile(
    r'^(?P<name>[A-Za-z0-9._-]+)(?:\[[^\]]*\])?\s*>=\s*(?P<low>[^,;#\s]+)')
_CONSTRAINT = re.compile(
    r'^(?P<name>[A-Za-z0-9._-]+)===(?P<version>[^;\s]+)'
    r'\s*(?:;(?P<marker>.*))?$')


def _key(name):
    return re.sub(r'[-_.]+', '-', name).lower()


def lower_bounds(path):
    bounds = {}
    with open(path) as stream:
        for line in stream:
            match = _REQUIREMENT.match(line.strip())
            if match:
                bounds[match.group('name')] = match.group('low')
    return bounds


def constraints(path):
    """{normalised name: version} for this interpreter's markers."""
    pinned = {}
    with open(path) as stream:
        for line in stream:
            match = _CONSTRAINT.match(line.strip())
            if not match:
                continue
            marker = match.group('marker')
            if marker and not markers.Marker(marker).evaluate():
                continue
            pinned[_key(match.group('name'))] = match.group('version')
    return pinned


def main(argv):
    pinned = constraints(argv[0])
    problems = []
    for name, low in sorted(lower_bounds('requirements.txt').items()):
        constraint = pinned.get(_key(name))
        installed = metadata.version(name)
        print('%-24s lower bound %-10s constraint %-10s installed %s' % (
            name, low, constraint or '-', installed))
        if constraint is None:
            continue
        if version.Version(low) > version.Version(constraint):
            problems.append('%s: the lower bound %s is above the release\'s '
                            'constraint %s' % (name, low, constraint))
        elif installed != constraint:
            problems.append('%s: %s is installed, not the constraint %s'
                            % (name, installed, constraint))
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
