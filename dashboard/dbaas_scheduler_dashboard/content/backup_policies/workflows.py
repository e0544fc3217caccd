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
"""Create and edit a backup policy: a workflow of four steps.

The schedule is checked by the API (its schedule preview) while the form
is validated, so that an invalid cron expression or time zone is an error
of that field, with or without JavaScript.  An error the API gives when
the policy is created or changed is put on the field it is about too.
"""

from django.conf import settings
from django import forms as django_forms
from django.urls import reverse
from django.utils.translation import gettext_lazy as _
from horizon import forms
from horizon import workflows

from dbaas_scheduler_dashboard.api import scheduler

# Error codes of the API and the field each is about.
FIELD_OF_CODE = {
    'dbaas_scheduler.invalid_schedule': 'schedule',
    'dbaas_scheduler.invalid_cron_expression': 'schedule',
    'dbaas_scheduler.invalid_interval': 'schedule',
    'dbaas_scheduler.invalid_run_time': 'schedule',
    'dbaas_scheduler.schedule_never_fires': 'schedule',
    'dbaas_scheduler.schedule_too_frequent': 'schedule',
    'dbaas_scheduler.unknown_time_zone': 'timezone',
    'dbaas_scheduler.policy_name_exists': 'name',
    'dbaas_scheduler.invalid_instance': 'instance_id',
    'dbaas_scheduler.invalid_instance_id': 'instance_id',
    'dbaas_scheduler.backend_not_enabled': 'backend',
    'dbaas_scheduler.backend_not_configured': 'backend',
    'dbaas_scheduler.backend_forbidden': 'backend',
}

# How the service's own checks of a request begin their detail.
INVALID_INPUT = 'Invalid input: '

FIELDS = ('name', 'description', 'instance_id', 'backend', 'schedule_type',
          'schedule', 'timezone', 'start_at', 'end_at', 'keep_last',
          'keep_daily', 'keep_weekly', 'keep_monthly', 'max_age_days',
          'overlap_policy', 'catchup_window', 'verify_every',
          'verify_schedule', 'rpo', 'start_window', 'completion_window')
# Protection: empty means derived from the schedule (null in the API).
PROTECTION = ('rpo', 'start_window', 'completion_window')
OPTIONAL = ('description', 'backend', 'start_at', 'end_at', 'catchup_window',
            'verify_every', 'verify_schedule') + PROTECTION
COUNTS = ('keep_last', 'keep_daily', 'keep_weekly', 'keep_monthly',
          'max_age_days')


def field_of(error, fields=FIELDS):
    """The form field an API error is about, or None."""
    field = FIELD_OF_CODE.get(error.code or '')
    if field:
        return field
    if error.code == 'dbaas_scheduler.invalid':
        # Validation errors of the request body name the field first;
        # the service's own checks after "Invalid input: ".
        detail = error.detail or ''
        if detail.startswith(INVALID_INPUT):
            detail = detail[len(INVALID_INPUT):]
        for name in fields:
            if detail.startswith(name) or "'%s'" % name in detail:
                return name
    return None


def backend_choices():
    names = getattr(settings, 'DBAAS_SCHEDULER_BACKENDS', ['trove'])
    return [('', _("The service's default"))] + [
        (name, name) for name in names]


class DetailsAction(workflows.Action):
    name = forms.CharField(label=_('Name'), max_length=255)
    description = forms.CharField(
        label=_('Description'), required=False, max_length=255,
        widget=forms.Textarea(attrs={'rows': 2}))
    instance_id = forms.CharField(
        label=_('Instance'), max_length=255,
        help_text=_('The database instance to back up: its ID.'))
    backend = forms.ChoiceField(label=_('Backend'), required=False)

    def __init__(self, request, context, *args, **kwargs):
        super().__init__(request, context, *args, **kwargs)
        self.fields['backend'].choices = backend_choices()

    class Meta(object):
        name = _('Details')
        help_text = _('A backup policy backs up one database instance on a '
                      'schedule and deletes the backups its retention '
                      'rules no longer keep.')


class ScheduleAction(workflows.Action):
    schedule_type = forms.ChoiceField(
        label=_('Schedule Type'),
        choices=[('cron', _('Cron expression')),
                 ('interval', _('Every N seconds')),
                 ('once', _('Once, at a time'))])
    schedule = forms.CharField(
        label=_('Schedule'), max_length=255,
        widget=forms.TextInput(attrs={'autocomplete': 'off'}),
        help_text=_('For example "30 2 * * *" (02:30 every day) or '
                    '"H 1 * * 0" (Sundays, at a minute of 01:00-01:59 that '
                    'H picks for this policy, so that policies do not all '
                    'start at once).'))
    timezone = forms.CharField(
        label=_('Time Zone'), max_length=64, initial='UTC',
        help_text=_('The IANA time zone the schedule is read in, e.g. '
                    'Europe/Paris.'))
    start_at = forms.DateTimeField(
        label=_('Start At (UTC)'), required=False,
        help_text=_('No run before this time.'))
    end_at = forms.DateTimeField(
        label=_('End At (UTC)'), required=False,
        help_text=_('No run after this time.'))

    def __init__(self, request, context, *args, **kwargs):
        super().__init__(request, context, *args, **kwargs)
        if not context.get('timezone'):
            self.fields['timezone'].initial = request.session.get(
                'django_timezone') or 'UTC'
        # The JavaScript of the preview asks this URL.
        self.fields['schedule'].widget.attrs['data-preview-url'] = reverse(
            'horizon:project:backup_policies:preview')

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get('schedule') or not cleaned.get('timezone'):
            return cleaned
        try:
            scheduler.schedule_preview(
                self.request, cleaned['schedule'],
                schedule_type=cleaned.get('schedule_type'),
                timezone=cleaned['timezone'],
                start_at=_iso(cleaned.get('start_at')),
                end_at=_iso(cleaned.get('end_at')), count=1)
        except scheduler.APIError as exc:
            if exc.status >= 500:
                raise django_forms.ValidationError(exc.detail)
            field = field_of(exc, ('schedule', 'timezone', 'start_at',
                                   'end_at')) or 'schedule'
            self.add_error(field, exc.detail)
        return cleaned

    class Meta(object):
        name = _('Schedule')
        help_text_template = ('project/backup_policies/_schedule_preview.html')


class RetentionAction(workflows.Action):
    keep_last = forms.IntegerField(label=_('Keep Last'), min_value=0,
                                   required=False)
    keep_daily = forms.IntegerField(label=_('Keep Daily'), min_value=0,
                                    required=False)
    keep_weekly = forms.IntegerField(label=_('Keep Weekly'), min_value=0,
                                     required=False)
    keep_monthly = forms.IntegerField(label=_('Keep Monthly'), min_value=0,
                                      required=False)
    max_age_days = forms.IntegerField(label=_('Maximum Age (days)'),
                                      min_value=0, required=False)

    class Meta(object):
        name = _('Retention')
        help_text = _('Which backups to keep: "keep daily 7, weekly 4" '
                      'keeps the newest backup of each of the last 7 days '
                      'and of each of the last 4 weeks; a backup any rule '
                      'keeps is kept; "maximum age" deletes older backups '
                      'whatever the other rules say. With no rule, no '
                      'backup is ever deleted.')


class OptionsAction(workflows.Action):
    overlap_policy = forms.ChoiceField(
        label=_('When a Backup Is Still Running'),
        choices=[('skip', _('Skip the next slot')),
                 ('queue', _('Queue it'))])
    catchup_window = forms.IntegerField(
        label=_('Catch-up Window (seconds)'), min_value=0, required=False,
        help_text=_('How late a missed slot may still run, e.g. after an '
                    'outage; empty means the service default.'))
    verify_every = forms.IntegerField(
        label=_('Verify Every Nth Backup'), min_value=1, required=False,
        help_text=_('Restore every Nth successful backup into a scratch '
                    'instance, check it and delete it; empty: not by '
                    'count.'))
    verify_schedule = forms.CharField(
        label=_('Verification Schedule (cron)'), max_length=255,
        required=False,
        help_text=_('Or verify the newest backup at each slot of this '
                    'cron schedule, in the policy\'s time zone, e.g. '
                    '"0 4 * * 0" (Sundays at 04:00); not with "Verify '
                    'Every Nth Backup".'))
    # The API's bounds (API 1.1 for the windows, 1.2 for the RPO).
    rpo = forms.IntegerField(
        label=_('Recovery Point Objective (seconds)'), min_value=60,
        max_value=10 * 366 * 86400, required=False,
        help_text=_('The maximum acceptable age of the newest successful '
                    'backup; empty: derived from the schedule.'))
    start_window = forms.IntegerField(
        label=_('Start Window (seconds)'), min_value=60,
        max_value=7 * 86400, required=False,
        help_text=_('How long after its slot a backup may still start; '
                    'one not started by then ends EXPIRED. Empty: derived '
                    'from the schedule.'))
    completion_window = forms.IntegerField(
        label=_('Completion Window (seconds)'), min_value=60,
        max_value=31 * 86400, required=False,
        help_text=_('How long after its slot a backup should have '
                    'finished; not shorter than the start window. Empty: '
                    'derived from the schedule.'))

    class Meta(object):
        name = _('Options')


def _iso(value):
    return value.isoformat() if value else None


class _Step(workflows.Step):
    pass


class SetDetails(_Step):
    action_class = DetailsAction
    contributes = ('name', 'description', 'instance_id', 'backend')


class SetSchedule(_Step):
    action_class = ScheduleAction
    contributes = ('schedule_type', 'schedule', 'timezone', 'start_at',
                   'end_at')


class SetRetention(_Step):
    action_class = RetentionAction
    contributes = COUNTS


class SetOptions(_Step):
    action_class = OptionsAction
    contributes = ('overlap_policy', 'catchup_window', 'verify_every',
                   'verify_schedule') + PROTECTION


class _PolicyWorkflow(workflows.Workflow):
    default_steps = (SetDetails, SetSchedule, SetRetention, SetOptions)
    success_url = 'horizon:project:backup_policies:index'

    def values(self, data):
        values = {}
        for name in FIELDS:
            value = data.get(name)
            if name in ('start_at', 'end_at'):
                value = _iso(value)
            if value in (None, '') and name in OPTIONAL + COUNTS:
                continue
            values[name] = value
        return values

    def put_on_field(self, error):
        """Show an API error in its field; False if it has none."""
        field = field_of(error)
        if field is None:
            return False
        for step in self.steps:
            if field in step.action.fields:
                step.action.add_error(field, error.detail)
                return True
        return False

    def call(self, request, function, *args):
        try:
            self.object = function(request, *args)
        except scheduler.APIError as exc:
            if exc.status < 500 and self.put_on_field(exc):
                raise django_forms.ValidationError(exc.detail)
            raise
        return True


class CreatePolicy(_PolicyWorkflow):
    slug = 'create_backup_policy'
    name = _('Create Backup Policy')
    finalize_button_name = _('Create')
    success_message = _('Created backup policy "%s".')
    failure_message = _('Unable to create backup policy "%s".')

    def format_status_message(self, message):
        return message % self.context.get('name', '')

    def handle(self, request, data):
        return self.call(request, scheduler.policy_create,
                         self.values(data))


class UpdatePolicy(_PolicyWorkflow):
    slug = 'update_backup_policy'
    name = _('Edit Backup Policy')
    finalize_button_name = _('Save')
    success_message = _('Saved backup policy "%s".')
    failure_message = _('Unable to save backup policy "%s".')

    def format_status_message(self, message):
        return message % self.context.get('name', '')

    def handle(self, request, data):
        original = self.context['policy']
        changes = {}
        for name, value in self.values(data).items():
            if getattr(original, name, None) != value:
                changes[name] = value
        # A count or time emptied is a rule removed; a protection field
        # emptied is derived from the schedule again.
        for name in COUNTS + ('start_at', 'end_at', 'catchup_window',
                              'verify_every',
                              'verify_schedule') + PROTECTION:
            if (data.get(name) in (None, '')
                    and getattr(original, name, None) is not None):
                changes[name] = None
        if not changes:
            self.object = original
            return True
        return self.call(request, scheduler.policy_update, original.id,
                         changes)
