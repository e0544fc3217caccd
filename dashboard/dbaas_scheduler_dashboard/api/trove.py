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
"""The names of Trove instances, as the user logged in to Horizon sees them.

Through the ``database`` endpoint of the user's catalog, with the user's
token: ``GET /instances/{id}`` for each instance asked about.  Anything
that goes wrong (no Trove in the catalog, an instance the user may not
see, Trove down) leaves the instance unnamed: the tables then show its
ID, which is what the policy holds.
"""

import logging

from django.conf import settings
from django.urls import NoReverseMatch
from django.urls import reverse
from keystoneauth1 import session as ks_session
from keystoneauth1 import token_endpoint
from openstack_dashboard.api import base

LOG = logging.getLogger(__name__)
SERVICE_TYPE = 'database'
TIMEOUT = 5
# trove-dashboard's page of one instance.
DETAIL_URL = 'horizon:project:databases:detail'


def instance_names(request, instance_ids):
    """{instance id: name} for those of ``instance_ids`` Trove names."""
    instance_ids = sorted(set(filter(None, instance_ids)))
    if not instance_ids:
        return {}
    try:
        url = base.url_for(request, SERVICE_TYPE)
    except Exception:  # no Trove in this cloud's catalog
        return {}
    verify = not getattr(settings, 'OPENSTACK_SSL_NO_VERIFY', False)
    cacert = getattr(settings, 'OPENSTACK_SSL_CACERT', None)
    if verify and cacert:
        verify = cacert
    session = ks_session.Session(
        auth=token_endpoint.Token(url, request.user.token.id), verify=verify)
    names = {}
    for instance_id in instance_ids:
        try:
            answer = session.get('%s/instances/%s' % (url.rstrip('/'),
                                                      instance_id),
                                 raise_exc=False, timeout=TIMEOUT)
        except Exception as exc:
            LOG.warning('Trove did not answer about instance %s: %s',
                        instance_id, exc)
            break  # nor would it for the next ones
        if answer.status_code != 200:
            continue
        try:
            name = answer.json()['instance']['name']
        except (ValueError, KeyError, TypeError):
            continue
        if name:
            names[instance_id] = name
    return names


def dashboard_installed():
    return 'trove_dashboard' in getattr(settings, 'INSTALLED_APPS', ())


def instance_url(instance_id):
    """trove-dashboard's page of the instance, if that plugin is here."""
    if not instance_id or not dashboard_installed():
        return None
    try:
        return reverse(DETAIL_URL, args=[instance_id])
    except NoReverseMatch:
        return None
