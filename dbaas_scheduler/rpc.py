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
"""oslo.messaging plumbing: the transport, servers and in-process dispatch.

Client targets are built only in :mod:`dbaas_scheduler.rpcapi`; servers only
in :meth:`dbaas_scheduler.service.Service.serve_rpc`, through
:func:`get_server`.  With
``[DEFAULT] rpc_transport = none`` there is no transport: endpoints register
with :func:`register_local_endpoint` and casts run in a local thread pool.
"""

import threading

import futurist
from oslo_config import cfg
from oslo_log import log as logging
import oslo_messaging as messaging

from dbaas_scheduler import context as dbaas_context

LOG = logging.getLogger(__name__)

# Seconds an unused fanout or reply queue lives on RabbitMQ (x-expires),
# unless [oslo_messaging_rabbit] rabbit_transient_queues_ttl is set.  Each
# RPC server declares a fanout queue of its own (and each RPC client a
# reply queue) under a random name; a process killed without closing its
# connection leaves them behind until they expire (oslo.messaging's 1800 s:
# about thirty per chaos run).  No program of ours sends a fanout cast, so
# only reply queues matter: 120 s is twice rpc_response_timeout's default
# (a reply is never deleted before its call gave up) and longer than a
# reconnection takes (rabbit_interval_max, 30 s), after which a live
# process declares its queues again anyway.
TRANSIENT_QUEUE_TTL = 120

_TRANSPORT = None
_LOCAL_ENDPOINTS = {}
_LOCAL_EXECUTOR = None
_LOCK = threading.Lock()


class RequestContextSerializer(messaging.Serializer):
    """Sends our RequestContext as a dict; entities pass through as JSON.

    A received context is whatever the sender wrote: oslo.messaging
    authenticates no caller, so anyone who may write to a topic may claim
    any roles, project and user there.  Endpoints authorize what it says
    all the same (the engine's RPC API), and only services may write to
    the topics (the admin guide's "Security model").  ``is_admin`` is
    never taken from a message.  With ``secrets=False`` the user's token
    is left out of what is sent (casts to the workers, which never use
    it).
    """

    def __init__(self, secrets=True):
        self.secrets = secrets

    def serialize_entity(self, context, entity):
        return entity

    def deserialize_entity(self, context, entity):
        return entity

    def serialize_context(self, context):
        return dbaas_context.as_message(context, secrets=self.secrets)

    def deserialize_context(self, context):
        return dbaas_context.RequestContext.from_message(context)


def init(conf):
    """Create the process's transport.  Call after forking, not before."""
    global _TRANSPORT
    if conf.rpc_transport == 'none':
        return
    with _LOCK:
        if _TRANSPORT is None:
            # Our own clients get our exceptions back as themselves.
            _TRANSPORT = messaging.get_rpc_transport(
                conf, allowed_remote_exmods=['dbaas_scheduler.exception'])
            _set_transient_queue_ttl(conf)


def _set_transient_queue_ttl(conf):
    # The driver's options exist once the transport is loaded; connections
    # (opened later, on first use) read them.  A default: the operator's
    # value in the configuration file wins.
    try:
        conf.set_default('rabbit_transient_queues_ttl', TRANSIENT_QUEUE_TTL,
                         group='oslo_messaging_rabbit')
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        LOG.debug('Not a RabbitMQ transport: no queue expiry set')


def cleanup():
    """Close the transport and the local dispatch pool (tests, shutdown)."""
    global _TRANSPORT, _LOCAL_EXECUTOR
    with _LOCK:
        if _TRANSPORT is not None:
            _TRANSPORT.cleanup()
            _TRANSPORT = None
        if _LOCAL_EXECUTOR is not None:
            _LOCAL_EXECUTOR.shutdown(wait=True)
            _LOCAL_EXECUTOR = None
        _LOCAL_ENDPOINTS.clear()


def get_client(target, version_cap=None, secrets=True):
    """An RPC client; ``secrets=False`` sends contexts without the token."""
    if _TRANSPORT is None:
        raise RuntimeError('dbaas_scheduler.rpc.init() was not called')
    return messaging.get_rpc_client(
        _TRANSPORT, target, version_cap=version_cap,
        serializer=RequestContextSerializer(secrets=secrets))


class BoundedThreadPoolExecutor(futurist.ThreadPoolExecutor):
    """A thread pool whose ``submit`` waits while every thread is busy.

    oslo.messaging acknowledges an RPC message as soon as it arrives
    (before a thread is free to handle it), so the broker's prefetch count
    does not bound what a server takes: with an ordinary pool, one worker
    would queue a whole burst in memory while others idle, and lose it if
    it died.  With this pool the server's listener stops taking messages
    while all threads work, and the broker keeps them for other workers.
    """

    def __init__(self, max_workers=None, check_and_reject=None):
        super().__init__(max_workers=max_workers,
                         check_and_reject=check_and_reject)
        self._slots = threading.Semaphore(self._max_workers)

    def submit(self, fn, *args, **kwargs):
        self._slots.acquire()
        try:
            return super().submit(self._run_and_release, fn, *args,
                                  **kwargs)
        except BaseException:
            self._slots.release()
            raise

    def _run_and_release(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        finally:
            self._slots.release()


def get_server(target, endpoints):
    """An RPC server with the threading executor (never eventlet).

    Its pool is a :class:`BoundedThreadPoolExecutor`.  oslo.messaging has
    no public way to choose the pool: ``get_rpc_server`` takes only the
    executor *names* "threading" and "eventlet", and the server builds the
    pool when it starts from the class it loaded for that name
    (``_executor_cls``), which is replaced here -- the one private
    attribute we set.  The upstream change that would remove it: let
    ``get_rpc_server`` take a futurist executor class (or a bound on the
    messages a server takes beyond its pool).  tests/unit/test_rpc.py
    checks the behaviour from outside: a busy server leaves casts to the
    other servers of its topic.
    """
    if _TRANSPORT is None:
        raise RuntimeError('dbaas_scheduler.rpc.init() was not called')
    server = messaging.get_rpc_server(
        _TRANSPORT, target, endpoints, executor='threading',
        serializer=RequestContextSerializer(),
        access_policy=messaging.DefaultRPCAccessPolicy)
    if hasattr(server, '_executor_cls'):
        server._executor_cls = BoundedThreadPoolExecutor
    else:
        LOG.warning('This oslo.messaging release builds its RPC thread '
                    'pool another way: a busy %s server takes messages it '
                    'has no thread for, instead of leaving them to the '
                    'other servers of its topic', target.topic)
    return server


def register_local_endpoint(topic, endpoint, pool_size):
    """Serve casts to ``topic`` in this process (``rpc_transport = none``).

    Casts run on a pool of ``pool_size`` threads shared by all local
    endpoints, so a burst queues in memory instead of at a broker.
    """
    global _LOCAL_EXECUTOR
    with _LOCK:
        _LOCAL_ENDPOINTS[topic] = endpoint
        if _LOCAL_EXECUTOR is None:
            _LOCAL_EXECUTOR = futurist.ThreadPoolExecutor(
                max_workers=pool_size)


class LocalClient:
    """Stands in for an RPCClient when engine and worker share a process.

    Only casts are supported: that is all the engine sends to workers.
    """

    def __init__(self, topic):
        self.topic = topic

    def prepare(self, **kwargs):
        return self

    def can_send_version(self, version):
        return True

    def cast(self, context, method, **kwargs):
        endpoint = _LOCAL_ENDPOINTS.get(self.topic)
        if endpoint is None or _LOCAL_EXECUTOR is None:
            # Like a broker with no consumer: the message is lost, and the
            # engine's sweep casts the execution again later.
            raise messaging.MessageDeliveryFailure(
                'no local endpoint serves topic %s' % self.topic)
        # As over a broker: the worker gets a copy without the user's token.
        local_context = dbaas_context.RequestContext.from_message(
            dbaas_context.as_message(context, secrets=False))
        _LOCAL_EXECUTOR.submit(_run_local, endpoint, local_context, method,
                               kwargs)


def _run_local(endpoint, context, method, kwargs):
    try:
        getattr(endpoint, method)(context, **kwargs)
    except Exception:
        LOG.exception('Local cast of %s failed', method)
