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
"""What the trove backend's unit tests share: Trove's answers, a policy."""

import json
import types

import requests

INSTANCE = '44b277eb-39be-4921-be31-3d61b43651d7'

# api-ref/source/samples/backup-get-response.json of openstack/trove.
TROVE_BACKUP = {
    'created': '2014-10-30T12:30:00',
    'datastore': {'type': 'mysql', 'version': '5.5',
                  'version_id': 'b00000b0-00b0-0b00-00b0-000b000000bb'},
    'description': 'My Backup',
    'id': 'a9832168-7541-4536-b8d9-a8a9b79cf1b4',
    'instance_id': INSTANCE,
    'locationRef': 'http://localhost/path/to/backup',
    'name': 'snapshot',
    'parent_id': None,
    'size': 0.14,
    'status': 'COMPLETED',
    'updated': '2014-10-30T12:30:00',
    'storage_driver': 'cinder',
}


def make_policy(**backup_params):
    return types.SimpleNamespace(
        id='policy-1', instance_id=INSTANCE, project_id='project-1',
        backup_params=backup_params or None)


def make_response(status, body=None, content_type='application/json',
                  reason=None):
    response = requests.Response()
    response.status_code = status
    response.reason = reason
    if body is not None:
        response._content = (body.encode() if isinstance(body, str)
                             else json.dumps(body).encode())
        response.headers['Content-Type'] = content_type
    else:
        response._content = b''
    return response
