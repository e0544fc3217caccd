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
"""Options of the ``[metrics]`` group: the Prometheus scrape endpoint."""

from oslo_config import cfg
from oslo_config import types

metrics_group = cfg.OptGroup(
    'metrics', title='Prometheus metrics',
    help='The cluster-wide Prometheus endpoint the API serves: what the '
         'database knows about every engine, worker and backup (see '
         '"Monitoring" in the administration guide).')

metrics_opts = [
    cfg.BoolOpt(
        'enabled',
        default=False,
        help='Serve Prometheus metrics at [metrics] path on the REST API, '
             'without authentication unless [metrics] '
             'require_authentication is set. Default: false. The figures are '
             'counts and durations of the whole cluster, read from the '
             'database on each scrape; they name no project, policy or '
             'instance. Restrict the path to the monitoring network at '
             'the proxy in front of the API.'),
    cfg.StrOpt(
        'path',
        default='/metrics',
        regex=r'^/[^?#]*$',
        help='Path of the metrics on the API. Default: /metrics. It must '
             'not be under /v1; the Prometheus scrape configuration names '
             'it as its metrics_path.'),
    cfg.IntOpt(
        'window',
        default=3600,
        min=60,
        max=7 * 86400,
        help='Seconds of recent history the windowed figures cover: '
             'executions finished by status and reason, missed and '
             'coalesced slots, the lateness histograms, stray backups '
             'deleted. Default: 3600 (one hour). A longer window reads '
             'more rows on each scrape.'),
    cfg.IntOpt(
        'cache_time',
        default=10,
        min=0,
        help='Seconds a scrape\'s figures are served again to the next '
             'scrapes before the database is read again. Default: 10. '
             'Several Prometheus servers, or several API processes behind '
             'one address, then cost one set of queries per process per '
             'cache_time. 0 reads the database on every scrape.'),
    cfg.ListOpt(
        'lateness_buckets',
        item_type=types.Float(min=0),
        default=[1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600],
        help='Upper bounds, in seconds, of the buckets of the lateness '
             'histograms (dispatch and backup start after the scheduled '
             'time). Default: 1, 5, 15, 30, 60, 120, 300, 600, 1800, '
             '3600. Each bucket is one more sum in the query.'),
    cfg.ListOpt(
        'failure_streaks',
        item_type=types.Integer(min=1, max=100),
        default=[1, 3],
        help='Lengths of the runs of consecutive failures the metric '
             'dbaas_scheduler_policies_failing counts policies for: a '
             'policy counts for each length its latest outcomes have all '
             'failed (its consecutive_failures: FAILED or EXPIRED runs '
             'since its last SUCCEEDED one or its last resume, SKIPPED '
             'ones aside). Default: 1, 3. An empty list turns the metric '
             'and its query off.'),
    cfg.BoolOpt(
        'require_authentication',
        default=False,
        help='Whether a scrape of [metrics] path must authenticate like '
             'any API request (a Keystone token in X-Auth-Token) and be '
             'allowed by the policy rule dbaas_scheduler:metrics:get '
             '(default: a system-scoped reader; with the legacy policy '
             'defaults, the admin role). Default: false, which serves the '
             'metrics to whoever reaches the path: then restrict it to the '
             'monitoring network at the proxy in front of the API.'),
    cfg.IntOpt(
        'capacity_projects',
        default=10,
        min=0,
        help='Projects named (label project_id) in the fair-capacity '
             'metrics: the ones whose executions have waited longest for '
             'capacity ([worker] max_running_per_project, max_running, '
             'project_backoff) and the ones whose backoff ends last. The '
             'totals over every project are served whatever this is. '
             'Default: 10. 0 names none.'),
    cfg.IntOpt(
        'failure_lookback_days',
        default=30,
        min=1,
        max=366,
        deprecated_for_removal=True,
        deprecated_reason='The failure streaks are now each policy\'s '
                          'consecutive_failures, kept as outcomes are '
                          'recorded; no history is read for them.',
        help='Ignored. Days of history once read to measure a failing '
             'policy\'s streak of failures. Default: 30.'),
]


def register_opts(conf):
    conf.register_group(metrics_group)
    conf.register_opts(metrics_opts, group=metrics_group)


def list_opts():
    return {metrics_group: metrics_opts}
