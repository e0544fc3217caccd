#!/bin/sh
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
#
# The container image's entry point: runs one dbaas-scheduler program with
# the configuration file a kolla-style deployment mounts.
#
#   entrypoint.sh SERVICE [ARGUMENTS...]
#
# SERVICE (or, without arguments, $DBAAS_SCHEDULER_SERVICE) is one of
#   api | engine | worker | all   a long-running service (one per container)
#   manage ARGUMENTS...           dbaas-scheduler-manage, e.g. "db upgrade"
#   status [ARGUMENTS...]         dbaas-scheduler-status (default:
#                                 "upgrade check")
#
# The configuration file is $DBAAS_SCHEDULER_CONFIG (default
# /etc/dbaas-scheduler/dbaas-scheduler.conf) and must exist; the directory
# $DBAAS_SCHEDULER_CONFIG_DIR (default /etc/dbaas-scheduler/
# dbaas-scheduler.conf.d), if it exists, is read after it (oslo.config's
# --config-dir: *.conf files in alphabetical order), for secrets kept in
# files of their own. The program replaces this shell (exec), so that it
# gets the container's signals (SIGTERM stops it gracefully) and its exit
# status is the container's.
#
# Exit status of its own: 64 for an unknown or missing SERVICE, 78 for a
# missing configuration file.

set -eu

CONFIG=${DBAAS_SCHEDULER_CONFIG:-/etc/dbaas-scheduler/dbaas-scheduler.conf}
CONFIG_DIR=${DBAAS_SCHEDULER_CONFIG_DIR:-/etc/dbaas-scheduler/dbaas-scheduler.conf.d}
SERVICES="api engine worker all manage status"

usage() {
    echo "usage: $(basename "$0") {api|engine|worker|all|manage|status}" \
         "[ARGUMENTS...]" >&2
}

if [ "$#" -gt 0 ]; then
    service=$1
    shift
else
    service=${DBAAS_SCHEDULER_SERVICE:-}
fi

case "$service" in
    api|engine|worker|all|manage|status) ;;
    "")
        echo "No service given (an argument, or DBAAS_SCHEDULER_SERVICE)." >&2
        usage
        exit 64
        ;;
    *)
        echo "Unknown service '$service'; one of: $SERVICES." >&2
        usage
        exit 64
        ;;
esac

if [ ! -r "$CONFIG" ]; then
    echo "Configuration file $CONFIG is missing or unreadable: mount" \
         "it there, or set DBAAS_SCHEDULER_CONFIG." >&2
    exit 78
fi

if [ "$service" = status ] && [ "$#" -eq 0 ]; then
    # Without a command: the check deployment tools run.
    set -- upgrade check
fi

# oslo.config reads them in command-line order: the file, then the
# directory, whose values win.
if [ -d "$CONFIG_DIR" ]; then
    set -- --config-file "$CONFIG" --config-dir "$CONFIG_DIR" "$@"
else
    set -- --config-file "$CONFIG" "$@"
fi

exec "dbaas-scheduler-$service" "$@"
