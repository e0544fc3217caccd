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
"""The version document and the OpenAPI document: what this API is."""

import webob.dec

from dbaas_scheduler.api import microversion
from dbaas_scheduler.api import openapi
from dbaas_scheduler.api import util


def _version_document():
    # min_version and version are the microversions served, as
    # keystoneauth's discovery reads them.
    return {
        'id': 'v1.0',
        'status': 'CURRENT',
        'min_version': str(microversion.MIN_VERSION),
        'version': str(microversion.MAX_VERSION),
        'updated': '2026-11-22T00:00:00Z',
    }


def _v1(req):
    base = util.base_url(req).rstrip('/')
    return dict(_version_document(), links=[
        {'rel': 'self', 'href': base + '/v1/'},
        {'rel': 'describedby', 'type': 'application/openapi+json',
         'href': base + openapi.OPENAPI_PATH}])


@webob.dec.wsgify
def versions(req):
    """GET /: the versions this API offers.

    200, always: no authentication is needed.
    """
    return util.json_response({'versions': [_v1(req)]})


@webob.dec.wsgify
def version_v1(req):
    """GET /v1: this version.

    200; 401 without a valid token.
    """
    return util.json_response({'version': _v1(req)})


@webob.dec.wsgify
def openapi_document(req):
    """GET /v1/openapi.json: the OpenAPI document of this API.

    200, always: no authentication is needed.
    """
    return util.json_response(openapi.document(util.base_url(req)))
