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
"""Client side of every dbaas-scheduler RPC API.

This is the only module that builds client ``Target`` objects.  Each client
class keeps its version history in its docstring; the matching endpoint
declares the same version in its ``target``, and a unit test checks that the
two agree.

A client sends at most the version ``[upgrade_levels]`` allows for its API
(its ``version_cap``): during a rolling upgrade, the new senders are pinned
to what the old receivers understand, and fall back to older methods
where there is one (see ``WorkerAPI.backup_database_instances``).
"""

import re

import oslo_messaging as messaging
from oslo_utils import versionutils

from dbaas_scheduler import exception
from dbaas_scheduler import rpc

# A cast is tried once more after a connection error, then given up: the
# execution stays recorded and the engine's sweep casts it again, so a
# broker outage must not stall the engine.
CAST_RETRY = 1

# The newest version of each RPC API that each release speaks, so that an
# [upgrade_levels] option can name the release still running instead of a
# version.  Add a line when a release is cut, from the RPC_API_VERSIONs of
# the clients below; never change a line afterwards.
RELEASES = {
    '2027.1': {'engine': '1.0', 'worker': '1.1'},
}

_VERSION = re.compile(r'^[0-9]+\.[0-9]+$')


def version_cap(conf, api, newest):
    """The newest version a client of ``api`` may send.

    ``api`` is ``engine`` or ``worker``, an option of ``[upgrade_levels]``;
    ``newest`` the client's own version.  Unset means ``newest``.  Raises
    ``InvalidUpgradeLevel`` for a release this code does not know and for a
    version it cannot send (newer than ``newest``, or of another major
    version).
    """
    value = conf.upgrade_levels[api]
    if not value:
        return newest
    if value in RELEASES:
        return RELEASES[value][api]
    if not _VERSION.match(value):
        reason = 'neither a version nor a release this code knows'
    elif not versionutils.is_compatible(value, newest, same_major=True):
        reason = 'this code cannot send that version'
    else:
        return value
    raise exception.InvalidUpgradeLevel(
        api=api, value=value, reason=reason,
        oldest='%s.0' % newest.split('.')[0], newest=newest,
        releases=', '.join(sorted(RELEASES)) or 'none yet')


def check_upgrade_levels(conf):
    """Raise ``InvalidUpgradeLevel`` unless every pin is usable.

    Programs call it at start, so that a wrong value stops them there
    rather than at their first message.
    """
    version_cap(conf, 'engine', EngineAPI.RPC_API_VERSION)
    version_cap(conf, 'worker', WorkerAPI.RPC_API_VERSION)


class EngineAPI:
    """Client side of the engines' RPC API (topic ``[engine] topic``).

    For other services -- Trove above all -- that manage backup policies
    over oslo.messaging.  Every method is a call: it waits for an engine
    and returns its answer, or raises what the engine raised
    (``dbaas_scheduler.exception.Invalid``, ``Forbidden``, ``NotFound`` or
    ``ServiceUnavailable``, as ``oslo_messaging.RemoteError`` when the
    caller does not have this package).

    The engine authorizes ``context`` with the REST API's policy rules: a
    service acting for a user passes that user's context (with its token,
    which a ``trove`` policy's Keystone trust is created with), and the
    policy belongs to the context's project and user.  Acting in another
    project than the context's needs the ``service`` or ``admin`` role
    (rule ``service_or_admin``).

    API version history:

    * 1.0 - Initial version: create_policy, update_policy, delete_policy,
      list_policies, delete_policies_for_instance.
    * 1.1 - Every method authorizes the caller's context and checks its
      values with the REST API's schemas; list_policies and
      delete_policies_for_instance act in the caller's project unless
      given another project_id or all_projects=True.
    """

    RPC_API_VERSION = '1.1'

    def __init__(self, conf, timeout=None):
        target = messaging.Target(topic=conf.engine.topic, version='1.0')
        self.client = rpc.get_client(target, version_cap=version_cap(
            conf, 'engine', self.RPC_API_VERSION))
        self.timeout = timeout

    def _call(self, context, method, version='1.0', **kwargs):
        cctxt = self.client.prepare(version=version, timeout=self.timeout)
        return cctxt.call(context, method, **kwargs)

    def _scoped_call(self, context, method, project_id, all_projects,
                     **kwargs):
        """A call on the policies of one project, or of every one."""
        if self.client.can_send_version('1.1'):
            return self._call(context, method, version='1.1',
                              project_id=project_id,
                              all_projects=all_projects, **kwargs)
        # A 1.0 engine takes no project_id as every project.
        return self._call(context, method, **kwargs) if all_projects \
            else self._call(context, method, project_id=(
                project_id or context.project_id), **kwargs)

    def create_policy(self, context, values):
        """Create a policy in the context's project, for its user.

        ``values`` as in the REST API's request body: ``id``,
        ``project_id``, ``user_id`` and ``trust_id`` are refused.
        """
        return self._call(context, 'create_policy', values=values)

    def update_policy(self, context, policy_id, changes):
        """Change a policy's fields; returns the policy."""
        return self._call(context, 'update_policy', policy_id=policy_id,
                          changes=changes)

    def delete_policy(self, context, policy_id):
        """Delete a policy (its executions stay); returns None."""
        return self._call(context, 'delete_policy', policy_id=policy_id)

    def list_policies(self, context, project_id=None, instance_id=None,
                      all_projects=False):
        """Policies of the context's project, optionally of one instance.

        Those of another ``project_id``, or of every project
        (``all_projects``), for a service or an administrator.
        """
        return self._scoped_call(context, 'list_policies', project_id,
                                 all_projects, instance_id=instance_id)

    def delete_policies_for_instance(self, context, instance_id,
                                     project_id=None, all_projects=False):
        """Delete the policies of an instance (e.g. Trove deleted it).

        In the context's project; in another ``project_id``, or in every
        project (``all_projects``), for a service or an administrator.
        Returns the ids of the policies deleted.
        """
        return self._scoped_call(context, 'delete_policies_for_instance',
                                 project_id, all_projects,
                                 instance_id=instance_id)


class WorkerAPI:
    """Client side of the worker RPC API (topic ``[worker] topic``).

    API version history:

    * 1.0 - Initial version: ``backup_database_instance(execution_id)``.
    * 1.1 - Added ``backup_database_instances(execution_ids)``, several
      executions in one message for bursts.
    * 1.2 - Added ``restore_backup(restore_id)``.
    """

    RPC_API_VERSION = '1.2'

    def __init__(self, conf):
        self.topic = conf.worker.topic
        cap = version_cap(conf, 'worker', self.RPC_API_VERSION)
        if conf.rpc_transport == 'none':
            # The worker is in this process and speaks the newest version.
            self.client = rpc.LocalClient(self.topic)
        else:
            target = messaging.Target(topic=self.topic, version='1.0')
            # Workers act through each policy's trust: the user's token,
            # if the request had one, stays here.
            self.client = rpc.get_client(target, version_cap=cap,
                                         secrets=False)

    def backup_database_instance(self, context, execution_id):
        """Ask a worker to run one execution.

        A cast: no response, no exception from the worker.  Raises
        ``oslo_messaging.MessagingException`` (or a connection error) when
        the message could not be sent.
        """
        cctxt = self.client.prepare(version='1.0', retry=CAST_RETRY)
        cctxt.cast(context, 'backup_database_instance',
                   execution_id=execution_id)

    def backup_database_instances(self, context, execution_ids):
        """Ask a worker to run several executions.

        The worker claims those it can get with one conditional update and
        drops the others (already taken or finished).

        A cast: no response, no exception from the worker.  Falls back to one
        message per execution when ``[upgrade_levels] worker`` pins the
        workers to 1.0.
        """
        if not self.client.can_send_version('1.1'):
            for execution_id in execution_ids:
                self.backup_database_instance(context, execution_id)
            return
        cctxt = self.client.prepare(version='1.1', retry=CAST_RETRY)
        cctxt.cast(context, 'backup_database_instances',
                   execution_ids=list(execution_ids))

    def restore_backup(self, context, restore_id):
        """Ask a worker to run one restore (1.2).

        A cast: no response, no exception from the worker.  Raises
        ``oslo_messaging.MessagingException`` when the message could not
        be sent, and ``exception.ServiceUnavailable`` when
        ``[upgrade_levels] worker`` pins the workers to a version without
        restores.
        """
        if not self.client.can_send_version('1.2'):
            raise exception.ServiceUnavailable(
                reason='the workers are pinned to an RPC version without '
                       'restores ([upgrade_levels] worker); finish the '
                       'upgrade first')
        cctxt = self.client.prepare(version='1.2', retry=CAST_RETRY)
        cctxt.cast(context, 'restore_backup', restore_id=restore_id)
