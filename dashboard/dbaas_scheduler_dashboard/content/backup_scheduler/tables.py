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

from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy
from horizon import tables

from dbaas_scheduler_dashboard.content.backup_policies import (
    tables as project_tables)
from dbaas_scheduler_dashboard import utils

SERVICE_STATES = (('up', True), ('down', False))


def get_heartbeat(service):
    return utils.user_time(service.heartbeat_at)


def get_started(service):
    return utils.user_time(service.started_at)


class ServicesTable(tables.DataTable):
    binary = tables.Column('binary', verbose_name=_('Service'))
    host = tables.Column('host', verbose_name=_('Host'))
    topic = tables.Column('topic', verbose_name=_('Topic'), empty_value='-')
    pid = tables.Column('pid', verbose_name=_('PID'), empty_value='-')
    started = tables.Column(get_started, verbose_name=_('Started'))
    heartbeat = tables.Column(get_heartbeat,
                              verbose_name=_('Last Heartbeat'))
    state = tables.Column(
        'state', verbose_name=_('State'), status=True,
        status_choices=SERVICE_STATES,
        display_choices=(('up', pgettext_lazy('Service state', 'Up')),
                         ('down', pgettext_lazy('Service state', 'Down'))))

    class Meta(object):
        name = 'services'
        verbose_name = _('Services')
        status_columns = ['state']


class AllPoliciesTable(tables.DataTable):
    project = tables.Column('project_id', verbose_name=_('Project'))
    name = tables.WrappingColumn('name', verbose_name=_('Name'))
    instance = tables.Column('instance_id', verbose_name=_('Instance'))
    schedule = tables.Column(project_tables.get_schedule,
                             verbose_name=_('Schedule'))
    next_run = tables.Column(project_tables.get_next_run,
                             verbose_name=_('Next Run'))
    last_result = tables.Column(project_tables.get_last_result,
                                verbose_name=_('Last Result'))
    state = tables.Column(project_tables.get_state, verbose_name=_('State'))

    class Meta(object):
        name = 'all_policies'
        verbose_name = _('Backup Policies of All Projects')
        table_actions = (project_tables.PausePolicy,
                         project_tables.ResumePolicy)
        row_actions = (project_tables.PausePolicy,
                       project_tables.ResumePolicy)
