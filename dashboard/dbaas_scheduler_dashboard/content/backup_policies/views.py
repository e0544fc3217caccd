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

from django import http
from django.urls import reverse
from django.urls import reverse_lazy
from django.utils.translation import gettext_lazy as _
from django.views import generic
from horizon import exceptions
from horizon import tables as horizon_tables
from horizon.utils import memoized
from horizon import workflows as horizon_workflows

from dbaas_scheduler_dashboard.api import scheduler
from dbaas_scheduler_dashboard.content.backup_policies import tables
from dbaas_scheduler_dashboard.content.backup_policies import timeline
from dbaas_scheduler_dashboard.content.backup_policies import workflows
from dbaas_scheduler_dashboard import utils

INDEX_URL = 'horizon:project:backup_policies:index'
# Executions a policy's page shows, and the slots of its timeline.
HISTORY = 50


class IndexView(horizon_tables.DataTableView):
    table_class = tables.PoliciesTable
    template_name = 'project/backup_policies/index.html'
    page_title = _('Backup Policies')
    all_projects = False

    def get_filters(self):
        filters = {}
        field = self.table.get_filter_field()
        value = (self.table.get_filter_string() or '').strip()
        if field and value:
            if field == 'enabled':
                value = value.lower() in ('true', 'yes', '1')
            filters[field] = value
        return filters

    def get_data(self):
        try:
            policies = scheduler.policy_list(
                self.request, all_projects=self.all_projects,
                **self.get_filters())
        except Exception:
            exceptions.handle(self.request,
                              _('Unable to list backup policies.'))
            return []
        tables.attach_last_executions(self.request, policies,
                                      all_projects=self.all_projects)
        tables.attach_instance_names(self.request, policies)
        return policies


class DetailView(horizon_tables.DataTableView):
    table_class = tables.ExecutionsTable
    template_name = 'project/backup_policies/detail.html'
    page_title = '{{ policy.name }}'

    @memoized.memoized_method
    def get_policy(self):
        try:
            return scheduler.policy_get(self.request,
                                        self.kwargs['policy_id'])
        except Exception:
            exceptions.handle(self.request,
                              _('Unable to retrieve the backup policy.'),
                              redirect=reverse(INDEX_URL))

    @memoized.memoized_method
    def get_data(self):
        try:
            return scheduler.execution_list(
                self.request, policy_id=self.kwargs['policy_id'],
                limit=HISTORY)
        except Exception:
            exceptions.handle(self.request,
                              _('Unable to list the executions.'))
            return []

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        policy = self.get_policy()
        context['policy'] = policy
        tables.attach_instance_names(self.request, [policy])
        context['instance_url'] = tables.get_instance_link(policy)
        context['schedule_words'] = utils.describe_schedule(policy)
        context['retention_words'] = utils.describe_retention(policy)
        context['next_run'] = tables.get_next_run(policy)
        context['state'] = tables.get_state(policy)
        try:
            runs = scheduler.policy_next_runs(self.request, policy.id, 5)
            context['next_runs'] = [
                {'user': utils.user_time(run),
                 'policy': utils.in_zone(run, policy.timezone)}
                for run in runs['next_runs']]
        except scheduler.APIError:
            context['next_runs'] = []
        context['timeline'] = timeline.build(self.get_data())
        context['url'] = reverse(INDEX_URL)
        return context


class CreateView(horizon_workflows.WorkflowView):
    workflow_class = workflows.CreatePolicy
    page_title = _('Create Backup Policy')


class UpdateView(horizon_workflows.WorkflowView):
    workflow_class = workflows.UpdatePolicy
    page_title = _('Edit Backup Policy')
    success_url = reverse_lazy(INDEX_URL)

    @memoized.memoized_method
    def get_policy(self):
        try:
            return scheduler.policy_get(self.request,
                                        self.kwargs['policy_id'])
        except Exception:
            exceptions.handle(self.request,
                              _('Unable to retrieve the backup policy.'),
                              redirect=reverse(INDEX_URL))

    def get_initial(self):
        policy = self.get_policy()
        initial = {name: getattr(policy, name, None)
                   for name in workflows.FIELDS}
        for name in ('start_at', 'end_at'):
            initial[name] = utils.parse_time(initial[name])
        initial['policy'] = policy
        initial['policy_id'] = policy.id
        return initial


class PreviewView(generic.View):
    """JSON for the create and edit forms: the next runs of a schedule.

    Asks the API's schedule preview as the user, and answers
    ``{"runs": [{"utc", "policy"}], "example": bool}`` or, for a
    schedule the API refuses, ``{"error": its sentence, "field": ...}``
    with status 400.  The browser shows the UTC times in its own zone.
    """

    def get(self, request):
        schedule = request.GET.get('schedule', '').strip()
        timezone = request.GET.get('timezone', '').strip() or 'UTC'
        if not schedule:
            return http.JsonResponse({'runs': [], 'example': False})
        try:
            preview = scheduler.schedule_preview(
                request, schedule,
                schedule_type=request.GET.get('schedule_type') or None,
                timezone=timezone, count=5)
        except scheduler.APIError as exc:
            field = workflows.field_of(exc, ('schedule', 'timezone'))
            return http.JsonResponse(
                {'error': exc.detail, 'field': field or 'schedule'},
                status=400 if exc.status < 500 else 502)
        return http.JsonResponse({
            'runs': [{'utc': run,
                      'policy': utils.in_zone(run, preview['timezone'])}
                     for run in preview['next_runs']],
            'timezone': preview['timezone'],
            'example': bool(preview.get('example'))})
