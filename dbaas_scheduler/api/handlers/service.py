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
"""Handler of /v1/services: the cluster view, for administrators."""

from oslo_utils import timeutils
import webob.dec

from dbaas_scheduler.api import util
from dbaas_scheduler.objects import service as service_obj
from dbaas_scheduler.policies import service as rules
from dbaas_scheduler import policy
from dbaas_scheduler import servicegroup


def serialize(conf, service, now):
    body = service_obj.as_dict(service)
    for field in ('started_at', 'heartbeat_at'):
        body[field] = util.isotime(body[field])
    body['state'] = ('up' if servicegroup.is_up(service, now,
                                                conf.service_down_time)
                     else 'down')
    return body


@webob.dec.wsgify
def list_services(req):
    """GET /v1/services: every process of the cluster, up or down.

    A service is up while its heartbeat is younger than
    ``service_down_time``.  200; 400 for any query parameter (it takes
    none); 401; 403 when a rule refuses it (administrators only, by
    default).
    """
    context, conf = util.context_of(req), util.conf_of(req)
    util.query_params(req, {})
    policy.authorize(context, rules.LIST,
                     {'project_id': context.project_id})
    now = timeutils.utcnow(True)
    items = [serialize(conf, row, now)
             for row in service_obj.list_services(context)]
    return util.json_response({'services': items})
