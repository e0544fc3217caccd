#!/bin/bash
#
# Smoke test of a dbaas-scheduler deployment with the openstack client:
# what a gate job runs after stack.sh. A policy's whole life: create,
# list, show, next runs, pause, resume, run now (until the execution
# succeeds), delete.
#
# In devstack, as a member of a project:
#
#   $ . openrc demo demo
#   $ $DEST/dbaas-scheduler/devstack/smoke.sh
#
# The functional test suite runs it too, against a dbaas-scheduler-all it
# starts (tests/functional/osc/test_smoke.py), and against the WSGI
# application on /backup-scheduler with an engine and a worker, as this
# plugin deploys them (tests/functional/osc/test_smoke_wsgi.py).
#
# Environment:
#   OPENSTACK         the command (default: openstack), with any options,
#                     e.g. "openstack --os-cloud devstack"
#   SMOKE_BACKEND     the policy's backend (default: fake, which needs no
#                     database instance)
#   SMOKE_INSTANCE    the instance to back up (default: smoke-instance;
#                     a Trove instance ID with SMOKE_BACKEND=trove)
#   SMOKE_TIMEOUT     seconds the manual run may take (default: 300)
#
# Prints what it does; exits 0 when every step worked, else 1 with the
# step that failed.

set -o errexit -o nounset -o pipefail

OPENSTACK=${OPENSTACK:-openstack}
SMOKE_BACKEND=${SMOKE_BACKEND:-fake}
SMOKE_INSTANCE=${SMOKE_INSTANCE:-smoke-instance}
SMOKE_TIMEOUT=${SMOKE_TIMEOUT:-300}
NAME=smoke-$(date +%s)-$$

function osc {
    # shellcheck disable=SC2086
    $OPENSTACK database backup "$@"
}

function fail {
    echo "SMOKE FAILED: $*" >&2
    exit 1
}

function step {
    echo "== $*"
}

step "create the policy $NAME"
POLICY=$(osc policy create --name "$NAME" --instance "$SMOKE_INSTANCE" \
    --backend "$SMOKE_BACKEND" --schedule '0 3 * * *' \
    --timezone Europe/Berlin --keep-last 2 -f value -c ID)
[[ -n "$POLICY" ]] || fail "no policy ID"
trap 'osc policy delete "$POLICY" >/dev/null 2>&1 || true' EXIT

step "list and show it"
osc policy list -f value -c ID | grep -qx "$POLICY" \
    || fail "$POLICY is not listed"
[[ "$(osc policy show "$NAME" -f value -c ID)" == "$POLICY" ]] \
    || fail "show by name"

step "its next runs"
[[ $(osc policy next-runs "$POLICY" --count 3 -f value | wc -l) -eq 3 ]] \
    || fail "next-runs"

step "pause and resume"
osc policy pause "$POLICY" --reason smoke
[[ "$(osc policy show "$POLICY" -f value -c Enabled)" == "False" ]] \
    || fail "still enabled after pause"
osc policy resume "$POLICY"
[[ "$(osc policy show "$POLICY" -f value -c Enabled)" == "True" ]] \
    || fail "not enabled after resume"

step "run it now"
EXECUTION=$(osc policy run "$POLICY" -f value -c ID)
deadline=$((SECONDS + SMOKE_TIMEOUT))
while :; do
    status=$(osc policy execution show "$EXECUTION" -f value -c Status)
    case "$status" in
        SUCCEEDED) break ;;
        FAILED|SKIPPED)
            fail "execution $EXECUTION: $status:" \
                "$(osc policy execution show "$EXECUTION" -f value -c Fault)"
            ;;
    esac
    (( SECONDS < deadline )) \
        || fail "execution $EXECUTION still $status after ${SMOKE_TIMEOUT}s"
    sleep 2
done
osc policy execution list --policy "$POLICY" -f value -c ID \
    | grep -qx "$EXECUTION" || fail "execution $EXECUTION is not listed"

step "delete it"
osc policy delete "$POLICY"
trap - EXIT
if osc policy show "$POLICY" >/dev/null 2>&1; then
    fail "$POLICY still exists"
fi
[[ "$(osc policy execution show "$EXECUTION" -f value -c Status)" \
    == "SUCCEEDED" ]] || fail "the execution did not stay as history"

echo "SMOKE OK: policy $POLICY, execution $EXECUTION"
