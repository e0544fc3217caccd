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
"""The API's middleware pipeline, assembled in one place.

From the outside in, a request meets: HTTPProxyToWSGI (the client's
scheme and host behind a proxy), RequestId, the request log (one INFO
line per request, :mod:`dbaas_scheduler.api.requestlog`), CORS (when
``[cors] allowed_origin`` is set), and the fault wrapper that turns every
exception below it into a JSON error (once more inside authentication).
Every request to the API's routes (not the health check or the
metrics) meets the microversion middleware
(:mod:`dbaas_scheduler.api.microversion`), inside authentication.
Then ``/healthcheck`` (oslo.middleware's Healthcheck, with its
``[healthcheck]`` options, for GET and HEAD), the version document at
``/``, the OpenAPI document at ``/v1/openapi.json`` and, when
``[metrics] enabled``, the cluster's Prometheus metrics at ``[metrics]
path`` (:mod:`dbaas_scheduler.metrics`) are served without
authentication (the metrics behind authentication of their own and the
rule ``dbaas_scheduler:metrics:get`` with ``[metrics]
require_authentication``); everything else meets authentication
(keystonemiddleware auth_token, or noauth), the RequestContext and the
handlers.
"""

import oslo_middleware
from oslo_middleware import healthcheck

from dbaas_scheduler.api import auth
from dbaas_scheduler.api import fault
from dbaas_scheduler.api import handler
from dbaas_scheduler.api import microversion
from dbaas_scheduler.api import openapi
from dbaas_scheduler.api import requestlog
from dbaas_scheduler import metrics
from dbaas_scheduler.policies import service as service_rules


def deploy(conf, worker_api=None):
    """The WSGI application of the REST API.

    ``worker_api`` is the RPC client the application casts manual runs
    with; :func:`dbaas_scheduler.api.service.make_application` builds it.
    An application without one answers every other request.
    """
    handlers = handler.APIHandler(worker_api)
    # Inside authentication too: its middleware (webob's wsgify) would
    # answer an HTTP exception from below with a page of its own.  Every
    # answer of the routes, errors too, says its microversion.
    application = microversion.MicroversionMiddleware(fault.FaultWrapper(
        auth.ContextMiddleware(handlers, conf)))
    application = auth.auth_middleware(conf, application)
    handlers = microversion.MicroversionMiddleware(
        fault.FaultWrapper(handlers))
    # Healthcheck answers every request it gets: it is mounted, not
    # chained, behind a filter of its methods.  Its [healthcheck] options
    # (e.g. a disable-by-file backend to drain a node) come from the
    # service's configuration.  Made as an application (app_factory), not
    # a filter: oslo.middleware 5.0.0, the oldest allowed, compares the
    # whole path with [healthcheck] path otherwise, and under a path prefix
    # (uWSGI on /backup-scheduler) passed every request on to a missing
    # application (502).
    health = handler.MethodFilter(
        healthcheck.Healthcheck.app_factory(None, oslo_config_config=conf),
        ('GET', 'HEAD'))
    public = {'': handlers, '/': handlers, '/healthcheck': health,
              openapi.OPENAPI_PATH: handlers}
    if conf.metrics.enabled:
        scrape = handler.MethodFilter(metrics.make_app(conf), ('GET', 'HEAD'))
        if conf.metrics.require_authentication:
            scrape = auth.auth_middleware(conf, fault.FaultWrapper(
                auth.ContextMiddleware(auth.Authorize(
                    scrape, service_rules.METRICS), conf)), warn=False)
        public[conf.metrics.path] = scrape
    application = auth.PublicPaths(application, public, conf)
    application = fault.FaultWrapper(application)
    if conf.cors.allowed_origin:
        application = oslo_middleware.CORS(application, conf)
    application = requestlog.RequestLog(application)
    application = oslo_middleware.RequestId(application)
    application = oslo_middleware.HTTPProxyToWSGI(application, conf)
    return application
