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
"""Options of the ``[engine]`` group: the tick that dispatches due backups."""

from oslo_config import cfg

engine_group = cfg.OptGroup(
    'engine', title='Engine options',
    help='The dbaas-scheduler-engine process claims due backup policies, '
         'records one execution per due slot and casts it to a worker.')

engine_opts = [
    cfg.StrOpt(
        'topic',
        default='dbaas-scheduler-engine',
        help='oslo.messaging topic of the engines\' RPC API. Default: '
             'dbaas-scheduler-engine. Change it only to run several '
             'independent deployments on one RabbitMQ virtual host; every '
             'process of one deployment must use the same value.'),
    cfg.FloatOpt(
        'scan_interval',
        default=1.0,
        min=0.05,
        help='Longest time, in seconds, an engine sleeps between two scans '
             'for due policies (it wakes earlier when the earliest '
             'next_execution_time is sooner). Default: 1.0. It bounds how '
             'late a policy that was just created or changed to run sooner '
             'can be picked up; each wake-up costs one indexed MIN query per '
             'engine.'),
    cfg.IntOpt(
        'batch_size',
        default=1000,
        min=1,
        help='Number of due policies an engine claims in one database '
             'transaction. Default: 1000. Larger batches dispatch a burst '
             'with fewer round trips but hold their row locks longer and '
             'make one transaction bigger; other engines skip locked rows, '
             'so they are never blocked by it.'),
    cfg.IntOpt(
        'tick_threads',
        default=2,
        min=1,
        max=16,
        help='Threads of one engine that tick at the same time. Default: 2. '
             'They claim different batches (SKIP LOCKED), so while one waits '
             'for the database another plans or casts: a burst is '
             'dispatched faster, at the cost of one database connection per '
             'thread. With SQLite an engine always uses one.'),
    cfg.IntOpt(
        'catchup_window',
        default=3600,
        min=0,
        help='Default catch-up window, in seconds, of a policy that sets '
             'none. A slot missed (service down, backlog) by at most this '
             'much still runs, once, however many slots were missed; a slot '
             'missed by more is recorded as a SKIPPED execution with the '
             'reason "missed". Default: 3600 (one hour). A longer window '
             'starts more late backups after an outage.'),
    cfg.IntOpt(
        'dispatch_timeout',
        default=60,
        min=1,
        help='Seconds after which an execution that is still PENDING or '
             'DISPATCHED (no worker claimed it) is cast again by the sweep. '
             'Default: 60. A lower value recovers casts lost to a crash or a '
             'broker outage sooner; a value below the time workers need to '
             'drain a burst re-casts messages that are merely queued, which '
             'is harmless (the worker\'s claim drops duplicates) but costs '
             'broker traffic.'),
    cfg.IntOpt(
        'executions_per_message',
        default=20,
        min=1,
        max=1000,
        help='Largest number of executions one message to the workers '
             'carries. Default: 20. A tick that commits more executions '
             'than this sends them in groups, because oslo.messaging casts '
             'one message at a time (about 2,000 per second on a small '
             'machine) and a burst of 100,000 due backups would otherwise '
             'wait on the broker. The worker that gets a message claims its '
             'executions with one conditional update and starts them one '
             'after another; executions another worker already has are '
             'dropped, not the whole message. 1 sends one message per '
             'execution and spreads a burst most evenly over workers, at '
             'the cost of dispatch speed.'),
    cfg.BoolOpt(
        'trove_notifications',
        default=False,
        help='Consume Trove\'s notifications and, when Trove reports an '
             'instance deleted (trove.instance.delete), disable and delete '
             'its backup policies. Default: false. Turn it on where Trove '
             'sends notifications (its [oslo_messaging_notifications] '
             'driver) to the same RabbitMQ; each notification is handled by '
             'one engine.'),
    cfg.StrOpt(
        'trove_notification_exchange',
        default='trove',
        help='Exchange Trove publishes its notifications on. Default: '
             'trove, its control_exchange.'),
    cfg.ListOpt(
        'trove_notification_topics',
        default=['notifications'],
        help='Topics Trove publishes its notifications to. Default: '
             'notifications, the oslo.messaging default.'),
    cfg.ListOpt(
        'trove_notification_publishers',
        default=['0.0.0.0', 'taskmanager.*', 'conductor.*'],
        help='Publisher ids of the Trove services whose notifications are '
             'acted on, as shell-style patterns (* and ? wildcards, '
             'case-sensitive); a notification from any other publisher is '
             'ignored with a WARNING naming it. Trove\'s taskmanager sends '
             'trove.instance.delete with its [DEFAULT] host as publisher id '
             '(0.0.0.0 unless set: list the values your Trove hosts set), '
             'and its other notifications as taskmanager.<host> or '
             'conductor.<host>. A publisher id is what the sender claims: '
             'only Trove may write to the notification exchange (see the '
             'admin guide, "Security model"). Default: 0.0.0.0, '
             'taskmanager.*, conductor.*.'),
    cfg.FloatOpt(
        'sweep_interval',
        default=10.0,
        min=0.1,
        help='Seconds between two sweeps for executions to re-cast and for '
             'RUNNING executions whose worker lease expired. Default: 10. '
             'Each sweep is two indexed queries per engine.'),
    cfg.FloatOpt(
        'sweep_recast_rate',
        default=500.0,
        min=0.1,
        help='Executions a second, on average, that one engine\'s sweeps '
             'cast again (executions no worker claimed within '
             'dispatch_timeout, and executions whose worker lease expired). '
             'Default: 500. It keeps a sweep after a broker or worker '
             'outage, when thousands of executions wait at once, from '
             'flooding the broker: they go out over several sweeps instead '
             'of in one. Every engine sweeps, so the region\'s rate is this '
             'times the number of engines. A lower value spares the broker '
             'and the workers and makes a large backlog wait longer '
             '(100,000 waiting executions take 200 s at 500 a second on one '
             'engine); new executions from the tick are not limited.'),
    cfg.IntOpt(
        'sweep_recast_max_per_pass',
        default=5000,
        min=1,
        help='Most executions one sweep of one engine casts again (the '
             'burst allowed by sweep_recast_rate: unused rate accumulates '
             'up to this many). Default: 5000, sweep_recast_rate times the '
             'default sweep_interval. What is not cast in one pass waits '
             'for the next: executions whose worker lease expired go '
             'first, then those that have waited longest.'),
    cfg.IntOpt(
        'execution_purge_after_days',
        default=90,
        min=0,
        deprecated_name='execution_retention_days',
        help='Delete finished executions that finished more than this many '
             'days ago, a small batch at a time, from every engine. '
             'Default: 90, which bounds the history of a policy run hourly '
             'to about 2,200 rows; 0 never deletes (dbaas-scheduler-manage '
             'execution purge does it by hand). The newest execution of '
             'each policy, its last_execution_id, and every execution whose '
             'backup is still kept stay, whatever their age (see '
             '"Purging the execution history" in the admin guide).'),
    cfg.IntOpt(
        'execution_purge_batch_size',
        default=500,
        min=1,
        help='Executions the automatic purge (execution_purge_after_days) '
             'looks at in one batch; what may go of a batch is deleted in '
             'one short transaction. Default: 500.'),
    cfg.FloatOpt(
        'execution_purge_interval',
        default=3600.0,
        min=1.0,
        help='Seconds between two passes of the automatic purge over the '
             'execution table (execution_purge_after_days). Default: 3600. '
             'Within a pass, batches follow each other a second apart.'),
]


def register_opts(conf):
    conf.register_group(engine_group)
    conf.register_opts(engine_opts, group=engine_group)


def list_opts():
    return {engine_group: engine_opts}
