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
"""The ``trove`` backend: backups through the Trove v1.0 REST API.

The modules, by job:

* :mod:`.backend` -- :class:`TroveBackend`, the backend interface;
* :mod:`.client` -- the keystoneauth1 session, adapters and endpoints, and
  one request with its transport errors classified;
* :mod:`.views` -- Trove's JSON as our ``Backup`` objects, and the bodies
  of our requests;
* :mod:`.errors` -- Trove's error answers as our backend exceptions;
* :mod:`.scratch` -- verifications: a scratch instance restored from the
  backup, watched and deleted.
"""
