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
"""Microversions: the header, the gates of routes, fields and answers."""

import json
from unittest import mock

from oslotest import base
import webob
import webob.dec

from dbaas_scheduler.api import fault
from dbaas_scheduler.api import handler
from dbaas_scheduler.api.handlers import backup_policy as policy_handler
from dbaas_scheduler.api.handlers import template as template_handler
from dbaas_scheduler.api import microversion
from dbaas_scheduler.api.schemas import template as template_schema
from dbaas_scheduler.api.schemas import validation
from dbaas_scheduler.api import util
from dbaas_scheduler import exception

V = microversion.Version.parse


class TestVersion(base.BaseTestCase):

    def test_ordered_as_numbers(self):
        self.assertLess(V('1.9'), V('1.10'))
        self.assertLess(V('1.10'), V('2.0'))
        self.assertEqual('1.10', str(V('1.10')))

    def test_malformed(self):
        for text in ('1', '1.', '.1', '1.0.0', '01.0', '1.01', 'a.b',
                     '1.99999', '-1.0', ' 1.0', '0.9'):
            self.assertRaises(ValueError, V, text)

    def test_the_versions_are_in_order_and_start_at_1_0(self):
        versions = [V(text) for text in microversion.VERSIONS]
        self.assertEqual(V('1.0'), versions[0])
        self.assertEqual(sorted(set(versions)), versions)
        # One minor version after another: no gap, no skipped number.
        self.assertEqual([V('1.%d' % n) for n in range(len(versions))],
                         versions)
        self.assertEqual(versions[-1], microversion.MAX_VERSION)


class TestParseHeader(base.BaseTestCase):

    def test_absent_is_the_oldest(self):
        self.assertEqual(V('1.0'), microversion.parse_header(None))
        self.assertEqual(V('1.0'), microversion.parse_header(''))

    def test_latest(self):
        self.assertEqual(microversion.MAX_VERSION,
                         microversion.parse_header('backup-scheduler latest'))

    def test_other_services_are_ignored(self):
        self.assertEqual(V('1.0'), microversion.parse_header(
            'compute 2.1,  backup-scheduler 1.0 ,placement 1.39'))
        self.assertEqual(V('1.0'), microversion.parse_header('compute 2.1'))

    @mock.patch.object(microversion, 'MAX_VERSION', V('1.3'))
    def test_a_served_version(self):
        self.assertEqual(V('1.2'), microversion.parse_header(
            'BACKUP-SCHEDULER 1.2'))
        self.assertEqual(V('1.3'), microversion.parse_header(
            'backup-scheduler latest'))

    def test_not_acceptable(self):
        for text in ('backup-scheduler 2.0', 'backup-scheduler 1.9999'):
            error = self.assertRaises(
                exception.MicroversionNotAcceptable,
                microversion.parse_header, text)
            self.assertIn('this server serves 1.0 to %s'
                          % str(microversion.MAX_VERSION), str(error))

    def test_malformed(self):
        for text, says in (
                ('backup-scheduler 1', 'two whole numbers'),
                ('backup-scheduler', 'a service type and a version'),
                ('1.0', 'a service type and a version'),
                ('backup-scheduler 1.0 extra', 'a service type and a'),
                ('backup_scheduler 1.0', 'spelt backup-scheduler'),
                ('BackupScheduler 1.0', 'spelt backup-scheduler'),
                ('backup-scheduler 1.0, backup-scheduler 1.0',
                 'more than once'),
                ('backup-scheduler 1.0\x00', 'NUL')):
            error = self.assertRaises(exception.Invalid,
                                      microversion.parse_header, text)
            self.assertIn(says, str(error))


def _app(handler_app):
    return microversion.MicroversionMiddleware(
        fault.FaultWrapper(handler_app))


@webob.dec.wsgify
def _echo_version(req):
    return util.json_response({'version': str(microversion.requested(req))})


class TestMiddleware(base.BaseTestCase):

    def call(self, header=None, app=_echo_version):
        req = webob.Request.blank('/')
        if header is not None:
            req.headers['OpenStack-API-Version'] = header
        return req.get_response(_app(app))

    def test_every_answer_says_its_version(self):
        response = self.call()
        self.assertEqual(200, response.status_int)
        self.assertEqual({'version': '1.0'}, response.json)
        self.assertEqual('backup-scheduler 1.0',
                         response.headers['OpenStack-API-Version'])
        self.assertEqual('OpenStack-API-Version', response.headers['Vary'])

    def test_errors_of_the_application_too(self):
        @webob.dec.wsgify
        def refuse(req):
            raise exception.PolicyNotFound(policy_id='x')
        response = self.call('backup-scheduler 1.0', refuse)
        self.assertEqual(404, response.status_int)
        self.assertEqual('backup-scheduler 1.0',
                         response.headers['OpenStack-API-Version'])

    def test_a_malformed_header_is_400(self):
        response = self.call('backup-scheduler x')
        self.assertEqual(400, response.status_int)
        error = json.loads(response.text)['errors'][0]
        self.assertEqual('dbaas_scheduler.invalid_microversion',
                         error['code'])
        self.assertEqual('OpenStack-API-Version', response.headers['Vary'])

    def test_a_version_not_served_is_406(self):
        response = self.call('backup-scheduler 3.0')
        self.assertEqual(406, response.status_int)
        self.assertEqual('dbaas_scheduler.microversion_not_acceptable',
                         json.loads(response.text)['errors'][0]['code'])


@webob.dec.wsgify
def _old(req):
    return util.json_response({'handler': 'old'})


@microversion.since('1.2')
@webob.dec.wsgify
def _new(req):
    return util.json_response({'handler': 'new'})


_ROUTES = {
    '/v1/things': {'GET': _old, 'POST': _new},
    '/v1/new-things': {'GET': _new},
}


@mock.patch.object(microversion, 'MAX_VERSION', V('1.2'))
@mock.patch.object(handler, 'ROUTE_DECLARATIONS', _ROUTES)
class TestRouteGates(base.BaseTestCase):

    def call(self, method, path, version):
        req = webob.Request.blank(path, method=method)
        req.headers['OpenStack-API-Version'] = 'backup-scheduler ' + version
        return req.get_response(_app(handler.APIHandler()))

    def test_a_method_newer_than_the_request_is_405(self):
        response = self.call('POST', '/v1/things', '1.1')
        self.assertEqual(405, response.status_int)
        self.assertEqual('GET, HEAD, OPTIONS', response.headers['Allow'])
        response = self.call('POST', '/v1/things', '1.2')
        self.assertEqual(200, response.status_int)
        self.assertEqual({'handler': 'new'}, response.json)

    def test_options_says_the_methods_of_the_version(self):
        self.assertEqual('GET, HEAD, OPTIONS', self.call(
            'OPTIONS', '/v1/things', '1.0').headers['Allow'])
        self.assertEqual('GET, HEAD, OPTIONS, POST', self.call(
            'OPTIONS', '/v1/things', '1.2').headers['Allow'])

    def test_a_path_newer_than_the_request_is_404(self):
        response = self.call('GET', '/v1/new-things', '1.1')
        self.assertEqual(404, response.status_int)
        self.assertIn('No resource at /v1/new-things in version 1.1',
                      json.loads(response.text)['errors'][0]['detail'])
        self.assertEqual(404, self.call(
            'OPTIONS', '/v1/new-things', '1.1').status_int)
        self.assertEqual(200, self.call(
            'GET', '/v1/new-things', 'latest').status_int)
        self.assertEqual(200, self.call(
            'HEAD', '/v1/new-things', '1.2').status_int)


_SCHEMA = {
    'type': 'object',
    'properties': {
        'thing': {
            'type': 'object',
            'properties': {
                'name': {'type': 'string'},
                'window': {'type': 'string', microversion.SINCE: '1.1'},
                'inner': {
                    'type': 'object',
                    'properties': {
                        'deep': {'type': 'integer',
                                 microversion.SINCE: '1.2'}},
                    'additionalProperties': False,
                },
            },
            'required': ['name', 'window'],
            'additionalProperties': False,
        },
    },
}


class TestFieldGates(base.BaseTestCase):

    def request(self, version):
        req = webob.Request.blank('/')
        req.environ[microversion.ENVIRON_KEY] = V(version)
        return req

    @mock.patch.object(microversion, 'MAX_VERSION', V('1.2'))
    def test_a_field_newer_than_the_request_is_unknown(self):
        old = microversion.request_schema(self.request('1.0'), _SCHEMA)
        error = self.assertRaises(
            exception.Invalid, validation.validate,
            {'thing': {'name': 'a', 'window': 'w'}}, old)
        self.assertIn("'window' was unexpected", str(error))
        validation.validate({'thing': {'name': 'a'}}, old)

        middle = microversion.request_schema(self.request('1.1'), _SCHEMA)
        validation.validate({'thing': {'name': 'a', 'window': 'w'}}, middle)
        self.assertRaises(exception.Invalid, validation.validate,
                          {'thing': {'name': 'a'}}, middle)
        self.assertRaises(exception.Invalid, validation.validate,
                          {'thing': {'name': 'a', 'window': 'w',
                                     'inner': {'deep': 1}}}, middle)

        new = microversion.request_schema(self.request('1.2'), _SCHEMA)
        self.assertIs(_SCHEMA, new)
        validation.validate({'thing': {'name': 'a', 'window': 'w',
                                       'inner': {'deep': 1}}}, new)

    def test_the_schema_itself_is_left_as_it_is(self):
        microversion.schema_at(_SCHEMA, V('1.0'))
        self.assertIn('window', _SCHEMA['properties']['thing']['properties'])
        self.assertEqual(['name', 'window'],
                         _SCHEMA['properties']['thing']['required'])

    def test_query_parameters(self):
        parameters = {'limit': {'type': 'integer'},
                      'window': {'type': 'string', microversion.SINCE: '1.1'}}
        self.assertEqual(['limit'], list(microversion.query_schema(
            self.request('1.0'), parameters)))
        self.assertEqual(['limit', 'window'], sorted(
            microversion.query_schema(self.request('1.1'), parameters)))

    def test_response_fields(self):
        body = {'id': 'x', 'window': 'w', 'protected': True}
        since = {'window': '1.1', 'protected': '1.2'}
        self.assertEqual({'id': 'x'}, microversion.response_fields(
            self.request('1.0'), body, since))
        self.assertEqual({'id': 'x', 'window': 'w'},
                         microversion.response_fields(
                             self.request('1.1'), body, since))
        self.assertTrue(microversion.is_at_least(self.request('1.2'), '1.1'))
        self.assertFalse(microversion.is_at_least(self.request('1.0'),
                                                  '1.1'))


class TestVerifyScheduleGates(base.BaseTestCase):
    """1.8: verify_schedule on policies, the verify fields on templates."""

    def request(self, version):
        req = webob.Request.blank('/')
        req.environ[microversion.ENVIRON_KEY] = V(version)
        return req

    def test_policy_fields(self):
        body = {'id': 'p', 'verify_every': None,
                'verify_schedule': '0 4 * * *', 'verify_next_at': 't'}
        self.assertEqual({'id': 'p', 'verify_every': None},
                         microversion.response_fields(
                             self.request('1.7'), body, policy_handler.SINCE))
        self.assertEqual(body, microversion.response_fields(
            self.request('1.8'), body, policy_handler.SINCE))

    def test_template_fields(self):
        body = {'id': 't', 'verify_every': 2, 'verify_check': None,
                'verify_schedule': None}
        self.assertEqual({'id': 't'}, microversion.response_fields(
            self.request('1.7'), body, template_handler.SINCE))
        self.assertEqual(body, microversion.response_fields(
            self.request('1.8'), body, template_handler.SINCE))

    def test_template_requests(self):
        for field in ('verify_every', 'verify_check', 'verify_schedule'):
            properties = microversion.schema_at(
                template_schema.CREATE, microversion.Version.parse('1.7')
            )['properties']['policy_template']['properties']
            self.assertNotIn(field, properties)
            properties = microversion.schema_at(
                template_schema.CREATE, microversion.Version.parse('1.8')
            )['properties']['policy_template']['properties']
            self.assertIn(field, properties)
