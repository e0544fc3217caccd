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
"""What every program does before it runs, and with an operator's mistake.

:func:`run` calls a program's real ``main`` and turns the mistakes an
operator makes -- a configuration file that does not exist, a database
that refuses the password or does not answer, a broker that refuses the
vhost, a state or backup directory that cannot be written, a second
all-in-one process on the same state directory, an API without
authentication on a public address -- into one line on
standard error and a non-zero exit status.  With ``--debug`` the
traceback comes first.

The ``check_*`` functions run in the launcher's process, before it forks:
a mistake found there stops the program once, instead of the launcher
restarting a child that fails the same way forever.
"""

import errno
import fcntl
import itertools
import os
import re
import socket
import ssl
import sys
import tempfile
import time
import traceback

import kombu
from oslo_config import cfg
from oslo_db import exception as db_exc
from oslo_log import log as logging
import oslo_messaging as messaging
import sqlalchemy as sa
from sqlalchemy.engine import url as sa_url

from dbaas_scheduler.db import api as db_api
from dbaas_scheduler.db import migration
from dbaas_scheduler import exception

LOG = logging.getLogger(__name__)

# Attempts to reach an unreachable message broker at start, and the wait
# before the first retry (doubled after each attempt): about 15 seconds.
BROKER_ATTEMPTS = 4
BROKER_FIRST_WAIT = 1.0
BROKER_CONNECT_TIMEOUT = 5

LOCK_FILE = 'dbaas-scheduler-all.lock'

# Kept open (and locked) for as long as the process lives.
_LOCK = None


class StartupRefused(exception.DbaasSchedulerException):
    """An operator's mistake found at start: the program does not run."""

    msg_fmt = '%(reason)s'


def _debug_requested(argv):
    try:
        if cfg.CONF.debug:
            return True
    except (cfg.NoSuchOptError, cfg.Error, AttributeError):
        pass
    return '--debug' in argv or '-d' in argv


def _reason(exc):
    """One line that tells what went wrong with ``exc``."""
    if isinstance(exc, sa.exc.DBAPIError) and exc.orig is not None:
        exc = exc.orig
    elif isinstance(exc, db_exc.DBError) and exc.inner_exception:
        return _reason(exc.inner_exception)
    text = ' '.join(line.strip() for line in str(exc).splitlines()
                    if line.strip())
    return text or type(exc).__name__


def masked_url(url):
    """``url`` with its password replaced by ``***``."""
    try:
        return sa_url.make_url(url).render_as_string(hide_password=True)
    except Exception:
        try:
            parsed = messaging.TransportURL.parse(cfg.CONF, url)
            for host in parsed.hosts:
                if host.password:
                    host.password = 'MASKED'
            # TransportURL quotes what it prints: ``***`` would be %2A%2A%2A.
            return str(parsed).replace(':MASKED@', ':***@')
        except Exception:
            return '<unparseable URL>'


def _describe(exc):
    """The one line for an operator's mistake, or None for anything else."""
    if isinstance(exc, cfg.ConfigFilesNotFoundError):
        return 'configuration file not found: %s' % ', '.join(
            exc.config_files)
    if isinstance(exc, (cfg.Error, exception.DbaasSchedulerException)):
        return _reason(exc)
    if isinstance(exc, (db_exc.DBConnectionError, sa.exc.OperationalError,
                        sa.exc.InterfaceError)):
        return 'cannot use the database %s: %s' % (
            masked_url(cfg.CONF.database.connection), _reason(exc))
    return None


def run(program, main, argv=None, error_status=1):
    """Run ``main(argv)``; an operator's mistake ends in one line.

    Returns what ``main`` returns, or ``error_status`` after writing
    ``<program>: <what to fix>`` on standard error (after the traceback,
    with ``--debug``).  Anything else -- a bug -- raises as usual.
    """
    argv = sys.argv[1:] if argv is None else argv
    try:
        return main(argv)
    except Exception as exc:
        if not report_mistake(program, exc, argv):
            raise
        return error_status


def report_mistake(program, exc, argv):
    """Write ``<program>: <what to fix>`` if ``exc`` is an operator's mistake.

    Returns whether it was one (and was reported); the traceback comes
    first with ``--debug`` in ``argv``.
    """
    line = _describe(exc)
    if line is None:
        return False
    if _debug_requested(argv):
        traceback.print_exc()
    print('%s: %s' % (program, line), file=sys.stderr)
    return True


def check_database(conf, program=None, schema=False):
    """Connect to ``[database] connection``, or refuse to start.

    With ``program``, the option must have been set: only
    dbaas-scheduler-all may use the embedded SQLite default.  With
    ``schema``, the database must also have a schema.  A mistake (a
    refused password, an unknown database, no schema) ends the program at
    once; a database that does not answer -- a Galera node failing over,
    a server still starting -- is tried again, as oslo.db does, every
    ``[database] retry_interval`` seconds up to ``[database] max_retries``
    times (-1: until it answers), one warning per failed attempt.
    """
    if program is not None:
        location = conf.get_location('connection', group='database')
        if location.location in (cfg.Locations.opt_default,
                                 cfg.Locations.set_default):
            raise StartupRefused(reason=(
                '[database] connection is not set: %s needs the database '
                'every dbaas-scheduler process shares (only '
                'dbaas-scheduler-all has an embedded SQLite default)'
                % program))
    url = conf.database.connection
    try:
        db_api.ensure_sqlite_directory(url)
    except OSError as exc:
        raise StartupRefused(reason='cannot create the directory of the '
                                    'database %s: %s'
                                    % (masked_url(url), exc.strerror or exc))
    try:
        engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    except ImportError as exc:
        raise StartupRefused(reason=missing_driver(url, exc))
    except Exception as exc:
        raise StartupRefused(reason='[database] connection %s is not a '
                                    'usable database URL: %s'
                                    % (masked_url(url), _reason(exc)))
    try:
        _wait_for_database(conf, engine, url)
        if schema and migration.version(engine) is None:
            raise StartupRefused(reason=(
                'the database %s has no schema: run "dbaas-scheduler-manage '
                'db upgrade" first' % masked_url(url)))
    except (sa.exc.DBAPIError, db_exc.DBError) as exc:
        raise StartupRefused(reason='cannot connect to the database %s: %s'
                                    % (masked_url(url), _reason(exc)))
    finally:
        engine.dispose()


# A server that does not answer (down, failing over, starting), as the
# drivers say it; anything else (a refused password, an unknown database)
# is a mistake that waiting does not mend.
_UNREACHABLE = re.compile(
    r"Connection refused|could not connect|connection to server at .* "
    r"failed: (?!.*(password|does not exist|no pg_hba))|timeout expired|"
    r"timed out|Can't connect to (MySQL|MariaDB) server|"
    r"Lost connection to (MySQL|MariaDB) server|"
    r"server closed the connection unexpectedly|No route to host|"
    r"\((2002|2003|2006|2013)[,)]", re.IGNORECASE | re.DOTALL)


def _unreachable(exc):
    return bool(_UNREACHABLE.search(str(getattr(exc, 'orig', None) or exc)))


def _wait_for_database(conf, engine, url):
    retries = conf.database.max_retries
    attempts = itertools.count(1) if retries < 0 else range(1, retries + 2)
    for attempt in attempts:
        try:
            with engine.connect() as connection:
                connection.execute(sa.text('SELECT 1'))
            return
        except sa.exc.DBAPIError as exc:
            if not _unreachable(exc) or (retries >= 0 and attempt > retries):
                raise
            LOG.warning('The database %s does not answer (attempt %d of %s), '
                        'trying again in %s s: %s', masked_url(url), attempt,
                        retries + 1 if retries >= 0 else 'unlimited',
                        conf.database.retry_interval, _reason(exc))
            time.sleep(conf.database.retry_interval)


# The database drivers this service's extras install (setup.cfg).
DRIVER_EXTRAS = {'pymysql': ('mysql', 'mysql+pymysql'),
                 'psycopg2': ('postgresql', 'postgresql+psycopg2')}


def missing_driver(url, exc):
    """What to install when the driver of ``url`` cannot be imported."""
    module = getattr(exc, 'name', None) or str(exc)
    extra = DRIVER_EXTRAS.get(module)
    if extra is not None:
        return ('the database driver %s of [database] connection %s is not '
                'installed: install dbaas-scheduler with its [%s] extra '
                '(pip install "dbaas-scheduler[%s]")'
                % (module, masked_url(url), extra[0], extra[0]))
    return ('the database driver %s of [database] connection %s is not '
            'installed: use a driver this service installs with an extra, '
            '%s' % (module, masked_url(url), ', '.join(
                '%s:// (pip install "dbaas-scheduler[%s]")' % (scheme, name)
                for name, scheme in sorted(DRIVER_EXTRAS.values()))))


def check_writable_directory(path, what):
    """Create ``path`` if needed and write a file into it, or refuse."""
    path = os.path.abspath(os.path.expanduser(path))
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise StartupRefused(reason='%s %s is not a writable directory: %s'
                                    % (what, path, exc.strerror or exc))
    return path


def check_local_backend(conf):
    """The local backend's backup directory, when it has instances."""
    if conf.local_backend.instances:
        check_writable_directory(conf.local_backend.backup_dir,
                                 '[local_backend] backup_dir')


def check_transport(conf, attempts=BROKER_ATTEMPTS,
                    first_wait=BROKER_FIRST_WAIT):
    """Log in to the message broker once, or refuse to start.

    Refused credentials or vhost end the program at once: retrying does
    not fix them.  An unreachable broker is tried ``attempts`` times with
    a doubling wait, one warning per failed attempt.  A transport URL that
    lists the nodes of a RabbitMQ cluster needs one node that answers, as
    oslo.messaging does: a service must start while a node is down (each
    node that does not answer is one warning line).
    """
    if conf.rpc_transport != 'oslo':
        return
    # Registers oslo.messaging's options (transport_url); connects nothing.
    messaging.get_rpc_transport(conf).cleanup()
    url = messaging.TransportURL.parse(conf, conf.transport_url)
    shown = masked_url(conf.transport_url)
    if url.transport not in ('rabbit', 'amqp', 'kombu'):
        return
    hosts = url.hosts or [messaging.TransportHost()]
    wait = first_wait
    for attempt in range(1, attempts + 1):
        failures = []
        for host in hosts:
            try:
                _log_in(conf, url, host)
            except Exception as exc:
                if _refused(exc):
                    raise StartupRefused(reason=(
                        'the message broker %s refused to log in (check the '
                        'user, password and vhost of transport_url): %s'
                        % (shown, _reason(exc))))
                failures.append((host, exc))
        if len(failures) < len(hosts):
            for host, exc in failures:
                LOG.warning('Message broker node %s:%s unreachable, using '
                            'the other nodes of transport_url: %s',
                            host.hostname, host.port or 5672, _reason(exc))
            return
        failure = failures[-1][1]
        if attempt == attempts:
            break
        LOG.warning('Message broker %s unreachable (attempt %d of %d), '
                    'retrying in %.1f s: %s', shown, attempt, attempts, wait,
                    _reason(failure))
        time.sleep(wait)
        wait *= 2
    raise StartupRefused(reason='the message broker %s is unreachable after '
                                '%d attempts: %s'
                                % (shown, attempts, _reason(failure)))


# [oslo_messaging_rabbit] ssl_version -> the ssl module's protocol.
_TLS_VERSIONS = {'tlsv1': 'PROTOCOL_TLSv1', 'tlsv1_1': 'PROTOCOL_TLSv1_1',
                 'tlsv1_2': 'PROTOCOL_TLSv1_2', 'sslv23': 'PROTOCOL_SSLv23',
                 'tls': 'PROTOCOL_TLS'}


def broker_tls(conf, hostname):
    """kombu's ``ssl`` for the broker, from oslo.messaging's TLS options.

    What oslo.messaging's rabbit driver connects with: ``ssl`` alone is
    TLS without verification; ``ssl_ca_file`` verifies the broker's
    certificate (and its name, ``hostname``) against that CA, as a private
    CA (kolla's internal TLS) needs; ``ssl_cert_file`` and
    ``ssl_key_file`` are this client's certificate.
    """
    rabbit = conf.oslo_messaging_rabbit
    if not rabbit.ssl:
        return False
    options = {}
    if rabbit.ssl_version:
        name = _TLS_VERSIONS.get(rabbit.ssl_version.lower())
        if name is None or not hasattr(ssl, name):
            raise StartupRefused(reason=(
                '[oslo_messaging_rabbit] ssl_version %s is not a TLS version '
                'this host supports (one of: %s)'
                % (rabbit.ssl_version, ', '.join(sorted(_TLS_VERSIONS)))))
        options['ssl_version'] = getattr(ssl, name)
    if rabbit.ssl_key_file:
        options['keyfile'] = rabbit.ssl_key_file
    if rabbit.ssl_cert_file:
        options['certfile'] = rabbit.ssl_cert_file
    if rabbit.ssl_ca_file:
        options['ca_certs'] = rabbit.ssl_ca_file
        options['cert_reqs'] = ssl.CERT_REQUIRED
        options['server_hostname'] = hostname
    return options or True


def _log_in(conf, url, host):
    with kombu.Connection(
            hostname=host.hostname or 'localhost',
            port=host.port or 5672,
            userid=host.username or 'guest',
            password=host.password or 'guest',
            virtual_host=url.virtual_host or '/',
            ssl=broker_tls(conf, host.hostname or 'localhost'),
            connect_timeout=BROKER_CONNECT_TIMEOUT) as connection:
        connection.connect()


def _refused(exc):
    # amqp's AccessRefused (403: login, vhost permissions) and NotAllowed
    # (530: no such vhost), however kombu wraps them.
    while exc is not None:
        if type(exc).__name__ in ('AccessRefused', 'NotAllowed'):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def check_api_port(conf):
    """Bind ``[api] bind_host:bind_port`` once, or refuse to start.

    The server binds in the launcher's child; a port in use there would
    make the launcher restart the child forever, a traceback each time.
    Checked here, before the fork, it is one line.  (Another program can
    still take the port between this check and the child's bind; the
    child then fails as before.)
    """
    host, port = conf.api.bind_host, conf.api.bind_port
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupRefused(reason='[api] bind_host %s is not an address '
                                    'of this host: %s' % (host, exc.strerror))
    family, kind, proto, _name, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # As cheroot binds: a port left in TIME_WAIT by the last run is
        # free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                reason = ('another program already listens on %s port %d: '
                          'stop it, or give this service another port '
                          '([api] bind_port)' % (host, port))
            elif exc.errno == errno.EADDRNOTAVAIL:
                reason = ('[api] bind_host %s is not an address of this '
                          'host' % host)
            elif exc.errno == errno.EACCES:
                reason = ('not allowed to listen on %s port %d (ports below '
                          '1024 need privileges): set [api] bind_port'
                          % (host, port))
            else:
                reason = 'cannot listen on %s port %d: %s' % (
                    host, port, exc.strerror or exc)
            raise StartupRefused(reason=reason)


def lock_state_directory(conf, program):
    """Take ``<state_path>/dbaas-scheduler-all.lock``, or refuse to start.

    The lock is held by this process (and its children) until it exits;
    the file holds the pid of the process that took it, to name it.
    """
    global _LOCK
    state_path = check_writable_directory(conf.state_path, 'state_path')
    path = os.path.join(state_path, LOCK_FILE)
    stream = open(path, 'a+')
    try:
        fcntl.flock(stream, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        stream.seek(0)
        holder = stream.read().strip() or 'unknown'
        stream.close()
        raise StartupRefused(reason=(
            'another %s (pid %s) is running on the state directory %s (it '
            'holds %s): stop it, or give this one another state_path'
            % (program, holder, state_path, path)))
    stream.seek(0)
    stream.truncate()
    stream.write('%d\n' % os.getpid())
    stream.flush()
    _LOCK = stream
    return path
