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
"""Imports go down only: the layers of doc/source/contributor/architecture.rst.

The table below is the one in the architecture document ("Layout"); a
module that imports from a layer above its own fails this test, so a
reader can trust the picture.
"""

import ast
import pathlib

from oslotest import base

import dbaas_scheduler

PACKAGE = pathlib.Path(dbaas_scheduler.__file__).parent

# The modules every layer may import: configuration, context, errors,
# enumerations, the version, the process's own metrics (stats), the IANA
# time zones.
BASE = {'conf', 'config', 'context', 'enums', 'exception', 'stats',
        'timezones', 'version'}

# Top-level module or folder -> what else it may import.
ALLOWED = {
    # The programs assemble everything.
    'cmd': None,
    'wsgi': None,
    # The three services: the domain layer and everything below it, but
    # never one another.
    'api': {'objects', 'policy', 'policies', 'db', 'dispatch', 'rpc',
            'rpcapi', 'schedule', 'service', 'servicegroup', 'keystone',
            'backends', 'notifications', 'metrics'},
    'engine': {'objects', 'policy', 'policies', 'db', 'dispatch', 'rpc',
               'rpcapi', 'schedule', 'service', 'servicegroup', 'keystone',
               'backends', 'notifications'},
    'worker': {'db', 'rpc', 'rpcapi', 'schedule', 'service', 'servicegroup',
               'keystone', 'backends', 'notifications'},
    # What every interface does to a resource.
    # What every interface does to a resource; which backends the caller
    # may choose is a policy rule (policies/backend.py).
    'objects': {'db', 'dispatch', 'rpcapi', 'schedule', 'keystone',
                'backends', 'notifications', 'policy', 'policies'},
    # Who may do what: the oslo.policy rules in code and their enforcer,
    # shared by every door (REST, RPC).
    'policy': {'policies'},
    'policies': set(),
    # Service scaffolding and what the layers above share.
    'service': {'rpc', 'rpcapi', 'servicegroup'},
    'dispatch': {'db'},
    # The cluster's Prometheus metrics, read from the database.
    'metrics': {'db'},
    'servicegroup': {'db'},
    'notifications': set(),
    'backends': {'keystone'},
    'keystone': set(),
    'rpcapi': {'rpc'},
    'rpc': set(),
    'db': set(),
    # A data migration may use the schedule maths of the release that
    # wrote it (the H rule is stable across releases).
    'db/migration': {'schedule', 'cron'},
    'schedule': {'cron'},
    'cron': set(),
    # Test doubles shipped for tests, benchmarks and tools.
    'testing': {'backends'},
}
ALLOWED.update({name: set() for name in BASE})


def _layer(module):
    parts = module.split('.')
    return parts[1] if len(parts) > 1 else None


def _imports(path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == 'dbaas_scheduler':
                for alias in node.names:
                    yield 'dbaas_scheduler.' + alias.name, node.lineno
            elif node.module.startswith('dbaas_scheduler.'):
                yield node.module, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith('dbaas_scheduler.'):
                    yield alias.name, node.lineno


class TestLayers(base.BaseTestCase):

    def test_every_module_has_a_layer(self):
        layers = {path.stem if path.is_file() else path.name
                  for path in PACKAGE.iterdir()
                  if (path.suffix == '.py' and path.stem != '__init__')
                  or (path.is_dir() and (path / '__init__.py').exists()
                      and path.name != 'tests')}
        self.assertEqual(set(), layers - set(ALLOWED),
                         'add the new module to ALLOWED here and to the '
                         'layout table of architecture.rst')

    def test_imports_go_down_only(self):
        wrong = []
        for path in sorted(PACKAGE.rglob('*.py')):
            relative = path.relative_to(PACKAGE)
            if relative.parts[0] == 'tests':
                continue
            layer = relative.parts[0].removesuffix('.py')
            if relative.parts[:2] == ('db', 'migration'):
                allowed = ALLOWED['db/migration']
            else:
                allowed = ALLOWED.get(layer)
            if allowed is None:
                continue
            for module, line in _imports(path):
                target = _layer(module)
                if target in (layer, None) or target in BASE:
                    continue
                if target not in allowed:
                    wrong.append('%s:%d imports %s' % (relative, line,
                                                       module))
        self.assertEqual([], wrong)
