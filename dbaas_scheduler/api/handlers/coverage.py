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
"""Handler of the coverage report: GET /v1/coverage."""

import webob.dec

from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import coverage as schema
from dbaas_scheduler.api import util
from dbaas_scheduler.objects import coverage as coverage_obj
from dbaas_scheduler.policies import coverage as rules
from dbaas_scheduler import policy


@microversion.since(schema.SINCE)
@webob.dec.wsgify
def show_coverage(req):
    """GET /v1/coverage: every instance of the project and its protection.

    200 (a backend that could not list a project's instances is named in
    ``incomplete``, the rest of the report stands); 400 for an unknown or
    invalid query parameter; 401; 403 when a rule refuses the report or
    ``all_projects``.
    """
    context, conf = util.context_of(req), util.conf_of(req)
    params = util.query_params(req, schema.REPORT_QUERY)
    project_id = policy.authorize_list(context, rules.GET,
                                       rules.GET_ALL_PROJECTS,
                                       params.get('all_projects'))
    found = coverage_obj.report(context, conf, project_id=project_id,
                                state=params.get('state'))
    # The JSON of every instance (its times are text already): again
    # many small objects, none in a cycle.
    with coverage_obj.no_collection():
        return util.json_response({'coverage': found})
