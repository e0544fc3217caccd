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

from django.template import defaultfilters
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy
from django.utils.translation import pgettext_lazy
from horizon import tables

from dbaas_scheduler_dashboard.api import scheduler
from dbaas_scheduler_dashboard.api import trove
from dbaas_scheduler_dashboard import utils

RULE = 'dbaas_scheduler:backup_policy:%s'


class CreatePolicy(tables.LinkAction):
    name = 'create'
    verbose_name = _('Create Backup Policy')
    url = 'horizon:project:backup_policies:create'
    classes = ('ajax-modal',)
    icon = 'plus'
    policy_rules = (('backup-scheduler', RULE % 'create'),)


class EditPolicy(tables.LinkAction):
    name = 'edit'
    verbose_name = _('Edit Policy')
    url = 'horizon:project:backup_policies:update'
    classes = ('ajax-modal',)
    icon = 'pencil'
    policy_rules = (('backup-scheduler', RULE % 'update'),)

    def get_policy_target(self, request, datum=None):
        return {'project_id': getattr(datum, 'project_id', None)}


class _PolicyBatch(tables.BatchAction):

    def get_policy_target(self, request, datum=None):
        return {'project_id': getattr(datum, 'project_id', None)}


class PausePolicy(_PolicyBatch):
    name = 'pause'
    policy_rules = (('backup-scheduler', RULE % 'pause'),)
    icon = 'pause'

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Pause Policy', 'Pause Policies', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Paused Policy', 'Paused Policies', count)

    def allowed(self, request, datum=None):
        return datum is None or datum.enabled

    def action(self, request, obj_id):
        scheduler.policy_pause(request, obj_id)


class ResumePolicy(_PolicyBatch):
    name = 'resume'
    policy_rules = (('backup-scheduler', RULE % 'resume'),)
    icon = 'play'

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Resume Policy', 'Resume Policies', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Resumed Policy', 'Resumed Policies', count)

    def allowed(self, request, datum=None):
        return datum is None or not datum.enabled

    def action(self, request, obj_id):
        scheduler.policy_resume(request, obj_id)


class RunPolicy(_PolicyBatch):
    name = 'run'
    policy_rules = (('backup-scheduler', RULE % 'run'),)
    icon = 'bolt'

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Back Up Now', 'Back Up Now', count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Started a backup of policy',
                             'Started backups of policies', count)

    def action(self, request, obj_id):
        scheduler.policy_run(request, obj_id)


class DeletePolicy(tables.DeleteAction):
    policy_rules = (('backup-scheduler', RULE % 'delete'),)

    @staticmethod
    def action_present(count):
        return ngettext_lazy('Delete Backup Policy', 'Delete Backup Policies',
                             count)

    @staticmethod
    def action_past(count):
        return ngettext_lazy('Deleted Backup Policy',
                             'Deleted Backup Policies', count)

    def get_policy_target(self, request, datum=None):
        return {'project_id': getattr(datum, 'project_id', None)}

    def delete(self, request, obj_id):
        scheduler.policy_delete(request, obj_id)


class PolicyFilter(tables.FilterAction):
    filter_type = 'server'
    filter_choices = (('name', _('Name ='), True),
                      ('instance_id', _('Instance ID ='), True),
                      ('enabled', _('Active (true/false) ='), True))


# An execution in one of these states is still going on: its row (and the
# row of its policy) is refreshed by Horizon's ajax row update until it
# ends.  Without JavaScript the page simply shows the state it was
# rendered with.
BUSY = ('PENDING', 'DISPATCHED', 'RUNNING')
ACTIVITY_CHOICES = (('idle', True), ('busy', None))


def get_activity(item):
    """'busy' while an execution runs (a policy: its last one), else 'idle'."""
    execution = getattr(item, 'last_execution', item)
    status = getattr(execution, 'status', None)
    return 'busy' if status in BUSY else 'idle'


class UpdateRow(tables.Row):
    """A policy's row, refreshed while its last execution runs."""
    ajax = True

    def get_data(self, request, policy_id):
        try:
            policy = scheduler.policy_get(request, policy_id)
        except scheduler.APIError as exc:
            raise scheduler.not_found(exc)
        attach_last_executions(request, [policy])
        attach_instance_names(request, [policy])
        return policy


# The newest executions read in one request for a page of policies: this
# many per policy (a policy running every few minutes pushes the others'
# last runs down the list), at least LAST_EXECUTIONS_MIN; the API lowers
# a larger page to its [api] max_limit.
LAST_EXECUTIONS_PER_POLICY = 5
LAST_EXECUTIONS_MIN = 100


def attach_last_executions(request, policies, all_projects=False):
    """Set each policy's last_execution, in one request for the page.

    The API lists executions of one policy at a time, not of several:
    the newest executions of the project (of every project, with
    ``all_projects``) are read in one request, and nearly always hold
    the last one of each policy.  Only one that is not among them (a
    policy paused for long, while others ran often) is fetched on its
    own.
    """
    wanted = [policy for policy in policies if policy.last_execution_id]
    found = {}
    if len(wanted) > 1:
        limit = max(LAST_EXECUTIONS_MIN,
                    LAST_EXECUTIONS_PER_POLICY * len(wanted))
        try:
            found = {execution.id: execution for execution in
                     scheduler.execution_list(
                         request, all_projects=all_projects, limit=limit)}
        except scheduler.APIError:
            found = {}
    for policy in wanted:
        policy.last_execution = found.get(policy.last_execution_id)
        if policy.last_execution is not None:
            continue
        try:
            policy.last_execution = scheduler.execution_get(
                request, policy.last_execution_id)
        except scheduler.APIError:
            policy.last_execution = None


def attach_instance_names(request, policies):
    """Set the instance_name of the policies of Trove instances.

    The name Trove gives the instance (one request per instance), or
    None: the table then shows the ID.
    """
    names = trove.instance_names(request, [
        policy.instance_id for policy in policies
        if policy.backend == 'trove'])
    for policy in policies:
        policy.instance_name = names.get(policy.instance_id)


def get_schedule(policy):
    return _('%(schedule)s (%(timezone)s)') % {
        'schedule': utils.describe_schedule(policy),
        'timezone': policy.timezone}


def get_next_run(policy):
    if not policy.enabled:
        return _('Not while paused')
    if not policy.next_execution_time:
        return _('None: the schedule has ended')
    return utils.user_time(policy.next_execution_time)


def get_last_result(policy):
    execution = policy.last_execution
    if execution is None:
        return pgettext_lazy('Last result of a policy', 'None yet')
    return _('%(status)s (%(time)s)') % {
        'status': STATUS_DISPLAY.get(execution.status, execution.status),
        'time': utils.user_time(execution.finished_at
                                or execution.scheduled_at)}


def get_state(policy):
    if policy.enabled:
        return _('Active')
    if policy.paused_reason:
        return _('Paused: %(reason)s') % {'reason': policy.paused_reason}
    return _('Paused')


def get_instance(policy):
    return getattr(policy, 'instance_name', None) or policy.instance_id


def get_instance_link(policy):
    """trove-dashboard's page of a Trove instance, if it is installed."""
    if policy.backend != 'trove':
        return None
    return trove.instance_url(policy.instance_id)


STATUS_DISPLAY = {
    'PENDING': pgettext_lazy('Execution status', 'Pending'),
    'DISPATCHED': pgettext_lazy('Execution status', 'Dispatched'),
    'RUNNING': pgettext_lazy('Execution status', 'Running'),
    'SUCCEEDED': pgettext_lazy('Execution status', 'Succeeded'),
    'FAILED': pgettext_lazy('Execution status', 'Failed'),
    'SKIPPED': pgettext_lazy('Execution status', 'Skipped'),
}


class PoliciesTable(tables.DataTable):
    name = tables.WrappingColumn(
        'name', verbose_name=_('Name'),
        link='horizon:project:backup_policies:detail')
    instance = tables.Column(get_instance, verbose_name=_('Instance'),
                             link=get_instance_link)
    schedule = tables.Column(get_schedule, verbose_name=_('Schedule'))
    next_run = tables.Column(get_next_run, verbose_name=_('Next Run'))
    last_result = tables.Column(get_last_result,
                                verbose_name=_('Last Result'))
    state = tables.Column(get_state, verbose_name=_('State'))
    activity = tables.Column(get_activity, hidden=True,
                             verbose_name=_('Activity'), status=True,
                             status_choices=ACTIVITY_CHOICES)

    def get_object_display(self, datum):
        return datum.name

    class Meta(object):
        name = 'policies'
        verbose_name = _('Backup Policies')
        row_class = UpdateRow
        status_columns = ['activity']
        table_actions = (CreatePolicy, PolicyFilter, RunPolicy, PausePolicy,
                         ResumePolicy, DeletePolicy)
        row_actions = (EditPolicy, RunPolicy, PausePolicy, ResumePolicy,
                       DeletePolicy)


def get_slot(execution):
    return utils.user_time(execution.scheduled_at)


def get_lateness(execution):
    return utils.duration_words(utils.seconds_between(
        execution.scheduled_at, execution.started_at))


def get_duration(execution):
    return utils.duration_words(utils.seconds_between(
        execution.started_at, execution.finished_at))


def get_deleted(execution):
    return ', '.join(str(backup) for backup in
                     (execution.deleted_backups or ())) or '-'


def get_fault(execution):
    return execution.fault or execution.status_reason or ''


class UpdateExecutionRow(tables.Row):
    """An execution's row, refreshed until the execution ends."""
    ajax = True

    def get_data(self, request, execution_id):
        try:
            return scheduler.execution_get(request, execution_id)
        except scheduler.APIError as exc:
            raise scheduler.not_found(exc)


class ExecutionsTable(tables.DataTable):
    status = tables.Column(
        lambda execution: STATUS_DISPLAY.get(execution.status,
                                             execution.status),
        verbose_name=_('Status'))
    trigger = tables.Column('trigger', verbose_name=_('Trigger'))
    slot = tables.Column(get_slot, verbose_name=_('Slot'))
    lateness = tables.Column(get_lateness, verbose_name=_('Lateness'))
    duration = tables.Column(get_duration, verbose_name=_('Duration'))
    backup = tables.Column('backup_id', verbose_name=_('Backup'),
                           empty_value='-')
    deleted = tables.Column(get_deleted, verbose_name=_('Deleted Backups'))
    fault = tables.Column(get_fault, verbose_name=_('Fault'),
                          filters=(defaultfilters.linebreaksbr,))
    activity = tables.Column(get_activity, hidden=True,
                             verbose_name=_('Activity'), status=True,
                             status_choices=ACTIVITY_CHOICES)

    class Meta(object):
        name = 'executions'
        verbose_name = _('Executions')
        row_class = UpdateExecutionRow
        status_columns = ['activity']


def policy_detail_url(policy):
    return reverse('horizon:project:backup_policies:detail',
                   args=[policy.id])
