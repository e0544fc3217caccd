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
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler.policies import service as rules
from dbaas_scheduler import policy
from dbaas_scheduler import servicegroup


@webob.dec.wsgify
def list_services(req):
    context, conf = util.context_of(req), util.conf_of(req)
    util.query_params(req, {})
    policy.authorize(context, rules.LIST,
                     {'project_id': context.project_id})
    now = timeutils.utcnow(True)
    items = [{
        'id': row.id, 'host': row.host, 'binary': row.binary,
        'topic': row.topic, 'pid': row.pid,
        'started_at': util.isotime(row.started_at),
        'heartbeat_at': util.isotime(row.heartbeat_at),
        'state': ('up' if servicegroup.is_up(row, now,
                                             conf.service_down_time)
                  else 'down'),
    } for row in db_services.list_services(context)]
    return util.json_response({'services': items})
