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
"""Admin > Backup Scheduler: what an operator looks at first.

The services and their heartbeats, the fleet's health (policies whose
last run failed, paused policies, policies late for their slot) and every
project's policies.
"""

import datetime

from django.utils.translation import gettext_lazy as _
from horizon import exceptions
from horizon import tables as horizon_tables

from dbaas_scheduler_dashboard.api import scheduler
from dbaas_scheduler_dashboard.content.backup_policies import (
    tables as project_tables)
from dbaas_scheduler_dashboard.content.backup_scheduler import tables
from dbaas_scheduler_dashboard import utils

# A policy whose next slot is this far in the past is late: the engine
# should have dispatched it.
LATE_AFTER = datetime.timedelta(minutes=5)


def health(policies, now=None):
    """Counts of failing, paused and late policies."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    failing = paused = late = 0
    for policy in policies:
        if not policy.enabled:
            paused += 1
        execution = policy.last_execution
        if execution is not None and execution.status == 'FAILED':
            failing += 1
        slot = utils.parse_time(policy.next_execution_time)
        if policy.enabled and slot is not None and slot < now - LATE_AFTER:
            late += 1
    return {'total': len(policies), 'failing': failing, 'paused': paused,
            'late': late}


class IndexView(horizon_tables.MultiTableView):
    table_classes = (tables.ServicesTable, tables.AllPoliciesTable)
    template_name = 'admin/backup_scheduler/index.html'
    page_title = _('Backup Scheduler')

    def get_services_data(self):
        try:
            return scheduler.service_list(self.request)
        except Exception:
            exceptions.handle(self.request,
                              _('Unable to list the scheduler services.'))
            return []

    def get_all_policies_data(self):
        try:
            policies = scheduler.policy_list(self.request, all_projects=True)
        except Exception:
            exceptions.handle(self.request,
                              _('Unable to list the backup policies.'))
            return []
        project_tables.attach_last_executions(self.request, policies,
                                              all_projects=True)
        self._policies = policies
        return policies

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context['health'] = health(getattr(self, '_policies', []))
        services = context['services_table'].data
        context['services_down'] = sum(
            1 for service in services if service.state != 'up')
        return context
