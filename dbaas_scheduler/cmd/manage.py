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
"""dbaas-scheduler-manage: database administration from the command line."""

import argparse
import datetime
import sys

from alembic import util as alembic_util
from oslo_config import cfg
from oslo_utils import timeutils
import prettytable

from dbaas_scheduler.backends import loader as backends_loader
from dbaas_scheduler.cmd import common
from dbaas_scheduler import config
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.db import purge as db_purge
from dbaas_scheduler import exception
from dbaas_scheduler.objects import backup_policy as backup_policy_obj
from dbaas_scheduler import timezones

CONF = cfg.CONF


class DbCommands:
    """``dbaas-scheduler-manage db ...``"""

    def upgrade(self, conf):
        revision = conf.command.revision
        before = migration.version()
        try:
            migration.upgrade(revision)
        except alembic_util.CommandError as exc:
            print('Cannot upgrade to %r: %s' % (revision, exc),
                  file=sys.stderr)
            return 1
        after = migration.version()
        if before == after:
            print('Database already at %s.' % after)
        else:
            print('Database upgraded from %s to %s.' % (before or '<empty>',
                                                        after))
        return 0

    def stamp(self, conf):
        revision = conf.command.revision
        before = migration.version()
        try:
            migration.stamp(revision)
        except alembic_util.CommandError as exc:
            print('Cannot stamp %r: %s' % (revision, exc), file=sys.stderr)
            return 1
        print('Database stamped %s (was %s); the schema was not changed.'
              % (migration.version(), before or '<empty>'))
        return 0

    def version(self, conf):
        print(migration.version()
              or '<empty: run "dbaas-scheduler-manage db upgrade">')
        return 0


def _table(columns, rows):
    table = prettytable.PrettyTable(columns)
    table.align = 'l'
    for row in rows:
        table.add_row(['' if value is None else value for value in row])
    return table.get_string()


def _when(value):
    return value.isoformat(timespec='seconds') if value else None


class PolicyCommands:
    """``dbaas-scheduler-manage policy ...``: for clouds without the API."""

    def create(self, conf):
        args = conf.command
        values = {'name': args.policy_name, 'instance_id': args.instance,
                  'backend': args.backend, 'schedule': args.schedule,
                  'schedule_type': args.schedule_type,
                  'timezone': args.timezone, 'project_id': args.project}
        for rule in ('keep_last', 'keep_daily', 'keep_weekly',
                     'keep_monthly', 'max_age_days'):
            if getattr(args, rule) is not None:
                values[rule] = getattr(args, rule)
        # The operator, on the service's host: an admin, whom the
        # backends' policy rules allow, and who may use every installed
        # backend ([api] enabled_backends limits the API's users).
        operator = dbaas_context.RequestContext(
            is_admin=True, roles=['admin'], overwrite=False)
        conf.set_override('enabled_backends', backends_loader.available(),
                          group='api')
        try:
            policy = backup_policy_obj.create_policy(
                operator, conf,
                {k: v for k, v in values.items() if v is not None})
        except exception.Invalid as exc:
            print(exc, file=sys.stderr)
            return 1
        print(_table(['Field', 'Value'], [
            ('id', policy.id), ('name', policy.name),
            ('instance_id', policy.instance_id),
            ('backend', policy.backend), ('schedule', policy.schedule),
            ('timezone', policy.timezone),
            ('next_execution_time', _when(policy.next_execution_time))]))
        return 0

    def list(self, conf):
        rows = db_api.list_policies(dbaas_context.get_admin_context())
        print(_table(
            ['ID', 'Name', 'Instance', 'Backend', 'Schedule', 'Time zone',
             'Enabled', 'Next run (UTC)'],
            [(p.id, p.name, p.instance_id, p.backend, p.schedule,
              p.timezone, p.enabled, _when(p.next_execution_time))
             for p in rows]))
        return 0


class ExecutionCommands:
    """``dbaas-scheduler-manage execution ...``"""

    def list(self, conf):
        # The newest N, shown oldest first.
        rows = reversed(db_api.list_executions(
            dbaas_context.get_admin_context(),
            policy_id=conf.command.policy, limit=conf.command.limit))
        print(_table(
            ['ID', 'Policy', 'Scheduled (UTC)', 'Status', 'Backup',
             'Reason or fault'],
            [(e.id, e.policy_id, _when(e.scheduled_at), e.status,
              e.backup_id, e.fault or e.status_reason) for e in rows]))
        return 0

    def purge(self, conf):
        args = conf.command
        if args.before is not None:
            try:
                before = timezones.parse_time(args.before, '--before')
            except exception.Invalid as exc:
                print(exc, file=sys.stderr)
                return 1
        else:
            before = (timeutils.utcnow(True)
                      - datetime.timedelta(days=args.older_than))
        verb = 'Would delete' if args.dry_run else 'Deleted'

        def on_batch(rows):
            if args.verbose:
                for row in rows:
                    print('%s execution %s of policy %s (%s, scheduled '
                          '%s)' % (verb, row.id, row.policy_id, row.status,
                                   _when(row.scheduled_at)))

        result = db_purge.purge_executions(
            dbaas_context.get_admin_context(), before,
            batch_size=args.batch_size, dry_run=args.dry_run,
            on_batch=on_batch)
        print('%s %d of %d finished executions that finished before %s '
              '(%d batches%s).' % (
                  verb, result.deleted, result.scanned, _when(before),
                  result.batches, '' if args.dry_run else
                  '; longest delete transaction %.3f s'
                  % result.longest_batch))
        print(_table(['Status', 'Executions ' + verb.lower()],
                     sorted(result.deleted_by_status.items())))
        print(_table(['Kept because', 'Executions'],
                     [(_KEPT_REASONS[reason], count)
                      for reason, count in result.kept.items()]))
        return 0


# The reasons db_purge.purge_executions keeps an old execution.
_KEPT_REASONS = {
    'newest': 'newest execution of its policy',
    'last_execution': "its policy's last_execution_id",
    'kept_backup': 'its backup is still kept',
    'deletion_record': 'records the deletion of a kept execution\'s backup',
}


def _add_policy_parsers(subparsers):
    commands = PolicyCommands()
    parser = subparsers.add_parser(
        'policy', help='Create and list backup policies directly in the '
                       'database (the REST API does this for users).')
    actions = parser.add_subparsers(dest='policy_command', required=True)
    create = actions.add_parser('create', help='Create a backup policy.')
    # Not dest 'name': oslo.config keeps the sub-command's name there.
    create.add_argument('--name', dest='policy_name',
                        help='Policy name (default: backup-<instance>).')
    create.add_argument('--instance', required=True,
                        help='Instance to back up: a Trove instance id, or '
                             'a name in [local_backend] instances.')
    create.add_argument('--backend', default='trove',
                        help='Backend plugin: trove (default), local, ...')
    create.add_argument('--schedule', required=True,
                        help='Cron expression, interval seconds or ISO '
                             'time, per --schedule-type.')
    create.add_argument('--schedule-type', default='cron',
                        choices=['cron', 'interval', 'once'])
    create.add_argument('--timezone', default='UTC',
                        help='IANA time zone of the schedule (default UTC).')
    create.add_argument('--project', default='admin',
                        help='Project id that owns the policy (default: '
                             'admin, a label that serves the local '
                             'backend; the trove backend needs the id of '
                             'the instance\'s project).')
    for rule in ('keep-last', 'keep-daily', 'keep-weekly', 'keep-monthly',
                 'max-age-days'):
        create.add_argument('--' + rule, type=int,
                            help='Retention rule %s.' % rule)
    create.set_defaults(func=commands.create)
    listing = actions.add_parser('list', help='List the backup policies.')
    listing.set_defaults(func=commands.list)


def _add_execution_parsers(subparsers):
    commands = ExecutionCommands()
    parser = subparsers.add_parser(
        'execution', help='Show the history of backup executions.')
    actions = parser.add_subparsers(dest='execution_command', required=True)
    listing = actions.add_parser('list', help='List executions, oldest '
                                              'first.')
    listing.add_argument('--policy', help='Only this policy\'s.')
    listing.add_argument('--limit', type=int, default=50,
                         help='Show the newest N (default 50).')
    listing.set_defaults(func=commands.list)

    purge = actions.add_parser(
        'purge', help='Delete old finished executions, a batch at a time. '
                      'The newest execution of each policy, its '
                      'last_execution_id, and executions whose backup is '
                      'still kept stay.')
    when = purge.add_mutually_exclusive_group(required=True)
    when.add_argument('--before', metavar='TIME',
                      help='Delete executions finished before this ISO '
                           '8601 time (UTC without an offset).')
    when.add_argument('--older-than', type=_positive, metavar='DAYS',
                      help='Delete executions finished more than DAYS '
                           'days ago.')
    purge.add_argument('--dry-run', action='store_true',
                       help='Only say what would be deleted.')
    purge.add_argument('--batch-size', type=_positive, default=1000,
                       help='Executions per batch, each deleted in a '
                            'transaction of its own (default 1000).')
    purge.add_argument('--verbose', action='store_true',
                       help='Print every execution deleted.')
    purge.set_defaults(func=commands.purge)


def _positive(value):
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(
            'must be a whole number of 1 or more, not %r' % value)
    return number


def add_command_parsers(subparsers):
    _add_policy_parsers(subparsers)
    _add_execution_parsers(subparsers)
    db = DbCommands()
    db_parser = subparsers.add_parser(
        'db', help='Create or upgrade the database schema, show its version.')
    db_commands = db_parser.add_subparsers(dest='db_command', required=True)

    for name, extra in (('upgrade', ''),
                        ('sync', ' The same as "db upgrade", by the name '
                                 'other OpenStack services use.')):
        upgrade = db_commands.add_parser(
            name, help='Upgrade the schema (to the newest revision unless '
                       '--revision is given).' + extra)
        upgrade.add_argument('--revision', default='head',
                             help='Alembic revision to upgrade to; '
                                  'default: head.')
        upgrade.set_defaults(func=db.upgrade)

    stamp = db_commands.add_parser(
        'stamp', help='Record a revision as the schema\'s without changing '
                      'the schema: for a database whose schema was made or '
                      'repaired by hand. A wrong revision makes the next '
                      'upgrade fail or skip changes.')
    stamp.add_argument('revision', help='Alembic revision, or "head".')
    stamp.set_defaults(func=db.stamp)

    show = db_commands.add_parser(
        'version', help='Print the schema revision of the database.')
    show.set_defaults(func=db.version)


command_opt = cfg.SubCommandOpt(
    'command', title='Commands', help='Available commands',
    handler=add_command_parsers)


def main(argv=None):
    return common.run('dbaas-scheduler-manage', _main, argv)


def _main(argv):
    CONF.register_cli_opt(command_opt)
    config.parse_args(CONF, argv, command_line=True)
    common.check_database(CONF)
    db_api.configure(CONF)
    return CONF.command.func(CONF)
