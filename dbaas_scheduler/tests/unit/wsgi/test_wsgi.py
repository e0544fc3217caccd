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
"""The WSGI entry point: its configuration files, and a path prefix.

``dbaas_scheduler.wsgi.api`` configures the process when imported, as a
WSGI server does it, so each check imports it in a Python of its own and
calls ``application`` there with the environ a server mounting it at
``/backup-scheduler`` gives (``SCRIPT_NAME``), as devstack's Apache
(mod_proxy_uwsgi) does.
"""

import json
import os
import subprocess
import sys

import fixtures

from dbaas_scheduler.tests import backend_fixtures
from dbaas_scheduler.tests import base
from dbaas_scheduler import wsgi

# Loads the application, creates the schema (SQLite) and sends it the
# requests given as JSON on stdin; prints status, headers and body of each.
_SERVE = r'''
import json, sys
import webob
from dbaas_scheduler.wsgi import api
from dbaas_scheduler.db import migration
from oslo_config import cfg
migration.upgrade()
print(json.dumps({'connection': cfg.CONF.database.connection}))
for method, script_name, path, body in json.load(sys.stdin):
    req = webob.Request.blank(path, method=method,
                              base_url='http://api.example:80')
    req.environ['SCRIPT_NAME'] = script_name
    req.headers.update({'X-Project-Id': 'p1', 'X-Roles': 'member,reader',
                        'X-User-Id': 'u1'})
    if body is not None:
        req.content_type = 'application/json'
        req.json = body
    resp = req.get_response(api.application)
    # /healthcheck answers text or JSON, by oslo.middleware's version.
    is_json = resp.content_type == 'application/json'
    print(json.dumps({'status': resp.status_int,
                      'location': resp.headers.get('Location'),
                      'body': (resp.json if is_json else resp.text)
                              if resp.body else None}))
'''

PREFIX = '/backup-scheduler'
POLICY = {'backup_policy': {'name': 'nightly', 'instance_id': 'db-1',
                            'backend': 'fake', 'schedule': '30 2 * * *'}}


class TestConfigFiles(base.TestCase):

    def test_nothing_set_means_the_default_search(self):
        self.assertIsNone(wsgi.config_files({}))

    def test_comma_separated_in_order(self):
        self.assertEqual(
            ['/etc/a.conf', '/etc/b.conf'],
            wsgi.config_files({wsgi.CONFIG_FILES_ENV:
                               '/etc/a.conf, /etc/b.conf,'}))

    def test_the_older_variable_still_works(self):
        self.assertEqual(['/etc/old.conf'], wsgi.config_files(
            {wsgi.OLD_CONFIG_FILES_ENV: '/etc/old.conf'}))

    def test_the_new_variable_wins(self):
        self.assertEqual(['/etc/new.conf'], wsgi.config_files(
            {wsgi.CONFIG_FILES_ENV: '/etc/new.conf',
             wsgi.OLD_CONFIG_FILES_ENV: '/etc/old.conf'}))

    def test_set_but_empty_means_no_file(self):
        # Not the default search: an operator emptied it on purpose.
        self.assertEqual([], wsgi.config_files(
            {wsgi.CONFIG_FILES_ENV: '',
             wsgi.OLD_CONFIG_FILES_ENV: '/etc/old.conf'}))


class TestApplication(base.TestCase):

    def setUp(self):
        super().setUp()
        self.tempdir = self.useFixture(fixtures.TempDir()).path

    def write_config(self, name):
        path = os.path.join(self.tempdir, name)
        with open(path, 'w') as stream:
            # Log lines (one per request) on stderr: stdout is the
            # answers' JSON.
            stream.write('[DEFAULT]\nauth_strategy = noauth\n'
                         'use_stderr = true\n'
                         'rpc_transport = none\nstate_path = %s\n'
                         '[database]\nconnection = sqlite:///%s\n' % (
                             self.tempdir, os.path.join(self.tempdir,
                                                        name + '.sqlite')))
            # The member's policies name the fake backend.
            for group, options in backend_fixtures.config_sections(
                    self.tempdir).items():
                stream.write('[%s]\n' % group)
                for option, value in options.items():
                    stream.write('%s = %s\n' % (option, value))
        return path

    def serve(self, requests, variable=wsgi.CONFIG_FILES_ENV, config=None):
        env = {name: value for name, value in os.environ.items()
               if name not in (wsgi.CONFIG_FILES_ENV,
                               wsgi.OLD_CONFIG_FILES_ENV)}
        env[variable] = config or self.write_config('api.conf')
        result = subprocess.run(
            [sys.executable, '-c', _SERVE], input=json.dumps(requests),
            capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(0, result.returncode, result.stderr[-3000:])
        # Log lines (noauth's warning) go to standard output too.
        lines = [json.loads(line) for line in result.stdout.splitlines()
                 if line.startswith('{')]
        return lines[0]['connection'], lines[1:]

    def test_reads_the_files_the_variable_names(self):
        config = self.write_config('mine.conf')
        for variable in (wsgi.CONFIG_FILES_ENV, wsgi.OLD_CONFIG_FILES_ENV):
            connection, _ = self.serve([], variable, config)
            self.assertEqual(
                'sqlite:///%s' % os.path.join(self.tempdir,
                                              'mine.conf.sqlite'),
                connection)

    def test_version_document_under_a_path_prefix(self):
        _, answers = self.serve([['GET', PREFIX, '/', None],
                                 ['GET', PREFIX, '/v1/', None],
                                 ['GET', PREFIX, '/v1/openapi.json', None],
                                 ['GET', PREFIX, '/healthcheck', None],
                                 ['GET', '', '/', None],
                                 ['GET', PREFIX + '/', '/', None]])
        root, v1, openapi, health, unprefixed, apache_root = answers
        self.assertEqual(200, root['status'])
        links = {link['rel']: link['href']
                 for link in root['body']['versions'][0]['links']}
        self.assertEqual(
            {'self': 'http://api.example/backup-scheduler/v1/',
             'describedby':
                 'http://api.example/backup-scheduler/v1/openapi.json'},
            links)
        self.assertEqual('http://api.example/backup-scheduler/v1/',
                         v1['body']['version']['links'][0]['href'])
        self.assertEqual([{'url': 'http://api.example/backup-scheduler'}],
                         openapi['body']['servers'])
        self.assertEqual(200, health['status'])
        # Apache's mod_proxy_uwsgi keeps the slash of /backup-scheduler/
        # in SCRIPT_NAME when PATH_INFO is "/".
        self.assertEqual(links['self'],
                         apache_root['body']['versions'][0]['links'][0][
                             'href'])
        # The same application at the root of a host has no prefix.
        self.assertEqual(
            'http://api.example/v1/',
            unprefixed['body']['versions'][0]['links'][0]['href'])

    def test_resource_links_under_a_path_prefix(self):
        _, answers = self.serve([
            ['POST', PREFIX, '/v1/backup-policies', POLICY],
            ['POST', PREFIX, '/v1/backup-policies',
             dict(POLICY, backup_policy=dict(POLICY['backup_policy'],
                                             name='second'))],
            ['GET', PREFIX, '/v1/backup-policies?limit=1', None],
        ])
        created, _, listed = answers
        self.assertEqual(201, created['status'], created)
        policy = created['body']['backup_policy']
        url = 'http://api.example/backup-scheduler/v1/backup-policies/%s' % (
            policy['id'])
        self.assertEqual(url, created['location'])
        self.assertEqual([{'rel': 'self', 'href': url}], policy['links'])
        self.assertEqual(200, listed['status'], listed)
        next_links = [link['href'] for link in listed['body']['links']
                      if link['rel'] == 'next']
        self.assertEqual(1, len(next_links), listed['body'])
        self.assertTrue(next_links[0].startswith(
            'http://api.example/backup-scheduler/v1/backup-policies?'),
            next_links[0])
