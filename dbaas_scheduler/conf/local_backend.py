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
"""Options of ``[local_backend]``: real backups without OpenStack."""

from oslo_config import cfg

local_backend_group = cfg.OptGroup(
    'local_backend', title='Local backend options',
    help='The local backend backs up databases this host can reach itself, '
         'with pg_dump, mariadb-dump (or mysqldump) or SQLite\'s online '
         'backup, into compressed files. It needs no OpenStack: it is what '
         'the all-in-one process uses to do real work on any machine.')

local_backend_opts = [
    cfg.DictOpt(
        'instances',
        default={},
        mutable=True,
        # The URLs may hold passwords: never in the option dump at start.
        secret=True,
        help='Databases the local backend can back up, as '
             'name:database-URL pairs separated by commas, e.g. '
             'orders:postgresql://backup@db1/orders,'
             'wiki:mysql+pymysql://backup:secret@db2/wiki,'
             'notes:sqlite:////var/lib/notes/notes.db. A policy names one in '
             'its instance_id; creating a policy for a name that is not '
             'here is refused. Default: none. A URL may hold a password; '
             'keep this file readable by the service only. SIGHUP reloads '
             'it: instances added then can be used without a restart.'),
    cfg.DictOpt(
        'instance_projects',
        default={},
        mutable=True,
        help='The project that owns each local instance, as name:project-id '
             'pairs separated by commas, e.g. orders:8f2c0d1e5a6b4c3d9e7f'
             '0a1b2c3d4e5f. A project may give its policies only the local '
             'instances it owns here; an instance not listed is no '
             'project\'s, and only those the policy rule '
             'dbaas_scheduler:backup_policy:backend:local:any_instance '
             'allows (admins, by default) may use it. Using the local '
             'backend at all also needs the rule '
             'dbaas_scheduler:backup_policy:backend:local and local in '
             '[api] enabled_backends. Default: none (no project owns a '
             'local instance). SIGHUP reloads it.'),
    cfg.DictOpt(
        'restore_targets',
        default={},
        mutable=True,
        # The URLs may hold passwords.
        secret=True,
        help='Databases a local backup may be restored into, as '
             'name:database-URL pairs separated by commas, e.g. '
             'orders-restore:postgresql://restore@db1/orders_restore. A '
             'restore names one as its target; the database must exist and '
             'be empty (no tables) unless the restore asks to replace what '
             'is there. It must be of the same kind as the backup '
             '(PostgreSQL, MariaDB/MySQL). A SQLite backup restored without '
             'a target goes to a new file under $state_path/restores. '
             'Default: none. SIGHUP reloads it.'),
    cfg.DictOpt(
        'restore_target_projects',
        default={},
        mutable=True,
        help='The project that may restore into each restore target, as '
             'name:project-id pairs separated by commas. A target not '
             'listed here can be named by no restore: restoring overwrites '
             'the target, so the operator says whose it is. Default: none. '
             'SIGHUP reloads it.'),
    cfg.StrOpt(
        'restore_dir',
        default='$state_path/restores',
        help='Directory of the new SQLite files that restores without a '
             'target write, one <restore id>.sqlite each. Default: '
             '$state_path/restores. The service never deletes them: they '
             'are the restored databases.'),
    cfg.StrOpt(
        'backup_dir',
        default='$state_path/backups',
        help='Directory the backup files are written to, one subdirectory '
             'per instance. Default: $state_path/backups. It needs room for '
             'every backup the retention rules keep.'),
    cfg.IntOpt(
        'compression_level',
        default=6,
        min=1,
        max=9,
        help='gzip compression level of the backup files. Default: 6. '
             'Higher levels make smaller files and cost more CPU time.'),
]


def register_opts(conf):
    conf.register_group(local_backend_group)
    conf.register_opts(local_backend_opts, group=local_backend_group)


def list_opts():
    return {local_backend_group: local_backend_opts}
