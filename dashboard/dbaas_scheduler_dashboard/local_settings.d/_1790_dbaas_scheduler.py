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
# Copy into openstack_dashboard/local/local_settings.d/: Horizon reads the
# service's policy rules from the file this package installs, so that it
# shows a user only the actions the API would allow.
import os as _os

import dbaas_scheduler_dashboard as _dashboard

POLICY_FILES['backup-scheduler'] = _os.path.join(  # noqa: F821
    _os.path.dirname(_dashboard.__file__), 'conf',
    'dbaas_scheduler_policy.yaml')
