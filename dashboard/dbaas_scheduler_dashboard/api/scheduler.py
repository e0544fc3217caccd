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
"""The backup scheduler API as Horizon's views use it.

Every call goes through python-dbaas-schedulerclient with the Keystone
token of the user logged in to Horizon (openstack_auth), to the
backup-scheduler endpoint of the user's catalog, or to the one the
setting ``DBAAS_SCHEDULER_URL`` names.  The API's dicts come back as
:class:`openstack_dashboard.api.base.APIDictWrapper` objects, which is
what Horizon's tables read.
"""

from django.conf import settings
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from openstack_dashboard.api import base

from dbaasschedulerclient.v1 import client as scheduler_client

SERVICE_TYPE = scheduler_client.SERVICE_TYPE
APIError = scheduler_client.APIError
# In HORIZON_CONFIG's not_found exceptions (the enabled files add it): an
# ajax row update answers 404 and the row leaves the table.
NotFound = scheduler_client.NotFound


def not_found(exc):
    """The exception to raise for an API error: NotFound for a 404."""
    if exc.status == 404 and not isinstance(exc, NotFound):
        return NotFound(exc.detail)
    return exc


class Policy(base.APIDictWrapper):
    _attrs = ['id', 'name', 'description', 'project_id', 'instance_id',
              'backend', 'schedule_type', 'schedule', 'timezone',
              'start_at', 'end_at', 'remaining_runs', 'enabled',
              'paused_reason', 'overlap_policy', 'catchup_window',
              'keep_last', 'keep_daily', 'keep_weekly', 'keep_monthly',
              'max_age_days', 'verify_every', 'verify_schedule', 'rpo',
              'start_window', 'completion_window', 'next_execution_time',
              'last_execution_id', 'created_at', 'updated_at']

    # Filled in by the views: the policy's last execution, if any.
    last_execution = None
    # Filled in by the views: the Trove instance's name, if Trove told it.
    instance_name = None


class Execution(base.APIDictWrapper):
    _attrs = ['id', 'policy_id', 'project_id', 'instance_id',
              'scheduled_at', 'trigger', 'status', 'status_reason',
              'attempts', 'backup_id', 'deleted_backups', 'created_at',
              'dispatched_at', 'started_at', 'finished_at', 'fault']


class Service(base.APIDictWrapper):
    _attrs = ['id', 'host', 'binary', 'topic', 'pid', 'started_at',
              'heartbeat_at', 'state']


def endpoint(request):
    """The URL of the API for this user: the setting, else the catalog."""
    configured = getattr(settings, 'DBAAS_SCHEDULER_URL', None)
    if configured:
        return configured
    return base.url_for(request, SERVICE_TYPE)


def client(request):
    """A client that sends the user's token, as the user."""
    verify = not getattr(settings, 'OPENSTACK_SSL_NO_VERIFY', False)
    cacert = getattr(settings, 'OPENSTACK_SSL_CACERT', None)
    if verify and cacert:
        verify = cacert
    url = endpoint(request)
    auth = token_endpoint.Token(url, request.user.token.id)
    return scheduler_client.Client(
        ks_session.Session(auth=auth, verify=verify), endpoint=url)


def policy_list(request, all_projects=False, **filters):
    found = client(request).list_policies(
        all_projects=all_projects or None, **filters)
    return [Policy(item) for item in found]


def policy_get(request, policy_id):
    return Policy(client(request).get_policy(policy_id))


def policy_create(request, values):
    return Policy(client(request).create_policy(values))


def policy_update(request, policy_id, changes):
    return Policy(client(request).update_policy(policy_id, changes))


def policy_delete(request, policy_id):
    client(request).delete_policy(policy_id)


def policy_pause(request, policy_id, reason=None):
    return Policy(client(request).pause_policy(policy_id, reason))


def policy_resume(request, policy_id):
    return Policy(client(request).resume_policy(policy_id))


def policy_run(request, policy_id):
    return Execution(client(request).run_policy(policy_id))


def policy_next_runs(request, policy_id, count=5):
    return client(request).next_runs(policy_id, count)


def schedule_preview(request, schedule, schedule_type=None, timezone=None,
                     start_at=None, end_at=None, count=5):
    return client(request).preview_schedule(
        schedule, schedule_type=schedule_type, timezone=timezone,
        start_at=start_at, end_at=end_at, count=count)


def execution_list(request, policy_id=None, all_projects=False, limit=None,
                   status=None):
    found = client(request).list_executions(
        policy_id=policy_id, all_projects=all_projects or None,
        limit=limit, status=status)
    return [Execution(item) for item in found]


def execution_get(request, execution_id):
    return Execution(client(request).get_execution(execution_id))


def service_list(request):
    return [Service(item) for item in client(request).list_services()]
