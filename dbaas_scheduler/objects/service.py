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
"""Services: the processes of the cluster, as the interfaces read them.

Each process of the service registers a row and beats its heartbeat
(:mod:`dbaas_scheduler.servicegroup`); the interfaces only read the rows,
through these functions.  Whether a row is up is the service group's
rule, ``servicegroup.is_up``, which callers apply with their own
``service_down_time``.
"""

from dbaas_scheduler.db import services as db_services

# What every interface shows of a service, besides its state.
VISIBLE_FIELDS = ('id', 'host', 'binary', 'topic', 'pid', 'started_at',
                  'heartbeat_at')


def as_dict(service):
    """A service's visible fields, datetimes as aware datetimes."""
    return {field: getattr(service, field) for field in VISIBLE_FIELDS}


def list_services(context):
    """Every registered process, by binary, host and start time."""
    return db_services.list_services(context)
