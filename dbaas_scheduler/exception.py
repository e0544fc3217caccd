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
"""Domain exceptions, each with a message a user or operator can act on.

The REST API maps these classes to HTTP status codes in one place; nothing
here knows about HTTP.
"""


class DbaasSchedulerException(Exception):
    """Base class: ``msg_fmt`` is formatted with the keyword arguments."""

    msg_fmt = 'An unknown error occurred.'

    def __init__(self, message=None, **kwargs):
        self.kwargs = kwargs
        if message is None:
            message = self.msg_fmt % kwargs
        self.message = message
        super().__init__(message)


class Invalid(DbaasSchedulerException):
    """The request is malformed; repeating it unchanged fails again."""

    msg_fmt = 'Invalid input: %(reason)s'


class InvalidMicroversion(Invalid):
    """The OpenStack-API-Version header is not one this API can read."""

    msg_fmt = ('Invalid OpenStack-API-Version header %(header)s: %(reason)s '
               'Send "OpenStack-API-Version: backup-scheduler X.Y" with a '
               'version from %(min)s to %(max)s, or "latest".')


class MicroversionNotAcceptable(DbaasSchedulerException):
    """A well-formed API version this server does not serve."""

    msg_fmt = ('Version %(version)s of the backup-scheduler API is not '
               'served here: this server serves %(min)s to %(max)s (see the '
               'version document at /). Ask for one of those, or leave out '
               'the OpenStack-API-Version header for %(min)s.')


class RequestTooLarge(Invalid):
    msg_fmt = ('The request body has %(size)s bytes; at most %(limit)d are '
               'taken.')


class InvalidSchedule(Invalid):
    msg_fmt = 'Invalid schedule %(schedule)r: %(reason)s'


class InvalidCronExpression(InvalidSchedule):
    msg_fmt = 'Invalid cron expression %(schedule)r: %(reason)s'


class InvalidInterval(InvalidSchedule):
    msg_fmt = ('Invalid interval %(schedule)r: %(reason)s Give a number of '
               'seconds, such as 86400 for once a day, or of minutes, hours '
               'or days with a unit: 90m, 6h, 1d.')


class InvalidRunTime(InvalidSchedule):
    msg_fmt = ('Invalid run time %(schedule)r: %(reason)s Give an ISO 8601 '
               'date and time, such as 2027-01-31T02:30:00 (local time in '
               'the policy\'s time zone) or 2027-01-31T01:30:00+00:00.')


class UnknownTimeZone(InvalidSchedule):
    msg_fmt = ('Unknown time zone %(timezone)r: use an IANA time zone name '
               'such as "Europe/Berlin", "America/New_York" or "UTC".'
               '%(suggestion)s')


class ScheduleNeverFires(InvalidSchedule):
    msg_fmt = 'The schedule %(schedule)r never runs: %(reason)s'


class ScheduleTooFrequent(InvalidSchedule):
    msg_fmt = ('The schedule %(schedule)r runs every %(gap)d seconds at the '
               'closest, more often than the minimum of %(minimum)d seconds '
               'between two backups of one policy allowed here.')


class NotFound(DbaasSchedulerException):
    msg_fmt = 'Not found: %(reason)s'


class PolicyNotFound(NotFound):
    msg_fmt = 'Backup policy %(policy_id)s could not be found.'


class ExecutionNotFound(NotFound):
    msg_fmt = 'Execution %(execution_id)s could not be found.'


class RestoreNotFound(NotFound):
    msg_fmt = 'Restore %(restore_id)s could not be found.'


class TemplateNotFound(NotFound):
    msg_fmt = 'Policy template %(template_id)s could not be found.'


class Conflict(DbaasSchedulerException):
    msg_fmt = 'Conflict: %(reason)s'


class TemplateNameExists(Conflict):
    msg_fmt = ('A policy template named "%(name)s" already exists in this '
               'project: choose another name, or delete that template.')


class PolicyNameExists(Conflict):
    msg_fmt = ('A backup policy named "%(name)s" already exists in this '
               'project (%(policy_id)s): choose another name, or change or '
               'delete that policy.')


class ExecutionExists(Conflict):
    msg_fmt = ('Backup policy %(policy_id)s already has an execution for '
               'the slot %(scheduled_at)s.')


class ExecutionHasNoBackup(Conflict):
    msg_fmt = ('Execution %(execution_id)s has no backup to hold: it is '
               '%(status)s.')


class BackupDeleted(Conflict):
    msg_fmt = ('Backup %(backup_id)s of execution %(execution_id)s cannot '
               'be held: it is %(state)s.')


class BackupChainDeleting(Conflict):
    msg_fmt = ('Backup %(backup_id)s of execution %(execution_id)s cannot '
               'be held right now: backup %(deleting)s of the same '
               'instance, which it may be built on, is being deleted. Try '
               'again in a moment.')


class ServiceUnavailable(DbaasSchedulerException):
    """A service this one depends on is down; the request may work later."""

    msg_fmt = ('A service the backup service depends on is unavailable, '
               'try again later: %(reason)s')


class KeystoneUnavailable(ServiceUnavailable):
    msg_fmt = ('Keystone is unreachable, try again later. %(consequence)s '
               '(%(reason)s)')


class ServiceCredentialsRefused(ServiceUnavailable):
    """Keystone refuses the service user itself: the operator must act.

    ``who`` says who that is (see ``keystone.who_must_act``).
    """

    msg_fmt = ('The backup service cannot authenticate to Keystone with its '
               'own credentials: its [service_credentials] are refused. '
               '%(who)s %(consequence)s (%(reason)s)')


class InvalidInstance(Invalid):
    """The backend says the policy's instance does not exist (for it)."""

    msg_fmt = ('The %(backend)s backend cannot back up instance '
               '%(instance_id)s: %(reason)s')


class BackendNotEnabled(Invalid):
    """The backend is installed, but this cloud does not offer it."""

    msg_fmt = ('The %(backend)s backend is not offered here; this cloud '
               'offers %(enabled)s.')


class InvalidInstanceId(Invalid):
    """An instance id the policy's backend could never accept."""

    msg_fmt = ('Invalid instance_id for the %(backend)s backend: '
               '%(reason)s')


class BackendNotConfigured(Invalid):
    """The backend a policy names cannot work with this configuration.

    A backend's ``check_instance`` raises it; ``who`` says who can change
    the configuration (``keystone.who_must_act``).
    """

    msg_fmt = 'The %(backend)s backend cannot be used yet: %(reason)s. %(who)s'


class TrustError(Invalid):
    msg_fmt = ('Could not delegate your roles %(roles)s in project '
               '%(project_id)s to the backup service through a Keystone '
               'trust: %(reason)s')


class Forbidden(DbaasSchedulerException):
    msg_fmt = ('Policy %(action)s does not allow this request. Ask an '
               'administrator of your project for the role it needs.')


class QuotaExceeded(DbaasSchedulerException):
    """One more would pass a project's limit (a quota: 403)."""

    msg_fmt = ('Quota exceeded: project %(project_id)s may have at most '
               '%(limit)d %(what)s and has %(usage)d. %(advice)s')


class RateLimitExceeded(DbaasSchedulerException):
    """Too many requests of a kind in a window (a rate: 429).

    ``retry_after`` is the whole seconds until one more is allowed.
    """

    msg_fmt = ('Rate limit exceeded: %(what)s; at most %(limit)d are '
               'allowed in %(window)s and %(usage)d were taken. Try again '
               'in %(retry_after)d seconds.')

    @property
    def retry_after(self):
        return self.kwargs.get('retry_after')


class BackendForbidden(Forbidden):
    """The policy rule of a backend does not allow the caller to use it."""

    msg_fmt = ('You may not give a backup policy the %(backend)s backend: '
               'policy %(action)s does not allow it. Choose another '
               'backend, or ask the cloud\'s operator.')


class InvalidConfiguration(DbaasSchedulerException):
    """Options that cannot work together: the program refuses to start."""

    msg_fmt = 'Invalid configuration: %(reason)s.'


class InvalidUpgradeLevel(DbaasSchedulerException):
    """An ``[upgrade_levels]`` value this code cannot send: a config error."""

    msg_fmt = ('[upgrade_levels] %(api)s = %(value)r: %(reason)s. Give a '
               'version between %(oldest)s and %(newest)s, a release '
               'name (%(releases)s), or leave it unset.')
