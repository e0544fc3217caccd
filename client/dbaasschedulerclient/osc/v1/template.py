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
"""``openstack database backup template create|list|show|delete|apply``."""

from osc_lib.command import command
from osc_lib import exceptions

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.osc.v1 import backup_policy

FIELDS = (
    'id', 'name', 'description', 'project_id', 'user_id', 'backend',
    'backup_params', 'schedule_type', 'schedule', 'timezone',
    'overlap_policy', 'catchup_window', 'keep_last', 'keep_daily',
    'keep_weekly', 'keep_monthly', 'max_age_days', 'min_keep', 'rpo',
    'pause_after_failures', 'start_window', 'completion_window',
    'exclusions', 'verify_every', 'verify_check', 'verify_schedule',
    'created_at', 'updated_at')
LIST_FIELDS = ('id', 'name', 'backend', 'schedule', 'timezone')
ENROLMENT_FIELDS = ('instance_id', 'action', 'policy_id')

# What a policy has and a template does not: its instance, and the times
# and runs that would be anchored when the template is made.
_POLICY_ONLY = ('instance_id', 'start_at', 'end_at', 'remaining_runs')

# The API microversion policy templates appeared in.
TEMPLATES = (1, 6)


def _api(app):
    """The client, if the API it speaks has policy templates."""
    api = app.client_manager.backup_scheduler
    version = getattr(api, 'api_version', None)
    if isinstance(version, str):
        major, minor = (int(part) for part in version.split('.'))
        if (major, minor) < TEMPLATES:
            raise exceptions.CommandError(
                'Policy templates need API version %d.%d of the backup '
                'scheduler; this request uses %s (the server, or '
                '--os-backup-scheduler-api-version, allows no later one).'
                % (TEMPLATES + (version,)))
    return api


class CreateTemplate(command.ShowOne):
    """Create a policy template: the default policy of new instances."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        backup_policy.add_policy_options(parser, skip=_POLICY_ONLY,
                                         required=('name', 'schedule'))
        return parser

    def take_action(self, parsed_args):
        api = _api(self.app)
        values = backup_policy.policy_values(parsed_args)
        if parsed_args.backup_params:
            values['backup_params'] = backup_policy.backup_params(
                parsed_args)
        if parsed_args.exclusions:
            values['exclusions'] = parsed_args.exclusions
        return v1.show(api.create_template(values), FIELDS)


class ListTemplate(command.Lister):
    """List the policy templates of the project."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--all-projects', action='store_true', default=False,
            help='Templates of every project (admin only).')
        parser.add_argument(
            '--limit', metavar='<num>', type=int,
            help='At most this many templates (one page).')
        parser.add_argument(
            '--marker', metavar='<template-id>',
            help='Start after this template.')
        return parser

    def take_action(self, parsed_args):
        found = _api(self.app).list_templates(
            all_projects=parsed_args.all_projects or None,
            limit=parsed_args.limit, marker=parsed_args.marker)
        return v1.listing(found, LIST_FIELDS)


class ShowTemplate(command.ShowOne):
    """Show one policy template."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('template', metavar='<template-id>',
                            help='ID of the template.')
        return parser

    def take_action(self, parsed_args):
        return v1.show(_api(self.app).get_template(parsed_args.template),
                       FIELDS)


class DeleteTemplate(command.Command):
    """Delete policy templates (the policies they made stay)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('templates', metavar='<template-id>', nargs='+',
                            help='ID of a template to delete.')
        return parser

    def take_action(self, parsed_args):
        v1.for_each(parsed_args.templates, _api(self.app).delete_template,
                    'delete', noun='policy template',
                    nouns='policy templates')


class ApplyTemplate(command.Lister):
    """Enrol existing instances with a policy template (try --dry-run)."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('template', metavar='<template-id>',
                            help='ID of the template.')
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument(
            '--all-instances', action='store_true', default=False,
            help='Every instance of the project (Trove lists them with '
                 'your credentials).')
        which.add_argument(
            '--instance', metavar='<instance-id>', dest='instances',
            action='append',
            help='An instance of the project to enrol (repeat for more).')
        parser.add_argument(
            '--dry-run', action='store_true', default=False,
            help='Create nothing: list what would be created.')
        return parser

    def take_action(self, parsed_args):
        applied = _api(self.app).apply_template(
            parsed_args.template,
            instance_ids=(None if parsed_args.all_instances
                          else parsed_args.instances),
            dry_run=parsed_args.dry_run)
        return v1.listing(applied['enrolments'], ENROLMENT_FIELDS)
