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
"""Every policy rule of the API (the ``oslo.policy.policies`` entry point)."""

import itertools

from dbaas_scheduler.policies import backend
from dbaas_scheduler.policies import backup_policy
from dbaas_scheduler.policies import base
from dbaas_scheduler.policies import coverage
from dbaas_scheduler.policies import execution
from dbaas_scheduler.policies import restore
from dbaas_scheduler.policies import rpc
from dbaas_scheduler.policies import schedule
from dbaas_scheduler.policies import service
from dbaas_scheduler.policies import template


def list_rules():
    return list(itertools.chain(
        base.list_rules(), backup_policy.list_rules(), backend.list_rules(),
        coverage.list_rules(),
        execution.list_rules(), restore.list_rules(), schedule.list_rules(),
        service.list_rules(), template.list_rules(), rpc.list_rules()))
