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
"""Trove's fake mode, repaired from outside: run with Trove's own python.

Usage (the interpreter of the virtualenv Trove is installed in)::

    python fakemode.py --config-file trove.conf setup
    python fakemode.py --config-file trove.conf serve

``setup`` creates Trove's tables and a ``mysql`` datastore; ``serve`` runs
the Trove API and its task manager in one process, like
``trove-fake-mode`` (trove/cmd/fakemode.py), on ``bind_host``.

This file is never imported by dbaas-scheduler: Trove monkey-patches the
standard library with eventlet, so it lives in its own virtualenv and
process.  Trove's test fakes (``trove/tests/fakes``) have not been run by
Trove's own gate for years; what broke in them is repaired here, at import
time, without changing a file of Trove.  Each repair says what broke; see
doc/source/contributor/trove-fake-mode.rst.
"""

import functools
import inspect
import sys
import types
import uuid

# Trove's own entry points monkey-patch first; so must we, before anything
# imports threading or socket.
import eventlet
eventlet.monkey_patch()
from oslo_config import cfg  # noqa: E402
from oslo_log import log as logging  # noqa: E402

LOG = logging.getLogger('dbaas_scheduler_trove_fakemode')

# The image every fake datastore version boots from (any UUID will do: the
# fake Glance below knows only this one).
IMAGE_ID = '00000000-0000-4000-8000-000000000001'
DATASTORE = 'mysql'
DATASTORE_VERSION = '8.0'

_opts = [
    cfg.FloatOpt('fake_backup_seconds', default=2.0,
                 help='Seconds the fake guest agent takes for a backup '
                      '(Trove hard-codes 10).'),
]


def _unquote_user_host(user_hostname):
    """``'user'@'host'`` -> ``(user, host)``.

    trove/tests/fakes/guestagent.py imports this from
    ``trove.tests.util``, a test helper module that was deleted upstream;
    without it the fake guest agent cannot be imported at all.
    """
    unquoted = user_hostname.replace("'", '').replace('`', '')
    if '@' in unquoted:
        user, _, host = unquoted.partition('@')
        return user, host
    return unquoted, '%'


def _repair_guest_import():
    import trove.tests.util as util_package
    util_package.unquote_user_host = _unquote_user_host
    sys.modules['trove.tests.util'] = util_package


class _Image:
    def __init__(self, image_id):
        self.id = image_id
        self.status = 'active'
        self.checksum = 'fake-image-checksum'
        self.name = 'trove-fake-%s' % image_id

    def __getitem__(self, key):
        return getattr(self, key)


class _Images:
    def get(self, image_id):
        from glanceclient import exc
        if image_id != IMAGE_ID:
            raise exc.HTTPNotFound('No image with ID %s' % image_id)
        return _Image(image_id)

    def list(self, filters=None, sort=None, limit=None):
        return [_Image(IMAGE_ID)]


class FakeGlanceClient:
    """Glance, as far as Trove asks it: the one image.

    Trove checks the datastore version's image in Glance; there is no fake
    Glance in trove/tests/fakes, and no Glance here.
    """

    def __init__(self):
        self.images = _Images()


def fake_create_glance_client(context, region_name=None):
    return FakeGlanceClient()


def _repair_nova():
    """The fake Nova client predates what Trove 26 asks of Nova.

    * ``api_version``: Trove compares it to pick request arguments;
    * ``servers.create`` is called with arguments (``tags``,
      ``server_group`` hints, ...) the fake does not take;
    * a created server ends ``HEALTHY`` (a Trove service status) where
      Nova says ``ACTIVE``, so Trove never sees its server come up;
    * it asks a request context for ``tenant``, which oslo.context renamed
      ``project_id`` (and then dropped the alias);
    * ids are ``FAKE_<uuid>``, 41 characters, too long for Trove's
      36-character ``compute_instance_id``/``volume_id`` columns on MySQL.
    """
    from novaclient import api_versions
    from trove.common import context
    from trove.tests.fakes import nova

    context.TroveContext.tenant = property(lambda self: self.project_id)

    # "FAKE_VOL_" and 26 hex digits: 35 characters. (Trove runs its fakes on
    # SQLite, which does not check lengths.)
    real_uuid4 = uuid.uuid4
    nova.uuid = types.SimpleNamespace(uuid4=lambda: real_uuid4().hex[:26])
    nova.FakeClient.api_version = api_versions.APIVersion('2.67')

    original_create = nova.FakeServers.create
    accepted = ('name', 'image_id', 'flavor_ref', 'files', 'userdata',
                'block_device_mapping_v2', 'security_groups',
                'availability_zone', 'nics', 'config_drive',
                'scheduler_hints', 'key_name')

    def create_server(self, name, image_id, flavor_ref, *args, **kwargs):
        kwargs = {key: value for key, value in kwargs.items()
                  if key in accepted}
        server = original_create(self, name, image_id, flavor_ref, *args,
                                 **kwargs)
        # After the fake's own HEALTHY, due at 1 s.
        server.schedule_status('ACTIVE', 1.2)
        return server

    original_list = nova.FakeServers.list

    def list_servers(self, *args, **kwargs):
        # Trove lists with search_opts (all tenants, tags) these days.
        return original_list(self)

    nova.FakeServers.create = create_server
    nova.FakeServers.list = list_servers


def _repair_cinder():
    """The fake Cinder client cannot take part in deleting an instance.

    Trove 26's task manager lists the instance's volumes by name
    (``volumes.list(search_opts={'name': 'trove-<id>'})``), which the
    fake's ``list`` refuses: the delete dies there, before the instance is
    marked deleted, and it stays SHUTDOWN (being deleted) for ever.  The
    fake's volumes have no ``delete`` either.  Here ``list`` filters by
    name as Cinder does, and a volume deletes itself from the fake's
    store.
    """
    from trove.tests.fakes import nova

    def list_volumes(self, detailed=True, search_opts=None):
        name = (search_opts or {}).get('name')
        return [volume for volume in list(self.db.values())
                if name is None or volume.name == name]

    def delete_volume(self):
        self.parent.db.pop(self.id, None)

    nova.FakeVolumes.list = list_volumes
    nova.FakeVolume.delete = delete_volume


def _tolerant(function):
    """``function``, ignoring keyword arguments it does not know."""
    parameters = inspect.signature(function).parameters
    if any(p.kind == p.VAR_KEYWORD for p in parameters.values()):
        return function

    @functools.wraps(function)
    def call(*args, **kwargs):
        known = {key: value for key, value in kwargs.items()
                 if key in parameters}
        return function(*args, **known)
    return call


def _repair_guest(seconds):
    """The fake guest agent, as Trove 26's task manager calls it.

    Trove passes arguments the fake's methods do not take (``prepare`` gets
    ``ds_version``, ...): they are dropped.  A backup takes ``seconds``
    instead of the fake's hard-coded 10, which would make every test wait.
    """
    from trove.tests.fakes import guestagent
    for name, member in list(vars(guestagent.FakeGuest).items()):
        if not name.startswith('_') and inspect.isfunction(member):
            setattr(guestagent.FakeGuest, name, _tolerant(member))
    original = guestagent.FakeGuest.create_backup
    real_spawn_after = guestagent.eventlet.spawn_after

    def create_backup(self, backup_info):
        def spawn_after(delay, function, *args, **kwargs):
            return real_spawn_after(seconds, function, *args, **kwargs)
        guestagent.eventlet.spawn_after = spawn_after
        try:
            return original(self, backup_info)
        finally:
            guestagent.eventlet.spawn_after = real_spawn_after

    guestagent.FakeGuest.create_backup = create_backup


def _initialize(action):
    from trove.common import cfg as trove_cfg
    from trove.db import get_db_api
    conf = trove_cfg.CONF
    conf.register_cli_opts(_opts)
    trove_cfg.parse_args(sys.argv)
    logging.setup(conf, None)
    from trove import rpc
    rpc.init(conf)
    if action == 'setup':
        # Trove maps its models onto the tables it finds: create them
        # first.
        get_db_api().db_sync(conf)
    get_db_api().configure_db()
    return conf


def setup(conf):
    """Trove's tables and the datastore the tests create instances of.

    ``trove-manage db_sync`` creates the tables, then runs an upgrade task
    (tagging existing Nova servers) that needs calls the fake Nova client
    does not have, and dies; the migration alone is all a new database
    needs.
    """
    from trove.datastore import models as datastore_models
    datastore_models.update_datastore(DATASTORE, None)
    datastore_models.update_datastore_version(
        DATASTORE, DATASTORE_VERSION, 'mysql', IMAGE_ID, None, '', 1,
        None, None, version=DATASTORE_VERSION)
    datastore_models.update_datastore(DATASTORE, DATASTORE_VERSION)
    print('Trove database ready: datastore %s %s' % (DATASTORE,
                                                     DATASTORE_VERSION))


def serve(conf):
    """The API and the task manager, as trove-fake-mode runs them.

    trove-fake-mode starts its task manager with an empty message key,
    while the API encrypts what it sends with ``taskmanager_rpc_encr_key``:
    the task manager cannot read a single request, and creating an
    instance fails with "'TroveContext' object has no attribute
    'notification'".  Here both use the configured key.
    """
    from trove.common.rpc import service as rpc_service
    from trove.common.rpc import version as rpc_version
    from trove.common import wsgi

    paste = conf.find_file(conf.api_paste_config)
    launcher = wsgi.launch('trove', conf.bind_port, paste,
                           host=conf.bind_host, workers=1)
    taskmanager = rpc_service.RpcService(
        key=conf.taskmanager_rpc_encr_key, topic=conf.taskmanager_queue,
        rpc_api_version=rpc_version.RPC_API_VERSION,
        manager='trove.taskmanager.manager.Manager')
    taskmanager.start()
    LOG.info('Trove fake mode serving on %s:%s', conf.bind_host,
             conf.bind_port)
    launcher.wait()


def main():
    action = sys.argv.pop()
    if action not in ('setup', 'serve'):
        sys.exit('usage: fakemode.py --config-file FILE setup|serve')
    _repair_guest_import()
    conf = _initialize(action)
    _repair_nova()
    _repair_cinder()
    _repair_guest(conf.fake_backup_seconds)
    if action == 'setup':
        setup(conf)
    else:
        serve(conf)


if __name__ == '__main__':
    main()
