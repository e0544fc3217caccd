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
"""Authorizing a request on a resource of a project, or hiding it."""

import types

from oslo_policy import policy as oslo_policy

from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler import exception
from dbaas_scheduler import policy
from dbaas_scheduler.tests import base

# A rule of this test's own, so that the test holds whatever the
# service's defaults become.
RULE = 'test:owned'


class TestAuthorizeOwned(base.TestCase):

    def setUp(self):
        super().setUp()
        policy.reset()
        self.addCleanup(policy.reset)
        policy.get_enforcer(self.conf).register_default(
            oslo_policy.RuleDefault(
                RULE, 'role:reader and project_id:%(project_id)s'))
        self.not_found = exception.ExecutionNotFound(execution_id='e-1')

    def authorize(self, roles, owner):
        context = dbaas_context.RequestContext(project_id='project-a',
                                               roles=roles)
        policy.authorize_owned(context, RULE,
                               types.SimpleNamespace(project_id=owner),
                               self.not_found)

    def test_allowed(self):
        self.authorize(['reader'], 'project-a')

    def test_refused_in_the_callers_project_is_forbidden(self):
        exc = self.assertRaises(exception.Forbidden, self.authorize,
                                ['member'], 'project-a')
        self.assertIn(RULE, str(exc))

    def test_refused_in_another_project_is_not_found(self):
        # Not Forbidden: that would tell the caller the resource exists.
        exc = self.assertRaises(exception.NotFound, self.authorize,
                                ['reader'], 'project-b')
        self.assertIs(self.not_found, exc)
