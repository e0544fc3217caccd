#!/bin/bash -xe
# Create the users and databases the functional tests use, on the
# PostgreSQL and MariaDB/MySQL servers running on this machine (127.0.0.1).
# Safe to run more than once.
#
# The database user is oslo.db's "opportunistic" convention:
# openstack_citest / openstack_citest, allowed to create the throw-away
# databases each test run provisions.

DB_USER=openstack_citest
DB_PW=openstack_citest

# MariaDB / MySQL: root with an empty password, as on the developer and CI
# machines; set MYSQL_ROOT_PW otherwise.
MYSQL_ROOT_PW=${MYSQL_ROOT_PW:-}
mysql_root() {
    if command -v mariadb >/dev/null; then client=mariadb; else client=mysql; fi
    $client -h 127.0.0.1 -u root ${MYSQL_ROOT_PW:+-p"$MYSQL_ROOT_PW"} "$@"
}
mysql_root -e "
    CREATE USER IF NOT EXISTS '$DB_USER'@'%' IDENTIFIED BY '$DB_PW';
    CREATE USER IF NOT EXISTS '$DB_USER'@'localhost' IDENTIFIED BY '$DB_PW';
    GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'%' WITH GRANT OPTION;
    GRANT ALL PRIVILEGES ON *.* TO '$DB_USER'@'localhost' WITH GRANT OPTION;
    CREATE DATABASE IF NOT EXISTS openstack_citest;
    FLUSH PRIVILEGES;"

# PostgreSQL: the postgres superuser over TCP (trust authentication here).
PGHOST=${PGHOST:-127.0.0.1}
psql_root() { psql -h "$PGHOST" -U postgres -v ON_ERROR_STOP=1 -q "$@"; }
psql_root -c "DO \$\$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$DB_USER') THEN
        CREATE ROLE $DB_USER LOGIN CREATEDB PASSWORD '$DB_PW';
    END IF; END \$\$;"
psql_root -tc "SELECT 1 FROM pg_database WHERE datname = 'openstack_citest'" \
    | grep -q 1 || psql_root -c "CREATE DATABASE openstack_citest OWNER $DB_USER"
