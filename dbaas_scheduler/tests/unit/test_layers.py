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

``ALLOWED`` below is the one source of the layers: a module that imports
from a layer above its own fails this test, and so does a row of the
architecture document's table ("Layout") that says otherwise, so a reader
can trust the picture.  Nothing under ``tools/`` imports the test suites.
"""

import ast
import pathlib
import re

from oslotest import base

import dbaas_scheduler

PACKAGE = pathlib.Path(dbaas_scheduler.__file__).parent
TOOLS = PACKAGE.parent / 'tools'
ARCHITECTURE = PACKAGE.parent / 'doc/source/contributor/architecture.rst'

# The modules every layer may import: configuration, context, errors,
# enumerations, the version, the process's own metrics (stats), the IANA
# time zones.
BASE = {'conf', 'config', 'context', 'enums', 'exception', 'protection',
        'coverage', 'stats', 'timezones', 'version'}

# Top-level module or folder -> what else it may import.
ALLOWED = {
    # The programs assemble everything.
    'cmd': None,
    'wsgi': None,
    # The three services: the domain layer and everything below it, but
    # never one another.
    'api': {'objects', 'policy', 'policies', 'db', 'dispatch', 'rpc',
            'rpcapi', 'schedule', 'windows', 'service', 'servicegroup',
            'keystone', 'backends', 'notifications', 'metrics', 'retention'},
    'engine': {'objects', 'policy', 'policies', 'db', 'dispatch', 'rpc',
               'rpcapi', 'schedule', 'windows', 'service', 'servicegroup',
               'keystone', 'backends', 'notifications', 'api/schemas'},
    'worker': {'db', 'rpc', 'rpcapi', 'schedule', 'windows', 'service',
               'servicegroup', 'keystone', 'backends', 'notifications',
               'retention'},
    # What every interface does to a resource.
    # What every interface does to a resource; which backends the caller
    # may choose is a policy rule (policies/backend.py).
    'objects': {'db', 'dispatch', 'rpcapi', 'schedule', 'windows',
                'keystone', 'backends', 'notifications', 'policy',
                'policies', 'retention'},
    # Retention maths (pure): the worker deletes by it, the lifecycle
    # preview runs it forward.
    'retention': {'backends'},
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
    # The JSON schemas of the requests: the RPC door checks what it is
    # sent with them too, so that both doors refuse the same fields.
    'api/schemas': {'db', 'schedule', 'windows'},
    'schedule': {'cron'},
    # Start, completion and exclusion windows: pure maths on times.
    'windows': set(),
    'cron': set(),
    # Test doubles shipped for tests, benchmarks and tools.
    'testing': {'backends'},
}
ALLOWED.update({name: set() for name in BASE})

# Folders that reach the data through objects/ only, never db/ itself.
THROUGH_OBJECTS = ('api/handlers',)


# Folders that are a layer of their own, apart from their parent's.
SUBLAYERS = ('db/migration', 'api/schemas')


def _layer(module):
    parts = module.split('.')
    if '/'.join(parts[1:3]) in SUBLAYERS:
        return '/'.join(parts[1:3])
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


def _literals(text):
    """The ``names`` of a cell, without ``.py`` or a trailing ``/``."""
    return [name.removesuffix('/').removesuffix('.py')
            for name in re.findall(r'``([^`]+)``', text)]


def documented_layers(text):
    """{module: what it may import} as the Layout table says it.

    The table is the first ``list-table`` after the "Layout" title; its
    first column names modules and folders, its last one what each of them
    may import besides the base row and itself: ``names``, or "anything"
    (None), or "base only" (nothing else).  A module named in two rows is
    an error.
    """
    layout = text[text.index('\nLayout\n------\n'):]
    table = layout[layout.index('.. list-table::'):]
    table = table[:table.index('\n\n', table.index('   * - '))]
    layers = {}
    for row in table.split('\n   * - ')[2:]:
        cells = [' '.join(cell.split()) for cell in row.split('\n     - ')]
        modules, may_import = cells[0], cells[-1]
        if modules.startswith('base row:'):
            allowed = set()
        elif may_import == 'anything':
            allowed = None
        elif may_import == 'base only':
            allowed = set()
        else:
            allowed = set(_literals(may_import))
        for module in _literals(modules):
            if module in layers:
                raise ValueError('%s is in two rows of the Layout table'
                                 % module)
            layers[module] = None if allowed is None else allowed - {module}
    return layers


class TestLayers(base.BaseTestCase):

    def test_the_documented_table_is_this_one(self):
        documented = documented_layers(ARCHITECTURE.read_text())
        missing = object()

        def shown(allowed):
            if allowed is missing:
                return 'no row'
            return 'anything' if allowed is None else sorted(allowed)

        wrong = ['%s: ALLOWED says %s, the table %s' % (
                 name, shown(ALLOWED.get(name, missing)),
                 shown(documented.get(name, missing)))
                 for name in sorted(set(ALLOWED) | set(documented))
                 if ALLOWED.get(name, missing)
                 != documented.get(name, missing)]
        self.assertEqual([], wrong, 'the Layout table of %s must say what '
                         'ALLOWED says' % ARCHITECTURE.relative_to(
                             PACKAGE.parent))

    def test_the_documented_base_row_is_base(self):
        text = ARCHITECTURE.read_text()
        row = text[text.index('   * - base row:'):]
        row = row[:row.index('\n     - ')]
        self.assertEqual(BASE, set(_literals(row)))

    def test_tools_never_import_the_tests(self):
        wrong = []
        for path in sorted(TOOLS.rglob('*.py')):
            for module, line in _imports(path):
                if module == 'dbaas_scheduler.tests' or module.startswith(
                        'dbaas_scheduler.tests.'):
                    wrong.append('%s:%d imports %s' % (
                        path.relative_to(PACKAGE.parent), line, module))
        self.assertEqual([], wrong, 'what tools/ needs of the tests belongs '
                                    'in dbaas_scheduler/testing/')

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
            if '/'.join(relative.parts[:2]) in SUBLAYERS:
                layer = '/'.join(relative.parts[:2])
            allowed = ALLOWED.get(layer)
            if allowed is None:
                continue
            for module, line in _imports(path):
                target = _layer(module)
                # Within one folder (a sub-layer and its parent included),
                # imports are free.
                if (target is None or target in BASE
                        or target.split('/')[0] == layer.split('/')[0]):
                    continue
                if target not in allowed:
                    wrong.append('%s:%d imports %s' % (relative, line,
                                                       module))
        self.assertEqual([], wrong)

    def test_handlers_reach_the_data_through_objects(self):
        wrong = []
        for folder in THROUGH_OBJECTS:
            for path in sorted((PACKAGE / folder).rglob('*.py')):
                for module, line in _imports(path):
                    if _layer(module) == 'db':
                        wrong.append('%s:%d imports %s' % (
                            path.relative_to(PACKAGE), line, module))
        self.assertEqual([], wrong)
