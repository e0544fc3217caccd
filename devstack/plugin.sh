#!/bin/bash
#
# devstack plugin of dbaas-scheduler: scheduled, exactly-once backups of
# database instances.
#
# Installs the package, creates its database, writes its configuration,
# registers its service user and its catalog entry (service type
# backup-scheduler), and runs the API (under uWSGI behind Apache on
# /backup-scheduler, or standalone: DBAAS_SCHEDULER_DEPLOY), an engine and
# a worker as the devstack services dbaas-sched-api, dbaas-sched-engine
# and dbaas-sched-worker. See devstack/README.rst.
#
# devstack sources this file at every phase, with the variables of
# devstack/settings and devstack's functions already loaded.

# Save trace setting
_XTRACE_DBAAS_SCHEDULER=$(set +o | grep xtrace)
set -o xtrace

DBAAS_SCHEDULER_SERVICES="dbaas-sched-api dbaas-sched-engine dbaas-sched-worker"

# Whether any of the plugin's services is enabled.
function is_dbaas_scheduler_enabled {
    local service
    for service in $DBAAS_SCHEDULER_SERVICES; do
        if is_service_enabled "$service"; then
            return 0
        fi
    done
    return 1
}

# install_dbaas_scheduler - the package and its console scripts, and the
# client package (the openstack client plugin), editable from
# DBAAS_SCHEDULER_DIR.
function install_dbaas_scheduler {
    # keystonemiddleware, with the memcache client its token cache needs
    # ([keystone_authtoken] memcached_servers).
    install_keystonemiddleware
    setup_develop "$DBAAS_SCHEDULER_DIR"
    pip_install -e "$DBAAS_SCHEDULER_DIR/client"
}

# install_dbaas_scheduler_dashboard - the Horizon plugin, editable.
function install_dbaas_scheduler_dashboard {
    pip_install -e "$DBAAS_SCHEDULER_DASHBOARD_DIR"
}

# configure_dbaas_scheduler_dashboard - the plugin's enabled files and
# settings into Horizon (as doc/source/install/dashboard.rst says), its
# static files collected and compressed, and Apache restarted.
function configure_dbaas_scheduler_dashboard {
    local package="$DBAAS_SCHEDULER_DASHBOARD_DIR/dbaas_scheduler_dashboard"
    local local_dir="$HORIZON_DIR/openstack_dashboard/local"
    mkdir -p "$local_dir/enabled" "$local_dir/local_settings.d"
    ln -fs "$package"/enabled/_[0-9]*.py "$local_dir/enabled/"
    ln -fs "$package"/local_settings.d/_[0-9]*.py \
        "$local_dir/local_settings.d/"
    $PYTHON "$HORIZON_DIR/manage.py" collectstatic --noinput
    $PYTHON "$HORIZON_DIR/manage.py" compress --force
    restart_apache_server
}

# dbaas_scheduler_api_url - the API's root, as clients reach it: the
# path behind devstack's Apache, or the standalone API's port.
function dbaas_scheduler_api_url {
    local base="$DBAAS_SCHEDULER_SERVICE_PROTOCOL://$DBAAS_SCHEDULER_SERVICE_HOST"
    if [[ "$DBAAS_SCHEDULER_DEPLOY" == "uwsgi" ]]; then
        echo "$base$DBAAS_SCHEDULER_URL_PATH"
    else
        echo "$base:$DBAAS_SCHEDULER_SERVICE_PORT"
    fi
}

# create_dbaas_scheduler_accounts - the service user, the service and its
# endpoints.
function create_dbaas_scheduler_accounts {
    # The "service" role lets it validate tokens; "admin" lets it delete
    # the trusts of policies their trustor did not delete.
    create_service_user "$DBAAS_SCHEDULER_SERVICE_USER" "admin"

    local url
    url=$(dbaas_scheduler_api_url)
    get_or_create_service "dbaas-scheduler" "$DBAAS_SCHEDULER_SERVICE_TYPE" \
        "Scheduled backups of database instances"
    # The root of the service, without /v1: the version document is there.
    # Public and internal (no admin: Keystone v3 has no use for it).
    get_or_create_endpoint "$DBAAS_SCHEDULER_SERVICE_TYPE" "$REGION_NAME" \
        "$url" "" "$url"
}

# configure_dbaas_scheduler - write the configuration file.
function configure_dbaas_scheduler {
    sudo install -d -o "$STACK_USER" -m 755 "$DBAAS_SCHEDULER_CONF_DIR"
    install -d -m 700 "$DBAAS_SCHEDULER_STATE_PATH"
    rm -f "$DBAAS_SCHEDULER_CONF"
    touch "$DBAAS_SCHEDULER_CONF"
    chmod 600 "$DBAAS_SCHEDULER_CONF"

    local conf=$DBAAS_SCHEDULER_CONF

    iniset "$conf" DEFAULT debug "$ENABLE_DEBUG_LOG_LEVEL"
    iniset "$conf" DEFAULT state_path "$DBAAS_SCHEDULER_STATE_PATH"
    iniset "$conf" DEFAULT auth_strategy keystone
    iniset "$conf" DEFAULT rpc_transport oslo
    # transport_url of devstack's RabbitMQ, with its heartbeat settings.
    iniset_rpc_backend dbaas-scheduler "$conf" DEFAULT

    iniset "$conf" database connection \
        "$(database_connection_url "$DBAAS_SCHEDULER_DB_NAME")"

    iniset "$conf" api trust_roles "$DBAAS_SCHEDULER_TRUST_ROLES"
    if [[ "$DBAAS_SCHEDULER_DEPLOY" == "uwsgi" ]]; then
        configure_dbaas_scheduler_uwsgi
    else
        iniset "$conf" api bind_host "$(ipv6_unquote "$SERVICE_LISTEN_ADDRESS")"
        if is_service_enabled tls-proxy; then
            iniset "$conf" api bind_port "$DBAAS_SCHEDULER_SERVICE_PORT_INT"
        else
            iniset "$conf" api bind_port "$DBAAS_SCHEDULER_SERVICE_PORT"
        fi
    fi
    # Behind tls-proxy the API sees plain HTTP: links in its answers take
    # the scheme and host from the proxy's X-Forwarded-* headers.
    if is_service_enabled tls-proxy; then
        iniset "$conf" oslo_middleware enable_proxy_headers_parsing True
    fi

    # Token validation by the API.
    configure_keystone_authtoken_middleware "$conf" \
        "$DBAAS_SCHEDULER_SERVICE_USER"

    # The same user, for trusts (API) and for calling Trove (workers).
    iniset "$conf" service_credentials auth_type password
    iniset "$conf" service_credentials auth_url "$KEYSTONE_SERVICE_URI"
    iniset "$conf" service_credentials username "$DBAAS_SCHEDULER_SERVICE_USER"
    iniset "$conf" service_credentials password "$SERVICE_PASSWORD"
    iniset "$conf" service_credentials user_domain_name "$SERVICE_DOMAIN_NAME"
    iniset "$conf" service_credentials project_name "$SERVICE_PROJECT_NAME"
    iniset "$conf" service_credentials project_domain_name "$SERVICE_DOMAIN_NAME"
    if [[ -n "$SSL_BUNDLE_FILE" ]]; then
        iniset "$conf" service_credentials cafile "$SSL_BUNDLE_FILE"
    fi

    iniset "$conf" trove region_name "$REGION_NAME"
    iniset "$conf" trove interface "$DBAAS_SCHEDULER_TROVE_INTERFACE"

    # Notifications: the service's own (for Ceilometer and other
    # consumers), and Trove's, so that the engines delete the policies of
    # instances Trove deleted.
    if [[ -n "$DBAAS_SCHEDULER_NOTIFICATION_DRIVER" ]]; then
        iniset "$conf" oslo_messaging_notifications driver \
            "$DBAAS_SCHEDULER_NOTIFICATION_DRIVER"
        iniset "$conf" notifications notification_format \
            "$DBAAS_SCHEDULER_NOTIFICATION_FORMAT"
    fi
    if [[ "$DBAAS_SCHEDULER_TROVE_NOTIFICATIONS" == "True" ]]; then
        iniset "$conf" engine trove_notifications True
    fi

    # Log lines for the systemd journal, as the other devstack services.
    setup_logging "$conf"
}

# configure_dbaas_scheduler_uwsgi - the API as a uWSGI application that
# devstack's Apache serves on /backup-scheduler (write_uwsgi_config adds
# the ProxyPass; the application gets the path as SCRIPT_NAME).
function configure_dbaas_scheduler_uwsgi {
    write_uwsgi_config "$DBAAS_SCHEDULER_UWSGI_CONF" "$DBAAS_SCHEDULER_UWSGI" \
        "$DBAAS_SCHEDULER_URL_PATH" "" "dbaas-scheduler-api"
    # The configuration file, whatever DBAAS_SCHEDULER_CONF says (the
    # application has no command line).
    iniset "$DBAAS_SCHEDULER_UWSGI_CONF" uwsgi env \
        "OS_DBAAS_SCHEDULER_CONFIG_FILES=$DBAAS_SCHEDULER_CONF"
}

# configure_trove_notifications - make Trove send its notifications to
# devstack's RabbitMQ (the engines' listener consumes
# trove.instance.delete there). Trove's plugin writes $TROVE_CONF before
# this plugin's post-config when it is enabled first, as the docs say.
function configure_trove_notifications {
    local trove_conf=${TROVE_CONF:-/etc/trove/trove.conf}
    if [[ ! -f "$trove_conf" ]]; then
        warn $LINENO "No $trove_conf (enable Trove's plugin before this one):" \
            "Trove sends no notifications; policies of deleted instances stay"
        return 0
    fi
    iniset "$trove_conf" oslo_messaging_notifications driver messagingv2
}

# init_dbaas_scheduler - (re)create the database and its schema.
function init_dbaas_scheduler {
    recreate_database "$DBAAS_SCHEDULER_DB_NAME"
    "$DBAAS_SCHEDULER_BIN_DIR/dbaas-scheduler-manage" \
        --config-file "$DBAAS_SCHEDULER_CONF" db upgrade
}

# start_dbaas_scheduler - the API, the engine and the worker.
function start_dbaas_scheduler {
    local args="--config-file $DBAAS_SCHEDULER_CONF"
    if [[ "$DBAAS_SCHEDULER_DEPLOY" == "uwsgi" ]]; then
        run_process dbaas-sched-api "$(which uwsgi) --procname-prefix dbaas-scheduler-api --ini $DBAAS_SCHEDULER_UWSGI_CONF"
    else
        run_process dbaas-sched-api "$DBAAS_SCHEDULER_BIN_DIR/dbaas-scheduler-api $args"
        if is_service_enabled tls-proxy && is_service_enabled dbaas-sched-api; then
            start_tls_proxy dbaas-scheduler-api '*' \
                "$DBAAS_SCHEDULER_SERVICE_PORT" "$DBAAS_SCHEDULER_SERVICE_HOST" \
                "$DBAAS_SCHEDULER_SERVICE_PORT_INT"
        fi
    fi
    run_process dbaas-sched-engine "$DBAAS_SCHEDULER_BIN_DIR/dbaas-scheduler-engine $args"
    run_process dbaas-sched-worker "$DBAAS_SCHEDULER_BIN_DIR/dbaas-scheduler-worker $args"

    if is_service_enabled dbaas-sched-api; then
        echo "Waiting for the dbaas-scheduler API to answer"
        if ! wait_for_service "$SERVICE_TIMEOUT" "$(dbaas_scheduler_api_url)/"; then
            die $LINENO "dbaas-sched-api did not start (see journalctl -u devstack@dbaas-sched-api)"
        fi
    fi
}

# stop_dbaas_scheduler - stop every process (SIGTERM: graceful).
function stop_dbaas_scheduler {
    local service
    for service in $DBAAS_SCHEDULER_SERVICES; do
        stop_process "$service"
    done
}

# cleanup_dbaas_scheduler - remove the configuration and local state, and
# the API's uWSGI configuration and Apache site.
function cleanup_dbaas_scheduler {
    remove_uwsgi_config "$DBAAS_SCHEDULER_UWSGI_CONF" "dbaas-scheduler-api"
    sudo rm -f "$(apache_site_config_for dbaas-scheduler-api)"
    sudo rm -rf "$DBAAS_SCHEDULER_CONF_DIR" "$DBAAS_SCHEDULER_STATE_PATH"
}

if is_dbaas_scheduler_enabled; then
    if [[ "$DBAAS_SCHEDULER_DEPLOY" != "uwsgi" && "$DBAAS_SCHEDULER_DEPLOY" != "standalone" ]]; then
        die $LINENO "DBAAS_SCHEDULER_DEPLOY=$DBAAS_SCHEDULER_DEPLOY: uwsgi or standalone"
    fi

    if [[ "$1" == "stack" && "$2" == "install" ]]; then
        echo_summary "Installing dbaas-scheduler"
        install_dbaas_scheduler
        if is_service_enabled horizon; then
            install_dbaas_scheduler_dashboard
        fi

    elif [[ "$1" == "stack" && "$2" == "post-config" ]]; then
        echo_summary "Configuring dbaas-scheduler"
        configure_dbaas_scheduler
        if [[ "$DBAAS_SCHEDULER_TROVE_NOTIFICATIONS" == "True" ]]; then
            configure_trove_notifications
        fi
        if is_service_enabled keystone; then
            create_dbaas_scheduler_accounts
        fi

    elif [[ "$1" == "stack" && "$2" == "extra" ]]; then
        echo_summary "Initializing and starting dbaas-scheduler"
        init_dbaas_scheduler
        start_dbaas_scheduler
        if is_service_enabled horizon; then
            echo_summary "Installing the dbaas-scheduler dashboard into Horizon"
            configure_dbaas_scheduler_dashboard
        fi
    fi

    if [[ "$1" == "unstack" ]]; then
        stop_dbaas_scheduler
    fi

    if [[ "$1" == "clean" ]]; then
        cleanup_dbaas_scheduler
    fi
fi

# Restore xtrace
$_XTRACE_DBAAS_SCHEDULER
