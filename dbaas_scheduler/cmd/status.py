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
"""dbaas-scheduler-status: checks to run before and after an upgrade."""

from oslo_config import cfg
from oslo_log import log as logging
from oslo_upgradecheck import common_checks
from oslo_upgradecheck import upgradecheck
from oslo_utils import timeutils

from dbaas_scheduler.cmd import auth_checks
from dbaas_scheduler.cmd import common
from dbaas_scheduler import config
from dbaas_scheduler import context as dbaas_context
from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler.db import names
from dbaas_scheduler.db import services as db_services
from dbaas_scheduler import policy
from dbaas_scheduler import servicegroup

CONF = cfg.CONF
PROGRAM = 'dbaas-scheduler-status'
# As oslo.upgradecheck: 1 and 2 are a check's warning and failure.
ERROR_STATUS = 255
# The renames of duplicate policy names the check lists.
MAX_RENAMES_SHOWN = 20


class Checks(upgradecheck.UpgradeCommands):
    """The checks ``dbaas-scheduler-status upgrade check`` runs."""

    def __init__(self, argv=()):
        self._argv = list(argv)

    def check(self):
        # The command line has been parsed by now (upgradecheck.main).
        logging.setup(CONF, config.PROJECT)
        try:
            # A bad option value, or a database that cannot be reached,
            # is one line, not a check's traceback.
            config.check_values(CONF)
            common.check_database(CONF)
        except Exception as exc:
            if not common.report_mistake(PROGRAM, exc, self._argv):
                raise
            return ERROR_STATUS
        return super().check()

    def _configure_database(self):
        # Once, after the command line was parsed (which happens after this
        # object was made).
        if not getattr(self, '_database_configured', False):
            db_api.configure(CONF)
            self._database_configured = True

    def _check_database_schema(self):
        self._configure_database()
        current = migration.version()
        head = migration.head()
        if current is None:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'The database has no schema. Run "dbaas-scheduler-manage db '
                'upgrade".')
        if current != head and migration.is_behind(current):
            # What a deployment tool sees when it checks with the new code
            # before migrating (kolla-ansible goes on at 0 or 1): the
            # expected state, with what to do next.
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                'The database schema is at revision %s, behind the %s this '
                'code needs. Run "dbaas-scheduler-manage db sync" before '
                'starting the services of this release.' % (current, head))
        if current != head:
            return upgradecheck.Result(
                upgradecheck.Code.FAILURE,
                'The database schema is at revision %s, which this code '
                'does not know (it needs %s): a newer release upgraded it, '
                'or it is not a dbaas-scheduler database. Run the '
                'release that made it.' % (current, head))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_services(self):
        # Run after an upgrade, while services may still be starting: a
        # missing engine or worker is a warning, not a failure.
        self._configure_database()
        if migration.version() != migration.head():
            return upgradecheck.Result(
                upgradecheck.Code.SUCCESS,
                'Not checked: the database schema is not current yet.')
        now = timeutils.utcnow(True)
        up = {row.binary for row in db_services.list_services(
            dbaas_context.get_admin_context())
            if servicegroup.is_up(row, now, CONF.service_down_time)}
        missing = [binary for binary in ('dbaas-scheduler-engine',
                                         'dbaas-scheduler-worker')
                   if binary not in up]
        if missing:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                'No %s has reported in the last %d seconds: nothing is '
                'dispatched or backed up until one runs. Start it, or check '
                'its log.' % (' nor '.join(missing), CONF.service_down_time))
        return upgradecheck.Result(upgradecheck.Code.SUCCESS)

    def _check_policy_names(self):
        # Before the migration that makes names unique in a project: the
        # renames it will make, so that nobody is surprised by them.
        self._configure_database()
        if migration.version() is None:
            return upgradecheck.Result(
                upgradecheck.Code.SUCCESS,
                'Not checked: the database has no schema.')
        renames = names.duplicate_renames(db_api.list_policy_names(
            dbaas_context.get_admin_context()))
        if not renames:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        shown = sorted(renames.items())[:MAX_RENAMES_SHOWN]
        return upgradecheck.Result(
            upgradecheck.Code.WARNING,
            '%d backup policies share their name with an older policy of '
            'their project; names are unique in a project from this '
            'release on, and "dbaas-scheduler-manage db sync" renames '
            'them: %s%s.' % (
                len(renames), ', '.join('policy %s to "%s"' % item
                                        for item in shown),
                ', ...' if len(renames) > len(shown) else ''))

    def _check_authentication(self):
        # auth_strategy = noauth, or unset without [keystone_authtoken]:
        # what dbaas-scheduler-all then serves with.
        problem = None
        if auth_checks.all_in_one_auth_strategy(CONF) == 'noauth':
            problem = auth_checks.unauthenticated_public_access(CONF, 'noauth')
        if problem is None:
            return upgradecheck.Result(upgradecheck.Code.SUCCESS)
        problem = problem[0].upper() + problem[1:]
        if CONF.api.allow_unauthenticated_public_access:
            return upgradecheck.Result(
                upgradecheck.Code.WARNING,
                '%s; [api] allow_unauthenticated_public_access allows it. '
                'Set auth_strategy = keystone unless every client of that '
                'network is trusted.' % problem)
        return upgradecheck.Result(
            upgradecheck.Code.FAILURE,
            '%s; dbaas-scheduler-all and dbaas-scheduler-api refuse to start '
            'so. Set auth_strategy = keystone with [keystone_authtoken], or '
            'bind to 127.0.0.1.' % problem)

    _upgrade_checks = (
        ('Database schema', _check_database_schema),
        ('Policy names', _check_policy_names),
        ('Engines and workers', _check_services),
        ('Authentication', _check_authentication),
        ('Policy file JSON to YAML migration',
         (common_checks.check_policy_json, {'conf': CONF})),
    )


def main(argv=None):
    return common.run(PROGRAM, _main, argv, error_status=ERROR_STATUS)


def _main(argv):
    config.prepare(CONF, command_line=True)
    policy.set_defaults(CONF)
    # upgradecheck.main, not register_cli_options and run: only main keeps
    # the parsed configuration where UpgradeCommands.check reads --json.
    return upgradecheck.main(CONF, config.PROJECT, Checks(argv), argv)
