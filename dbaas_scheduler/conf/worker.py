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
"""Options of the ``[worker]`` group: taking and watching the backups."""

from oslo_config import cfg

worker_group = cfg.OptGroup(
    'worker', title='Worker options',
    help='The dbaas-scheduler-worker process claims dispatched executions, '
         'asks the backend for a backup, watches it until it finishes and '
         'applies the retention rules of its policy.')

worker_opts = [
    cfg.StrOpt(
        'topic',
        default='dbaas-scheduler-worker',
        help='oslo.messaging topic the workers listen on. Default: '
             'dbaas-scheduler-worker. Change it only to run several '
             'independent deployments on one RabbitMQ virtual host; every '
             'engine and worker of one deployment must use the same '
             'value.'),
    cfg.IntOpt(
        'pool_size',
        default=16,
        min=1,
        help='Number of threads that claim executions and start backups, and '
             'the number of messages one worker prefetches from the broker. '
             'Default: 16. Watching running backups does not use these '
             'threads. A larger pool starts a burst faster but holds more '
             'database connections and lets one worker take messages other '
             'workers could have served.'),
    cfg.IntOpt(
        'lease_duration',
        default=300,
        min=10,
        help='Seconds a worker owns an execution without renewing its lease. '
             'Default: 300. A worker renews the leases of everything it '
             'holds -- executions waiting to start, backups being created, '
             'backups running -- five times per lease; when it dies or '
             'freezes, another worker resumes its executions after at most '
             'this long, so a shorter lease recovers faster and costs more '
             'lease-renewal writes. It must be longer than a single backend '
             'request may take ([service_credentials] timeout for Trove, 60 '
             'seconds if unset): the worker refuses to start otherwise.'),
    cfg.IntOpt(
        'retention_grace',
        default=86400,
        min=0,
        help='Seconds between retention deciding to delete a backup (which '
             'then shows backup_state "expiring" and backup_delete_after) '
             'and deleting it. Default: 86400 (one day): a working day to '
             'notice a deletion to come, in the API, the CLI or the '
             'lifecycle preview, and hold the backup; for a daily policy, '
             'it costs the storage of about one more backup. A backup whose '
             'grace is over is deleted at the next retention pass of its '
             'instance (after a backup of the instance succeeds) or by the '
             'expiry sweep (expiry_sweep_interval), whichever comes first. '
             '0 deletes at once, as before this option existed.'),
    cfg.IntOpt(
        'expiry_sweep_interval',
        default=60,
        min=1,
        help='Seconds between two passes of a worker\'s expiry sweep, which '
             'deletes the backups whose retention_grace is over (unless held '
             'meanwhile, or kept after all by retention deciding again over '
             'the backups of their instance as they are then). Default: 60: '
             'an expiring backup is deleted within about a minute of its '
             'backup_delete_after. Each pass reads one index range of the '
             'database; each policy with a backup due costs one backend '
             'list request and a delete request per backup.'),
    cfg.IntOpt(
        'backup_timeout',
        default=21600,
        min=60,
        help='Seconds an execution may run, from its first claim by a worker '
             '(started_at; time spent queued behind another backup does not '
             'count) until its backup reaches a terminal state, before it is '
             'marked FAILED -- also when the backend cannot be asked. '
             'Default: 21600 (6 hours). Set it above the time your largest '
             'database takes to back up.'),
    cfg.IntOpt(
        'restore_timeout',
        default=21600,
        min=60,
        help='Seconds a restore may run, from its first claim by a worker '
             'until its target is ready (a Trove instance ACTIVE and '
             'HEALTHY, a local database loaded), before it is marked '
             'FAILED. Default: 21600 (6 hours). Set it above the time your '
             'largest database takes to restore.'),
    cfg.FloatOpt(
        'poll_interval',
        default=15.0,
        min=0.1,
        help='Seconds from the end of one pass over the running backups of '
             'a worker to the start of the next; each pass checks all of '
             'them in batches, so a backup is checked every poll_interval '
             'plus the length of a pass (about 2.5 s per 1,000 backups on a '
             'small machine). Default: 15. Lower values notice a finished '
             'backup sooner and cost more backend requests: the trove '
             'backend asks once per project and pass (one listing of the '
             'project\'s backups per 500), other backends once per running '
             'backup.'),
    cfg.FloatOpt(
        'retry_initial_delay',
        default=2.0,
        min=0.0,
        help='Seconds before the second attempt of a backend call that '
             'failed with a transient error; each further attempt waits '
             'twice as long, plus random jitter, up to retry_max_delay. '
             'Default: 2. The thread that started the backup waits '
             'meanwhile, so long delays tie up the pool.'),
    cfg.FloatOpt(
        'retry_max_delay',
        default=30.0,
        min=0.0,
        help='Longest wait, in seconds, between two attempts of a backend '
             'call. Default: 30. With the defaults, five attempts over about '
             '30 seconds plus jitter ride out a short backend outage.'),
    cfg.IntOpt(
        'queue_retry_interval',
        default=60,
        min=1,
        help='Seconds after which an execution of a policy with overlap '
             'policy "queue" is tried again while another backup of the same '
             'instance is still running. Default: 60. The engine\'s sweep '
             'casts it again then; a shorter interval starts the queued '
             'backup sooner after the other one ends and costs one claim '
             'attempt per interval.'),
    cfg.IntOpt(
        'max_running_per_project',
        default=0,
        min=0,
        help='Most backups of one project that may run at once in the '
             'region, counted in the database across all workers (executions '
             'RUNNING: from the claim until the backup ends). A claim that '
             'would exceed it leaves the execution queued; the engine\'s '
             'sweep offers queued executions again as backups end, in slot '
             'order within a project and round-robin across projects, and an '
             'execution that cannot start within its start window ends '
             'EXPIRED. Default: 0, no limit (every cast execution starts at '
             'once, as before this option existed). A limit keeps one '
             'project\'s burst (a thousand policies due at midnight) from '
             'delaying the backups of every other project; set it below '
             'max_running, or one project can still fill the region.'),
    cfg.IntOpt(
        'max_running',
        default=0,
        min=0,
        help='Most backups that may run at once in the whole region, over '
             'all projects, counted in the database across all workers. '
             'Default: 0, no limit. With a limit, every claim of a new '
             'backup locks one row of the database (project_capacity, the '
             'region\'s), so claims are serialized: a few milliseconds each. '
             'Queued executions are offered again as for '
             'max_running_per_project.'),
    cfg.IntOpt(
        'project_backoff',
        default=0,
        min=0,
        help='Seconds during which no new backup of a project starts after '
             'the backend said the project is over one of its own limits: '
             'Trove\'s per-tenant backup quota (HTTP 413 "Quota exceeded"), '
             'or its rate limiting (413 with Retry-After) for longer than '
             '[trove] rate_limit_max_wait. Recorded in the database, so that '
             'every worker slows down for that project only; the execution '
             'is queued until then (EXPIRED if that is after its start '
             'window) and the other projects\' backups go on. Default: 0, '
             'off: a quota error fails the execution and a rate limit is '
             'retried by the worker\'s thread, as before this option '
             'existed. Executions without a start window fail as without '
             'it.'),
    cfg.IntOpt(
        'poll_concurrency',
        default=8,
        min=1,
        help='Number of threads that check the status of running backups '
             'at the backend during one poll pass, one project at a time '
             '(or one backup at a time, for backends that cannot list). '
             'Default: 8. More threads finish a pass over many projects '
             'sooner and open more connections to the backend.'),
    cfg.IntOpt(
        'max_attempts',
        default=5,
        min=1,
        help='Attempts made of one backend call (start a backup, list the '
             'backups of an instance for retention, delete one) when the '
             'backend answers with a transient error (connection refused, '
             'timeout, 5xx, instance busy), with exponential backoff and '
             'jitter between them. It is not the attempts column of an '
             'execution, which counts its claims. '
             'Default: 5. More attempts ride out longer outages and delay '
             'the FAILED state that tells a user something is wrong.'),
    cfg.FloatOpt(
        'timed_out_create_wait',
        min=0.0,
        help='Seconds a worker whose request to create a backup timed out '
             'keeps looking for the backup tagged with the execution id '
             'before it asks for another one. Default: unset, twice the '
             'backend\'s request timeout ([service_credentials] timeout for '
             'Trove, 60 seconds if unset; nothing for backends that do not '
             'wait on the network). A slow backend may still accept a create '
             'its client gave up on; looking for it (at retry_initial_delay, '
             'then doubling intervals, one listing of the instance\'s '
             'backups each) instead of creating again at once makes a '
             'second backup for one slot the exception. The thread that '
             'started the backup waits meanwhile. 0 looks once, right away, '
             'as any retry does.'),
    cfg.IntOpt(
        'reconcile_interval',
        default=300,
        min=1,
        help='Seconds between two reconciliation passes over the backups of '
             'an instance. After an execution finishes, its instance is '
             'reconciled this long later and then every reconcile_interval '
             'for reconcile_window seconds: the worker lists the instance\'s '
             'backups and deletes those tagged with one of this service\'s '
             'executions that are not that execution\'s recorded backup (a '
             'backup made twice for one slot), once they are finished. '
             'Default: 300. Shorter intervals delete such duplicates sooner '
             'and cost one backend list request per instance per interval.'),
    cfg.IntOpt(
        'reconcile_window',
        default=1800,
        min=0,
        help='Seconds after an execution of an instance finished during '
             'which the instance\'s backups are still reconciled. Default: '
             '1800. It bounds how late a duplicate can appear and still be '
             'found without another execution of the instance: a create '
             'request the backend completes after the worker gave up on it, '
             'or a worker that was paused (a VM pause, a stopped process) '
             'and wakes up in the middle of creating a backup. Every later '
             'execution of the instance reconciles it again.'),
    cfg.FloatOpt(
        'stop_wait',
        default=10.0,
        min=0.0,
        help='Seconds a worker stopping gracefully (SIGTERM, or a first '
             'Ctrl-C) waits for its running backups of backends that report '
             'their end (the local backend\'s dump jobs) to finish, and '
             'records them. Default: 10. Meanwhile it takes no new work. '
             'What has not finished by then is handed back: its lease is '
             'given up and its backup keeps running, so that the next '
             'worker, this one started again or another, resumes it at '
             'once. 0 hands everything back at once. Kept below the '
             'oslo.service [DEFAULT] graceful_shutdown_timeout, after which '
             'the process is ended without handing anything back.'),
]


def register_opts(conf):
    conf.register_group(worker_group)
    conf.register_opts(worker_opts, group=worker_group)


def list_opts():
    return {worker_group: worker_opts}
