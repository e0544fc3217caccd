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
"""Every backend open to project members, for tests of other things.

By default a cloud offers only ``trove`` (``local`` without Keystone), and
``local`` and ``fake`` are admin-only (``policies/backend.py``).  Tests of
the scheduler itself give their policies the fake backend as a member
would: they enable every backend and open its rule, as an operator of a
test cloud would, with ``[api] enabled_backends`` and a policy file.
"""

import json
import os

import fixtures
from oslo_policy import opts as policy_opts

from dbaas_scheduler.policies import backend as backend_rules
from dbaas_scheduler import policy

ALL = ('fake', 'local', 'trove')

# Whoever may create a policy (the create rule still applies) may give it
# any backend and instance.
OPEN_RULES = {backend_rules.rule_name(name): '@' for name in ALL}
OPEN_RULES[backend_rules.LOCAL_ANY_INSTANCE] = '@'


def write_policy_file(directory):
    """Write the open rules to ``directory``; return the file's path."""
    path = os.path.join(directory, 'open-backends-policy.json')
    with open(path, 'w') as stream:
        json.dump(OPEN_RULES, stream)
    return path


def config_sections(directory):
    """Config sections (``process_fixtures.write_config``) that open them.

    The policy file is written to ``directory``.
    """
    return {'api': {'enabled_backends': ','.join(ALL)},
            'oslo_policy': {'policy_file': write_policy_file(directory)}}


class OpenBackends(fixtures.Fixture):
    """Every backend enabled and open to members, in this process's conf.

    The enforcer is made anew from ``conf`` (and again after the test).
    """

    def __init__(self, conf):
        super().__init__()
        self.conf = conf

    def _setUp(self):
        directory = self.useFixture(fixtures.TempDir()).path
        policy_opts.set_defaults(self.conf)
        self.conf.set_override('policy_file', write_policy_file(directory),
                               group='oslo_policy')
        self.conf.set_override('enabled_backends', list(ALL), group='api')
        self.addCleanup(self.conf.clear_override, 'policy_file',
                        group='oslo_policy')
        self.addCleanup(self.conf.clear_override, 'enabled_backends',
                        group='api')
        policy.reset()
        self.addCleanup(policy.reset)
        policy.get_enforcer(self.conf)
