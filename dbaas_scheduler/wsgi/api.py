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
"""The REST API's WSGI application: ``dbaas_scheduler.wsgi.api:application``.

Importing this module reads the configuration (see
:mod:`dbaas_scheduler.wsgi`); import it only in the process that serves
the API.
"""

from dbaas_scheduler import wsgi

application = wsgi.init_application()
