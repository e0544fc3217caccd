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
"""One chaos run: servers, policies, processes, faults, drain, verdict."""

import collections
import datetime
import os
import time
import uuid

from oslo_utils import timeutils
import sqlalchemy as sa
from tools.benchmarks import common
from tools.benchmarks import database
from tools.benchmarks import reporting
from tools.chaos import checker
from tools.chaos import clustered
from tools.chaos import faults as chaos_faults
from tools.chaos import holds as chaos_holds
from tools.chaos import servers

from dbaas_scheduler.db import models
from dbaas_scheduler import enums
from dbaas_scheduler.testing import fake_trove

POLICIES = models.BackupPolicy.__table__
EXECUTIONS = models.BackupExecution.__table__
SERVICES = models.Service.__table__
RESTORES = models.BackupRestore.__table__
PROJECT = 'chaos-project'

# The timing options of the services, by --timing.  "short" makes every
# recovery happen within a run of minutes; "default" is what a deployment
# gets with no configuration.
TIMING = {
    'short': {
        'DEFAULT': {'heartbeat_interval': 2, 'service_down_time': 10},
        'engine': {'sweep_interval': 2, 'dispatch_timeout': 15},
        'worker': {'lease_duration': 30, 'poll_interval': 3,
                   'reconcile_interval': 30, 'reconcile_window': 600,
                   'expiry_sweep_interval': 5},
        'service_credentials': {'timeout': 10},
    },
    'default': {},
}


class ChaosProcess(common.ServiceProcess):
    """An engine or a worker of the run, with a label for the report."""

    def __init__(self, number, binary, config_file, log_file):
        super().__init__(number, binary, config_file, log_file)
        self.label = '%s-%d' % (binary.rsplit('-', 1)[-1], number)


class ChaosRun(common.Bench):
    """One invocation of ``python -m tools.chaos``."""

    def __init__(self, args):
        super().__init__(args, 'dbaas-chaos-', ('worker', 'engine'))
        if os.geteuid() == 0:
            # The private servers run as their system users, which must
            # reach their data directories under the work directory.
            os.chmod(self.workdir, 0o755)
        self.broker = None
        self.database_server = None
        self.clusters = None
        self.trove = None
        self.processes = []
        self.policies = {}
        # Retention policies: {policy id: min_keep}.
        self.retention = {}
        # Policies that verify (--verify-every): {policy id: verify_every}.
        self.verifying = {}

    # Set-up ------------------------------------------------------------

    def start_servers(self):
        args = self.args
        if args.cluster:
            self.clusters = clustered.Clusters(self.workdir, args.cluster,
                                               args.transport_url)
            self.clusters.start()
            self.transport_url = self.clusters.transport_url
            args.admin_url = self.clusters.admin_url
        elif args.transport_url is None:
            self.broker = servers.RabbitMQNode(self.workdir)
            reporting.progress('starting a private RabbitMQ node %s on port '
                               '%d', self.broker.node, self.broker.port)
            self.broker.start()
            self.transport_url = self.broker.transport_url
        admin_url = args.admin_url
        if admin_url is None:
            self.database_server = servers.database_server(args.database,
                                                           self.workdir)
            admin_url = self.database_server.admin_url
        self.db = database.Database(args.database, name='dbaas_chaos',
                                    admin_url=admin_url)
        self.db.create()
        path = os.path.join(self.workdir, 'manage.conf')
        common.write_config(path, {
            'database': {'connection': self.db.url_string}})
        common.upgrade_schema(path)
        self.trove = fake_trove.FakeTrove(
            behaviour=fake_trove.BackupBehaviour(
                build_seconds=args.build_seconds),
            record_requests=False)
        self.trove.setUp()

    def seed(self):
        """``--policies`` policies due every minute, one instance each."""
        now = timeutils.utcnow(True)
        first = (now + datetime.timedelta(seconds=90)).replace(
            second=0, microsecond=0)
        rows = []
        share = self.args.retention_share
        short = int(round(self.args.policies * self.args.short_window_share))
        for number in range(self.args.policies):
            instance_id = self.trove.add_instance(project_id=PROJECT)
            policy_id = str(uuid.uuid4())
            row = {
                'id': policy_id, 'name': 'chaos-%d' % number,
                'project_id': PROJECT, 'instance_id': instance_id,
                'backend': 'trove', 'schedule_type': 'cron',
                'schedule': '* * * * *', 'timezone': 'UTC', 'enabled': True,
                'overlap_policy': 'skip', 'next_execution_time': first,
                # Short start windows on the last policies, retention
                # on the first: apart, so each fault's effect shows.
                'start_window': (
                    self.args.short_window_seconds
                    if number >= self.args.policies - short else None),
                'created_at': now, 'keep_last': None, 'min_keep': None,
                # Every row has every key (an executemany takes the
                # columns of the first).
                'backup_params': None, 'verify_every': None}
            if (self.args.verify_every
                    and number < self.args.verify_share * self.args.policies):
                row['verify_every'] = self.args.verify_every
                self.verifying[policy_id] = self.args.verify_every
            rows.append(row)
            self.policies[policy_id] = first
            if number >= share * self.args.policies:
                continue
            # Retention whose floor is above its rule, so that the floor
            # decides; every other one has a twin on the same instance,
            # whose retention (run by whichever worker finishes its
            # backup) reasons over the same backups.
            row.update(keep_last=1, min_keep=3)
            self.retention[policy_id] = 3
            if number % 2 == 0:
                twin = str(uuid.uuid4())
                rows.append(dict(row, id=twin, name='chaos-%d-twin' % number,
                                 overlap_policy='queue', keep_last=2,
                                 min_keep=2,
                                 # Built on the instance's latest backup,
                                 # whichever policy made it: chains.
                                 backup_params=(
                                     {'incremental': True}
                                     if self.args.incremental_twins
                                     else None)))
                self.policies[twin] = first
                self.retention[twin] = 2
                if row['verify_every']:
                    self.verifying[twin] = row['verify_every']
        self.db.insert(POLICIES, rows)
        reporting.progress('%d policies every minute (%d with retention, '
                           '%d verifying, %d with a %d s start window), the '
                           'first slot at %s', len(rows), len(self.retention),
                           len(self.verifying), short,
                           self.args.short_window_seconds, first.isoformat())
        return first

    def service_config(self, label, index=0):
        args = self.args
        log_file = os.path.join(self.workdir, label + '.log')
        sections = common.service_config(self, log_file, 30)
        sections['engine'] = {'topic': self.topics['engine']}
        sections['trove'] = {'endpoint_override': self.trove.url}
        sections['service_credentials'] = {'auth_type': 'none'}
        if self.clusters is not None:
            sections['database']['connection'] = sa.engine.make_url(
                self.db.url_string).set(
                    port=self.clusters.database_port(index)).render_as_string(
                        hide_password=False)
            if self.clusters.rabbitmq is not None:
                sections['oslo_messaging_rabbit'] = dict(
                    clustered.QUORUM_OPTIONS)
        for group, options in TIMING[args.timing].items():
            sections.setdefault(group, {}).update(options)
        sections.setdefault('worker', {})['retention_grace'] = (
            args.retention_grace)
        common.set_options(sections, args.option, 'worker')
        config_file = os.path.join(self.workdir, label + '.conf')
        common.write_config(config_file, sections)
        return config_file, log_file

    def start_processes(self):
        for binary, count in (('dbaas-scheduler-worker', self.args.workers),
                              ('dbaas-scheduler-engine', self.args.engines)):
            for number in range(count):
                label = '%s-%d' % (binary.rsplit('-', 1)[-1], number)
                config_file, log_file = self.service_config(
                    label, len(self.processes))
                process = ChaosProcess(number, binary, config_file, log_file)
                process.start()
                self.processes.append(process)
        deadline = time.time() + 180
        while time.time() < deadline:
            dead = [p.label for p in self.processes if not p.alive()]
            if dead:
                raise RuntimeError('%s exited at start: see the logs in %s'
                                   % (', '.join(dead), self.workdir))
            if self.db.scalar(sa.select(sa.func.count()).select_from(
                    SERVICES)) >= len(self.processes):
                reporting.progress('%d engines and %d workers up',
                                   self.args.engines, self.args.workers)
                return
            time.sleep(1)
        raise RuntimeError('the services did not register within 180 s')

    # The run -----------------------------------------------------------

    def measure(self, bench):
        args = self.args
        self.start_servers()
        first = self.seed()
        self.start_processes()
        if self.clusters is not None:
            injector = chaos_faults.Faults(
                args, self.processes, self.clusters.broker_fault(),
                self.clusters.database_fault(), self.trove,
                writer=self.clusters.writer)
        else:
            injector = chaos_faults.Faults(
                args, self.processes, self.broker, self.database_server,
                self.trove)
        wait = (first - timeutils.utcnow(True)).total_seconds()
        reporting.progress('load starts in %.0f s, for %d minutes', wait,
                           args.minutes)
        time.sleep(max(0.0, wait))
        holder = None
        if self.retention and args.hold_every > 0:
            holder = chaos_holds.Holder(self.db, self.retention,
                                        args.hold_every, args.seed)
            holder.start()
        injector.begin()
        time.sleep(args.minutes * 60)
        injector.finish()
        if holder is not None:
            holder.finish()
        stopped = self.stop_load()
        drained = self.drain()
        verdict = checker.Verdict(
            {policy_id: (first_due, stopped[policy_id])
             for policy_id, first_due in self.policies.items()},
            self.executions(), self.trove.history(), self.retention,
            args.build_seconds)
        if self.verifying:
            verdict.verifications(self.verifying, self.verifications(),
                                  self.scratch_at_backend())
        if holder is not None:
            verdict.figures['holds placed / refused (409) / errors'] = (
                '%d / %d / %d' % (len(holder.held), holder.refused,
                                  holder.errors))
        self.write_report(injector, drained, verdict)
        self.stop_all()
        return verdict.holds

    def stop_load(self):
        """Disable every policy; ``{policy id: next_execution_time}``."""
        with self.db.engine.begin() as connection:
            connection.execute(sa.update(POLICIES).values(enabled=False))
            rows = connection.execute(sa.select(
                POLICIES.c.id, POLICIES.c.next_execution_time)).all()
        reporting.progress('load stopped: the policies are disabled')
        return dict(rows)

    def executions(self):
        return self.db.rows(sa.select(EXECUTIONS))

    def verifications(self):
        return self.db.rows(sa.select(RESTORES).where(
            RESTORES.c.kind == enums.RestoreKind.VERIFY))

    def scratch_at_backend(self):
        """Names of the scratch instances still at the fake Trove."""
        return checker.scratch_names(
            instance.name for instance in self.trove.restored_instances())

    def drain(self):
        """Wait until every execution ended and every extra backup is gone.

        Returns the seconds it took, or None after ``--drain-timeout``.
        """
        started = time.time()
        while True:
            try:
                executions = self.executions()
            except sa.exc.OperationalError as exc:
                reporting.progress('draining: the database is away (%s)',
                                   exc.orig)
                time.sleep(10)
                continue
            waiting = len([row for row in executions
                           if row.status not in
                           enums.ExecutionStatus.FINISHED])
            strays = checker.strays_left(executions, self.trove.history())
            scratch = 0
            if self.verifying:
                try:
                    verifications = self.verifications()
                except sa.exc.OperationalError:
                    verifications = ()
                waiting += len([row for row in verifications
                                if row.status not in
                                enums.RestoreStatus.FINISHED])
                # Due, not recorded yet: the engines' next sweep will.
                waiting += len(checker.verifications_due(
                    self.verifying, executions, verifications))
                scratch = len(checker.scratch_left(
                    verifications, self.scratch_at_backend()))
            elapsed = time.time() - started
            reporting.progress('draining: %d executions or verifications not '
                               'finished, %d extra backups, %d scratch '
                               'targets left', waiting, strays, scratch)
            if not waiting and not strays and not scratch:
                return elapsed
            if elapsed > self.args.drain_timeout:
                return None
            time.sleep(10)

    def write_report(self, injector, drained, verdict):
        args, report = self.args, self.report
        report.section('Run')
        if self.clusters is not None:
            report.item('database', 'Galera cluster of 3 nodes, %s' % (
                args.cluster))
            report.item('broker', 'RabbitMQ cluster of 3 nodes, quorum '
                        'queues' if self.clusters.rabbitmq
                        else self.transport_url)
        else:
            report.item('database', '%s (%s)' % (
                args.database, 'private server, restarted' if
                self.database_server else 'given server'))
            report.item('broker', 'private RabbitMQ node' if self.broker
                        else self.transport_url)
        report.item('policies x minutes', '%d x %d (every minute)' % (
            args.policies, args.minutes))
        report.item('engines / workers', '%d / %d' % (args.engines,
                                                      args.workers))
        report.item('timing', args.timing)
        report.item('options', ', '.join(args.option) or '-')
        report.item('faults', ', '.join(sorted(args.faults)) or 'none')
        kinds = collections.Counter(
            kind for _, kind, _ in injector.events if kind)
        report.item('fault events', ', '.join(
            '%s %d' % item for item in sorted(kinds.items())) or 'none')
        if 'slow' in args.faults:
            report.item('slow creates', '%.1f%% of the others answered after '
                        '%.0f s' % (
                            100 * args.slow_create_share,
                            args.slow_create_seconds))
        if 'late' in args.faults:
            report.item('late creates', '%.1f%% landing after %.0f s' % (
                100 * args.late_create_share, args.late_create_seconds))
        if 'stop' in args.faults:
            report.item('SIGSTOP length', '%.0f s' % args.stop_seconds)
        report.item('backup build time', '%.0f s' % args.build_seconds)
        if self.verifying:
            report.item('verification', 'every %d successful backups, on %d '
                        'policies' % (args.verify_every, len(self.verifying)))
        report.item('drain', '%.0f s' % drained if drained is not None
                    else 'not done after %d s' % args.drain_timeout)
        found = collections.Counter()
        for process in self.processes:
            if process.binary.endswith('worker'):
                log = process.log()
                for by in ('compensation', 'reconciliation'):
                    found[by] += log.count('found by %s)' % by)
        report.item('extra backups deleted by', 'the worker that made '
                    'them %d, reconciliation %d (from the logs)' % (
                        found['compensation'], found['reconciliation']))
        verdict.write(report)
        with open(os.path.join(self.workdir, 'faults.log'), 'w') as stream:
            for at, _, text in injector.events:
                stream.write('%s %s\n' % (
                    datetime.datetime.fromtimestamp(at).isoformat(), text))
            if self.clusters is not None:
                stream.write(self.clusters.describe() + '\n')

    def stop_all(self):
        for process in self.processes:
            if process.alive():
                process.stop(60)

    def close(self):
        try:
            for process in self.processes:
                if process.alive():
                    process.kill()
            if self.trove is not None:
                self.trove.cleanUp()
            if self.db is not None:
                if self.args.keep:
                    self.db.dispose()
                else:
                    self.db.drop()
        finally:
            super().close()
            for server in (self.broker, self.database_server,
                           self.clusters):
                if server is not None:
                    server.close()
