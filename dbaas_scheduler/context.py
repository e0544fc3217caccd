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
"""The request context: who is asking, and the enginefacade's transaction."""

from oslo_context import context
from oslo_db.sqlalchemy import enginefacade


@enginefacade.transaction_context_provider
class RequestContext(context.RequestContext):
    """A security context that also carries a database transaction.

    The ``transaction_context_provider`` decorator gives it the ``session``
    and ``connection`` attributes that :mod:`dbaas_scheduler.db.api`'s
    reader and writer decorators fill in.
    """

    @classmethod
    def from_message(cls, values):
        """The context an RPC message declares, as another service sent it.

        Nothing authenticates it (see ``rpc.RequestContextSerializer``):
        its roles, project and user are what the policy rules are checked
        against, and ``is_admin`` -- which only the service's own
        :func:`get_admin_context` may set -- is never taken from it.
        """
        return cls.from_dict(values, is_admin=False)


# What lets the holder of a context act as its user.
SECRET_FIELDS = ('auth_token', 'auth_token_info', 'service_token')


def as_message(context, secrets=True):
    """``context`` (any oslo.context one) as an RPC message carries it.

    Without ``secrets`` (casts to workers, which act through the policy's
    trust, never with the user's token) it leaves out every field of
    :data:`SECRET_FIELDS`.
    """
    values = context.to_dict()
    if not secrets:
        for field in SECRET_FIELDS:
            values.pop(field, None)
    return values


def get_admin_context():
    """A context for the service's own work (engine ticks, sweeps)."""
    return RequestContext(is_admin=True, overwrite=False)
