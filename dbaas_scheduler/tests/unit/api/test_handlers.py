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
"""The handlers' docstrings name their route and the statuses it answers."""

import re

from oslotest import base

from dbaas_scheduler.api import handler
from dbaas_scheduler.api import openapi


class TestDocstrings(base.BaseTestCase):

    def test_each_handler_says_its_route_and_statuses(self):
        # The OpenAPI document's statuses are the contract; a docstring
        # that leaves one out, or names another route, has drifted.
        wrong = []
        for (method, path), operation in openapi.OPERATIONS.items():
            targets = handler.ROUTE_DECLARATIONS.get(path)
            if targets is None:
                # Mounted outside the routes (the health check).
                continue
            target = targets[method]
            doc = getattr(target, 'func', target).__doc__ or ''
            if not doc.startswith('%s %s' % (method, path)):
                wrong.append('%s %s: the docstring does not start with '
                             'its route' % (method, path))
            named = set(int(code)
                        for code in re.findall(r'\b[1-5]\d\d\b', doc))
            statuses = {operation['success']} | set(operation['errors'])
            if named != statuses:
                wrong.append('%s %s: the docstring names %s, the OpenAPI '
                             'document %s' % (method, path, sorted(named),
                                              sorted(statuses)))
        self.assertEqual([], wrong)
