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
"""``openstack database backup policy`` commands."""

import logging

from osc_lib.cli import parseractions
from osc_lib.command import command

from dbaasschedulerclient.osc import v1
from dbaasschedulerclient.osc.v1 import execution

LOG = logging.getLogger(__name__)

# Every field of a policy, in the order ``show`` prints them.
FIELDS = (
    'id', 'name', 'description', 'project_id', 'user_id', 'instance_id',
    'backend', 'backup_params', 'schedule_type', 'schedule', 'timezone',
    'start_at', 'end_at', 'remaining_runs', 'enabled', 'paused_reason',
    'overlap_policy', 'catchup_window', 'keep_last', 'keep_daily',
    'keep_weekly', 'keep_monthly', 'max_age_days', 'min_keep',
    'start_window', 'completion_window', 'exclusions',
    'next_execution_time',
    'last_execution_id', 'created_at', 'updated_at', 'rpo',
    'effective_rpo', 'protection', 'last_success_at', 'protected_until',
    'protection_changed_at', 'pause_after_failures',
    'consecutive_failures', 'verify_every', 'verify_check',
    'verify_schedule', 'verify_next_at')
LIST_FIELDS = ('id', 'name', 'instance_id', 'schedule_type', 'schedule',
               'timezone', 'enabled', 'next_execution_time')
LONG_FIELDS = LIST_FIELDS + (
    'project_id', 'backend', 'backup_params', 'start_at', 'end_at',
    'remaining_runs', 'overlap_policy', 'catchup_window', 'keep_last',
    'keep_daily', 'keep_weekly', 'keep_monthly', 'max_age_days',
    'min_keep', 'start_window', 'completion_window', 'exclusions',
    'paused_reason', 'last_execution_id', 'protection',
    'last_success_at', 'protected_until', 'consecutive_failures')

# Options that set one field each: (option, field, type, metavar, help).
_VALUE_OPTIONS = (
    ('--name', 'name', str, '<name>',
     'Name of the policy (default: backup-<instance-id>).'),
    ('--description', 'description', str, '<description>',
     'Description of the policy.'),
    ('--instance', 'instance_id', str, '<instance-id>',
     'ID of the database instance to back up (for the local backend, its '
     'name in the service\'s [local_backend] instances).'),
    ('--backend', 'backend', str, '<backend>',
     'Backup backend, as the service offers them: trove (Trove instances), '
     'local (databases the service itself reaches) (default: the '
     'service\'s, trove in a cloud, local in the all-in-one service).'),
    ('--schedule-type', 'schedule_type', str, '<type>',
     'How --schedule reads: cron (default), interval or once.'),
    ('--schedule', 'schedule', str, '<schedule>',
     'When to back up: a cron expression such as "30 2 * * *" or an alias '
     'such as @daily; with --schedule-type interval the time between '
     'runs in seconds, such as 86400, or with a unit: 90m, 6h, 1d; with '
     'once an ISO 8601 date and time, '
     'such as 2027-01-31T02:30:00 (in the policy\'s time zone).'),
    ('--timezone', 'timezone', str, '<zone>',
     'IANA time zone the schedule is read in, such as Europe/Berlin '
     '(default: UTC).'),
    ('--start-at', 'start_at', str, '<time>',
     'No run before this ISO 8601 time (UTC unless it has an offset); an '
     'interval counts from it (default for an interval: now).'),
    ('--end-at', 'end_at', str, '<time>',
     'No run after this ISO 8601 time (UTC unless it has an offset).'),
    ('--remaining-runs', 'remaining_runs', int, '<count>',
     'Stop after this many more runs.'),
    ('--overlap-policy', 'overlap_policy', str, '<policy>',
     'What a run does while another backup of the instance is running: '
     'skip (default) or queue.'),
    ('--catchup-window', 'catchup_window', int, '<seconds>',
     'How late a run missed during an outage may still be taken, in '
     'seconds (default: the operator\'s, one hour unless changed).'),
    ('--start-window', 'start_window', int, '<seconds>',
     'How long after its slot a backup may still start, in seconds (60 '
     'or more); a slot not started by then ends EXPIRED (default: half '
     'the time to the next slot, from a minute to eight hours).'),
    ('--completion-window', 'completion_window', int, '<seconds>',
     'How long after its slot a backup should have finished, in seconds; '
     'a longer one is not cancelled but marked (default: the time to the '
     'next slot, from an hour to seven days).'),
    ('--keep-last', 'keep_last', int, '<count>',
     'Retention: keep the newest <count> backups.'),
    ('--keep-daily', 'keep_daily', int, '<count>',
     'Retention: keep the newest backup of each of the last <count> days '
     'with a backup.'),
    ('--keep-weekly', 'keep_weekly', int, '<count>',
     'Retention: the same for ISO weeks.'),
    ('--keep-monthly', 'keep_monthly', int, '<count>',
     'Retention: the same for calendar months.'),
    ('--max-age-days', 'max_age_days', int, '<days>',
     'Retention: keep every backup less than <days> days old.'),
    ('--rpo', 'rpo', int, '<seconds>',
     'Recovery-point objective: the maximum acceptable age of the newest '
     'successful backup, in seconds (default: one and a half times the '
     'longest gap between two runs; API 1.2).'),
    ('--pause-after-failures', 'pause_after_failures', int, '<count>',
     'Pause the policy after <count> failed backups in a row (default: '
     'never; API 1.2).'),
    ('--min-keep', 'min_keep', int, '<count>',
     'Retention floor: never delete below the newest <count> successful '
     'backups, whatever the other rules say.'),
    ('--verify-every', 'verify_every', int, '<count>',
     'Verify every <count>th successful backup: restore it into a scratch '
     'database, check it, delete the scratch database; retention then '
     'keeps the newest verified backup (default: never; API 1.7).'),
    ('--verify-schedule', 'verify_schedule', str, '<cron>',
     'Verify on a schedule of its own instead of every Nth backup: a cron '
     'expression in the policy\'s time zone; each slot verifies the newest '
     'backup newer than the last one verified (none: the slot passes). '
     'Excludes --verify-every (default: none; API 1.8).'),
)
_CHOICES = {'schedule_type': ('cron', 'interval', 'once'),
            'overlap_policy': ('skip', 'queue')}
# Fields a policy may have without a value, and what ``set --no-<field>``
# does to them.
NULLABLE = {
    'description': 'Remove the description.',
    'start_at': 'Remove the start time.',
    'end_at': 'Run with no end time.',
    'remaining_runs': 'Run with no limit on the number of runs.',
    'catchup_window': 'Use the operator\'s catch-up window.',
    'start_window': 'Derive the start window from the schedule.',
    'completion_window': 'Derive the completion window from the schedule.',
    'keep_last': 'Remove this retention rule.',
    'keep_daily': 'Remove this retention rule.',
    'keep_weekly': 'Remove this retention rule.',
    'keep_monthly': 'Remove this retention rule.',
    'max_age_days': 'Remove this retention rule.',
    'rpo': 'Use the default RPO, derived from the schedule.',
    'pause_after_failures': 'Never pause after failures.',
    'min_keep': 'Remove the retention floor.',
    'verify_every': 'Turn scheduled verification off.',
    'verify_schedule': 'Turn verification on a schedule off.',
}


def backup_param(value):
    """A --backup-param value: true/false are booleans, the rest text.

    Trove's ``incremental`` must be a boolean: the string "false" would
    read as true.
    """
    return {'true': True, 'false': False}.get(value.lower(), value)


def _dest(field):
    return 'field_' + field


class _Unset:
    """The default of field options: not given (None means "remove")."""

    def __repr__(self):
        return '<not given>'


UNSET = _Unset()


def add_policy_options(parser, update=False, skip=(),
                       required=('instance_id', 'schedule')):
    """The options of ``create``; of ``set`` with ``update``.

    ``skip``: fields without an option (a template has no instance);
    ``required``: the fields ``create`` must be given.
    """
    for option, field, kind, metavar, help_text in _VALUE_OPTIONS:
        if field in skip:
            continue
        group = parser
        if update and field in NULLABLE:
            group = parser.add_mutually_exclusive_group()
        group.add_argument(
            option, dest=_dest(field), metavar=metavar, type=kind,
            choices=_CHOICES.get(field), help=help_text,
            required=not update and field in required)
        if update and field in NULLABLE:
            group.add_argument(
                '--no-' + option[2:], dest=_dest(field),
                action='store_const', const=None, help=NULLABLE[field])
    parser.set_defaults(**{_dest(field): UNSET
                           for _o, field, _k, _m, _h in _VALUE_OPTIONS})
    if update:
        parser.add_argument(
            '--no-backup-params', action='store_true', default=False,
            help='Remove every backup parameter (with --backup-param: '
                 'replace them).')
    if update:
        parser.add_argument(
            '--no-exclusions', action='store_true', default=False,
            help='Remove every exclusion window (with --exclusion: replace '
                 'them).')
    parser.add_argument(
        '--exclusion', metavar='<window>', dest='exclusions',
        action='append',
        help='A period, in the policy\'s time zone, when no backup starts '
             '(repeat for more): a weekly range "Fri 18:00-Mon 06:00", days '
             '"Sat-Sun", a daily range "01:00-03:00" or "Mon-Fri '
             '09:00-17:00", a date "2026-12-24" or dates '
             '"2026-12-24..2026-12-26". A slot inside one is skipped '
             '(SKIPPED, reason "excluded"), not moved.%s' % (
                 ' Added to those the policy has.' if update else ''))
    check = parser.add_mutually_exclusive_group() if update else parser
    check.add_argument(
        '--verify-sql', metavar='<query>',
        help='A read-only SQL query a verification runs on the restored '
             'database; the first column of its first row must equal '
             '--verify-expected (API 1.7).')
    if update:
        check.add_argument(
            '--no-verify-sql', action='store_true', default=False,
            help='Remove the SQL check of verifications.')
    parser.add_argument(
        '--verify-expected', metavar='<value>',
        help='What --verify-sql must return (compared as text).')
    parser.add_argument(
        '--backup-param', metavar='<key=value>', dest='backup_params',
        action=parseractions.KeyValueAction,
        help='A parameter of the backend for every backup (repeat for more), '
             'such as incremental=true (true and false are booleans) or, '
             'for the fake backend, fake_build_seconds=5.%s' % (
                 ' Added to those the policy has.' if update else ''))


def policy_values(parsed_args):
    """The fields the options give: only those the user named."""
    found = {}
    for _option, field, _kind, _metavar, _help in _VALUE_OPTIONS:
        value = getattr(parsed_args, _dest(field), UNSET)
        if value is not UNSET:
            found[field] = value
    if parsed_args.verify_sql:
        found['verify_check'] = {'sql': parsed_args.verify_sql,
                                 'expected': parsed_args.verify_expected}
    elif getattr(parsed_args, 'no_verify_sql', False):
        found['verify_check'] = None
    return found


def backup_params(parsed_args):
    return {key: backup_param(value)
            for key, value in (parsed_args.backup_params or {}).items()}


class CreateBackupPolicy(command.ShowOne):
    """Create a backup policy: when to back up an instance, what to keep."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        add_policy_options(parser)
        parser.add_argument(
            '--disabled', action='store_true', default=False,
            help='Create the policy paused (resume it to start).')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        values = policy_values(parsed_args)
        if parsed_args.backup_params:
            values['backup_params'] = backup_params(parsed_args)
        if parsed_args.exclusions:
            values['exclusions'] = parsed_args.exclusions
        if parsed_args.disabled:
            values['enabled'] = False
        return v1.show(api.create_policy(values), FIELDS)


class ListBackupPolicy(command.Lister):
    """List backup policies, oldest first."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--name', metavar='<name>',
            help='Only the policies with this name.')
        parser.add_argument(
            '--instance', metavar='<instance-id>',
            help='Only the policies of this database instance (ID).')
        enabled = parser.add_mutually_exclusive_group()
        enabled.add_argument(
            '--enabled', action='store_true', default=None,
            help='Only policies that run (not paused).')
        enabled.add_argument(
            '--disabled', dest='enabled', action='store_false',
            help='Only paused policies.')
        parser.add_argument(
            '--all-projects', action='store_true', default=False,
            help='Policies of every project (admin only).')
        parser.add_argument(
            '--limit', metavar='<num>', type=int,
            help='At most this many policies (one page); without it, every '
                 'page is fetched.')
        parser.add_argument(
            '--marker', metavar='<policy-id>',
            help='Start after this policy (the last ID of the previous '
                 'page).')
        parser.add_argument(
            '--long', action='store_true', default=False,
            help='More columns: project, backend, limits, retention.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        found = api.list_policies(
            name=parsed_args.name, instance_id=parsed_args.instance,
            enabled=parsed_args.enabled,
            all_projects=parsed_args.all_projects or None,
            limit=parsed_args.limit, marker=parsed_args.marker)
        fields = LONG_FIELDS if parsed_args.long else LIST_FIELDS
        return v1.listing(found, fields)


class ShowBackupPolicy(command.ShowOne):
    """Show a backup policy."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('policy', metavar='<policy>',
                            help='Name or ID of the backup policy.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        return v1.show(v1.find_policy(api, parsed_args.policy), FIELDS)


class SetBackupPolicy(command.Command):
    """Change a backup policy: only the options given change."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('policy', metavar='<policy>',
                            help='Name or ID of the backup policy.')
        add_policy_options(parser, update=True)
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        policy = v1.find_policy(api, parsed_args.policy)
        changes = policy_values(parsed_args)
        if parsed_args.no_backup_params or parsed_args.backup_params:
            params = {}
            if not parsed_args.no_backup_params:
                # The API replaces backup_params whole; keep the others.
                params = dict(policy.get('backup_params') or {})
            params.update(backup_params(parsed_args))
            changes['backup_params'] = params or None
        if parsed_args.no_exclusions or parsed_args.exclusions:
            windows = []
            if not parsed_args.no_exclusions:
                windows = list(policy.get('exclusions') or [])
            windows.extend(parsed_args.exclusions or [])
            changes['exclusions'] = windows
        if changes:
            api.update_policy(policy['id'], changes)


class _EachPolicy(command.Command):
    """Do ``ACTION`` to each policy named on the command line."""

    ACTION = None

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('policies', metavar='<policy>', nargs='+',
                            help='Name or ID of a backup policy (repeat for '
                                 'more).')
        return parser

    def act(self, api, policy_id, parsed_args):
        raise NotImplementedError()

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        v1.for_each(parsed_args.policies,
                    lambda name: self.act(api, v1.find_policy(api, name)['id'],
                                          parsed_args), self.ACTION)


class DeleteBackupPolicy(_EachPolicy):
    """Delete backup policies; their executions stay as history.

    Their backups stay too, unless --delete-backups.
    """

    ACTION = 'delete'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--delete-backups', action='store_true', default=False,
            help='Delete the policies\' backups first, except held ones '
                 'and those a backup that stays is built on (default: '
                 'keep every backup).')
        return parser

    def act(self, api, policy_id, parsed_args):
        if parsed_args.delete_backups:
            api.delete_policy(policy_id, delete_backups=True)
        else:
            api.delete_policy(policy_id)


class PauseBackupPolicy(_EachPolicy):
    """Pause backup policies: no more runs until resumed."""

    ACTION = 'pause'

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument(
            '--reason', metavar='<reason>',
            help='Why, shown as the policy\'s paused reason.')
        return parser

    def act(self, api, policy_id, parsed_args):
        api.pause_policy(policy_id, reason=parsed_args.reason)


class ResumeBackupPolicy(_EachPolicy):
    """Resume paused backup policies from now on, without missed runs."""

    ACTION = 'resume'

    def act(self, api, policy_id, parsed_args):
        api.resume_policy(policy_id)


class RunBackupPolicy(command.ShowOne):
    """Back up now: start a manual execution of a backup policy."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('policy', metavar='<policy>',
                            help='Name or ID of the backup policy.')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        policy = v1.find_policy(api, parsed_args.policy)
        return v1.show(api.run_policy(policy['id']), execution.FIELDS)


class NextRunsBackupPolicy(command.Lister):
    """Preview the next run times of a backup policy."""

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('policy', metavar='<policy>',
                            help='Name or ID of the backup policy.')
        parser.add_argument(
            '--count', metavar='<count>', type=int,
            help='How many run times (default: 10; the API caps it).')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        policy = v1.find_policy(api, parsed_args.policy)
        return v1.run_times(api.next_runs(policy['id'],
                                          count=parsed_args.count))


class LifecycleBackupPolicy(command.Lister):
    """Preview what lies ahead of a backup policy.

    Its next slots, each with the end of its start window (not started by
    then, it ends EXPIRED), of its completion window, and the exclusion
    window it falls in (it is then skipped, not moved); with
    ``--retention``, what retention will delete at its next runs,
    supposing each succeeds with a full backup (holds, the floor, chains
    and the grace applied).
    """

    def get_parser(self, prog_name):
        parser = super().get_parser(prog_name)
        parser.add_argument('policy', metavar='<policy>',
                            help='Name or ID of the backup policy.')
        parser.add_argument(
            '--count', metavar='<count>', type=int,
            help='How many slots or runs (default: 10; the API caps it).')
        parser.add_argument(
            '--retention', action='store_true',
            help='Show what retention will delete at the next runs instead '
                 'of the slots (API 1.3).')
        return parser

    def take_action(self, parsed_args):
        api = self.app.client_manager.backup_scheduler
        policy = v1.find_policy(api, parsed_args.policy)
        found = api.lifecycle(policy['id'], count=parsed_args.count)
        if not parsed_args.retention:
            return v1.slot_rows(found['slots'], policy['timezone'])
        rows = []
        for run in found.get('retention', []):
            rows.append((
                run['at'], run['backup_id'],
                '\n'.join('%s (after %s)' % (e['backup_id'],
                                             e['delete_after'])
                          for e in run['expires']),
                '\n'.join(d['backup_id'] + (' (with %s)' % d['with']
                                            if d.get('with') else '')
                          for d in run['deletes']),
                run['remaining']))
        return (('Run at', 'New backup', 'Expires', 'Deletes',
                 'Remaining'), rows)
