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
"""The REST client: URLs, bodies, pages and error messages."""

import json
from unittest import mock

from keystoneauth1 import session as ks_session
import requests

from dbaasschedulerclient.tests.unit import base
from dbaasschedulerclient.v1 import client

ROOT = 'http://api.example:8798'


def make_response(status, body=None, text=None, reason='Whatever'):
    response = requests.Response()
    response.status_code = status
    response.reason = reason
    response.encoding = 'utf-8'
    if body is not None:
        response._content = json.dumps(body).encode()
        response.headers['Content-Type'] = 'application/json'
    else:
        response._content = (text or '').encode()
    return response


def api_error(status, detail, code='dbaas_scheduler.x'):
    return make_response(status, {'errors': [{
        'status': status, 'code': code, 'title': 'Title', 'detail': detail,
        'request_id': 'req-1'}]})


class ClientTestCase(base.TestCase):
    """A real keystoneauth session over a mocked HTTP connection."""

    endpoint = ROOT

    def setUp(self):
        super().setUp()
        self.http = mock.Mock(spec=requests.Session)
        self.http.request.return_value = make_response(200, {})
        session = ks_session.Session(session=self.http)
        # Pinned: these tests count the requests; TestMicroversions
        # negotiates.
        self.client = client.Client(session, endpoint=self.endpoint,
                                    api_version='1.0')

    def answer(self, *responses):
        self.http.request.side_effect = list(responses)

    def sent(self, index=-1):
        """(method, URL, query, JSON body) of one request."""
        args, kwargs = self.http.request.call_args_list[index]
        data = kwargs.get('data')
        return (args[0], args[1], kwargs.get('params'),
                json.loads(data) if data else None)


class TestServiceRoot(base.TestCase):

    def test_version_suffix_is_dropped(self):
        for endpoint in (ROOT, ROOT + '/', ROOT + '/v1', ROOT + '/v1/',
                         ROOT + '/v1.0'):
            self.assertEqual(ROOT, client.service_root(endpoint), endpoint)

    def test_a_path_prefix_is_kept(self):
        self.assertEqual('https://cloud/backup-scheduler',
                         client.service_root(
                             'https://cloud/backup-scheduler/v1'))


class TestRequests(ClientTestCase):

    def test_create_policy(self):
        self.answer(make_response(201, {'backup_policy': {'id': 'p-1'}}))
        created = self.client.create_policy({'instance_id': 'i-1',
                                             'schedule': '@daily'})
        self.assertEqual({'id': 'p-1'}, created)
        self.assertEqual(
            ('POST', ROOT + '/v1/backup-policies', None,
             {'backup_policy': {'instance_id': 'i-1',
                                'schedule': '@daily'}}), self.sent())

    def test_update_policy_is_a_patch(self):
        self.answer(make_response(200, {'backup_policy': {'id': 'p-1'}}))
        self.client.update_policy('p-1', {'end_at': None})
        self.assertEqual(('PATCH', ROOT + '/v1/backup-policies/p-1', None,
                          {'backup_policy': {'end_at': None}}), self.sent())

    def test_ids_are_quoted_into_the_path(self):
        self.answer(make_response(200, {'backup_policy': {}}))
        self.client.get_policy('a/b c')
        self.assertEqual(ROOT + '/v1/backup-policies/a%2Fb%20c',
                         self.sent()[1])

    def test_delete_has_no_body(self):
        self.answer(make_response(204))
        self.assertIsNone(self.client.delete_policy('p-1'))
        self.assertEqual(('DELETE', ROOT + '/v1/backup-policies/p-1', None,
                          None), self.sent())

    def test_delete_with_its_backups(self):
        self.answer(make_response(204))
        self.client.delete_policy('p-1', delete_backups=True)
        self.assertEqual(('DELETE', ROOT + '/v1/backup-policies/p-1',
                          {'delete_backups': 'true'}, None), self.sent())

    def test_hold_and_release(self):
        self.answer(make_response(200, {'execution': {'held': True}}),
                    make_response(200, {'execution': {'held': False}}))
        self.assertTrue(self.client.hold_backup('e-1')['held'])
        self.assertEqual(('POST', ROOT + '/v1/executions/e-1/hold', None,
                          None), self.sent())
        self.assertFalse(self.client.release_backup('e-1')['held'])

    def test_pause_sends_the_reason_only_when_given(self):
        self.answer(make_response(200, {'backup_policy': {}}),
                    make_response(200, {'backup_policy': {}}))
        self.client.pause_policy('p-1')
        self.client.pause_policy('p-1', reason='maintenance')
        self.assertEqual(('POST', ROOT + '/v1/backup-policies/p-1/pause',
                          None, None), self.sent(0))
        self.assertEqual({'reason': 'maintenance'}, self.sent(1)[3])

    def test_resume(self):
        self.answer(make_response(200, {'backup_policy': {'id': 'p-1'}}))
        self.assertEqual({'id': 'p-1'}, self.client.resume_policy('p-1'))
        self.assertEqual(('POST', ROOT + '/v1/backup-policies/p-1/resume',
                          None, None), self.sent())

    def test_run_returns_the_execution(self):
        self.answer(make_response(202, {'execution': {'id': 'e-1'}}))
        self.assertEqual({'id': 'e-1'}, self.client.run_policy('p-1'))
        self.assertEqual('POST', self.sent()[0])
        self.assertEqual(ROOT + '/v1/backup-policies/p-1/run',
                         self.sent()[1])

    def test_next_runs(self):
        preview = {'next_runs': ['2027-01-31T01:30:00Z'],
                   'timezone': 'Europe/Berlin'}
        self.answer(make_response(200, preview))
        self.assertEqual(preview, self.client.next_runs('p-1', count=1))
        self.assertEqual(('GET', ROOT + '/v1/backup-policies/p-1/next-runs',
                          {'count': 1}, None), self.sent())

    def test_list_filters_leave_out_what_is_not_given(self):
        self.answer(make_response(200, {'backup_policies': [], 'links': []}))
        self.client.list_policies(name='orders', instance_id='i-1',
                                  enabled=False, all_projects=True)
        self.assertEqual({'name': 'orders', 'instance_id': 'i-1',
                          'enabled': 'false', 'all_projects': 'true'},
                         self.sent()[2])

    def test_execution_filters(self):
        self.answer(make_response(200, {'executions': [], 'links': []}))
        self.client.list_executions(policy_id='p-1', status='FAILED',
                                    since='2027-01-01T00:00:00Z', limit=5)
        self.assertEqual(
            ('GET', ROOT + '/v1/executions',
             {'policy_id': 'p-1', 'status': 'FAILED',
              'since': '2027-01-01T00:00:00Z', 'limit': 5}, None),
            self.sent())

    def test_get_execution(self):
        self.answer(make_response(200, {'execution': {'id': 'e-1'}}))
        self.assertEqual({'id': 'e-1'}, self.client.get_execution('e-1'))
        self.assertEqual(ROOT + '/v1/executions/e-1', self.sent()[1])

    def test_restore_an_execution(self):
        self.answer(make_response(202, {'restore': {'id': 'r-1'}}))
        self.assertEqual({'id': 'r-1'}, self.client.restore_execution(
            'e-1', {'target': 'copy'}))
        self.assertEqual(('POST', ROOT + '/v1/executions/e-1/restore', None,
                          {'target': 'copy'}), self.sent())

    def test_restores(self):
        self.answer(make_response(200, {'restore': {'id': 'r/1'}}))
        self.client.get_restore('r/1')
        self.assertEqual(ROOT + '/v1/restores/r%2F1', self.sent()[1])
        self.answer(make_response(200, {'restores': [], 'links': []}))
        self.client.list_restores(execution_id='e-1', status='FAILED')
        self.assertEqual(('GET', ROOT + '/v1/restores',
                          {'execution_id': 'e-1', 'status': 'FAILED'},
                          None), self.sent())

    def test_apply_a_template(self):
        self.answer(make_response(200, {'dry_run': True, 'enrolments': []}))
        self.client.apply_template('t/1', dry_run=True)
        self.assertEqual(('POST', ROOT + '/v1/policy-templates/t%2F1/apply',
                          None, {'dry_run': True, 'all_instances': True}),
                         self.sent())
        self.answer(make_response(200, {'dry_run': False, 'enrolments': []}))
        self.client.apply_template('t-1', instance_ids=['i-1'])
        self.assertEqual({'dry_run': False, 'instance_ids': ['i-1']},
                         self.sent()[3])


class TestFindPolicy(ClientTestCase):
    """A name or an ID, as osc-lib's find_resource takes them."""

    def test_an_id_is_one_request(self):
        self.answer(make_response(200, {'backup_policy': {'id': 'p-1'}}))
        self.assertEqual({'id': 'p-1'}, self.client.find_policy('p-1'))
        self.assertEqual(1, self.http.request.call_count)

    def test_a_name_is_looked_up_after_the_id(self):
        self.answer(api_error(404, 'Backup policy orders could not be found.'),
                    make_response(200, {'backup_policies': [
                        {'id': 'p-7', 'name': 'orders'}], 'links': []}))
        self.assertEqual({'id': 'p-7', 'name': 'orders'},
                         self.client.find_policy('orders'))
        self.assertEqual(('GET', ROOT + '/v1/backup-policies',
                          {'name': 'orders'}, None), self.sent())

    def test_nothing_by_either(self):
        self.answer(api_error(404, 'Backup policy orders could not be found.'),
                    make_response(200, {'backup_policies': [],
                                        'links': []}))
        error = self.assertRaises(client.NotFound, self.client.find_policy,
                                  'orders')
        self.assertEqual("No backup policy with a name or ID of 'orders' "
                         "exists.", str(error))

    def test_a_name_several_policies_have(self):
        self.answer(api_error(404, 'Backup policy orders could not be found.'),
                    make_response(200, {'backup_policies': [
                        {'id': 'p-7', 'name': 'orders'},
                        {'id': 'p-8', 'name': 'orders'}], 'links': []}))
        error = self.assertRaises(client.NoUniqueMatch,
                                  self.client.find_policy, 'orders')
        self.assertEqual("More than one backup policy is named 'orders': "
                         "give the ID of the one you mean (p-7, p-8).",
                         str(error))

    def test_other_errors_are_not_a_missing_policy(self):
        self.answer(api_error(403, 'Policy x does not allow this request.'))
        error = self.assertRaises(client.APIError, self.client.find_policy,
                                  'orders')
        self.assertEqual(403, error.status)
        self.assertEqual(1, self.http.request.call_count)


class TestPreviewAndServices(ClientTestCase):

    def test_preview_sends_what_is_given(self):
        answer = {'next_runs': ['2027-01-31T01:30:00Z'],
                  'timezone': 'Europe/Berlin', 'example': False}
        self.answer(make_response(200, answer))
        self.assertEqual(answer, self.client.preview_schedule(
            '30 2 * * *', timezone='Europe/Berlin', count=1))
        self.assertEqual(('GET', ROOT + '/v1/schedule-preview',
                          {'schedule': '30 2 * * *',
                           'timezone': 'Europe/Berlin', 'count': 1}, None),
                         self.sent())

    def test_services(self):
        self.answer(make_response(200, {'services': [{'id': 's-1'}]}))
        self.assertEqual([{'id': 's-1'}], self.client.list_services())
        self.assertEqual(('GET', ROOT + '/v1/services', None, None),
                         self.sent())

    def test_user_agent_names_the_client(self):
        self.answer(make_response(200, {'services': []}))
        self.client.list_services()
        agent = self.http.request.call_args.kwargs['headers']['User-Agent']
        self.assertTrue(agent.startswith('python-dbaas-schedulerclient'),
                        agent)


class TestPages(ClientTestCase):

    NEXT = [{'rel': 'next', 'href': 'http://elsewhere/v1/executions?x'}]

    def page(self, ids, more):
        return make_response(200, {
            'executions': [{'id': i} for i in ids],
            'links': self.NEXT if more else []})

    def test_every_page_without_a_limit(self):
        self.answer(self.page(['a', 'b'], True), self.page(['c'], False))
        found = self.client.list_executions(policy_id='p-1')
        self.assertEqual(['a', 'b', 'c'], [e['id'] for e in found])
        # The marker is carried over; the next link's host is not used.
        self.assertEqual(
            ('GET', ROOT + '/v1/executions',
             {'policy_id': 'p-1', 'marker': 'b'}, None), self.sent(1))

    def test_one_page_with_a_limit(self):
        self.answer(self.page(['a', 'b'], True))
        found = self.client.list_executions(limit=2, marker='z')
        self.assertEqual(['a', 'b'], [e['id'] for e in found])
        self.assertEqual(1, self.http.request.call_count)
        self.assertEqual({'limit': 2, 'marker': 'z'}, self.sent()[2])


class TestErrors(ClientTestCase):

    def call(self):
        return self.assertRaises(client.APIError, self.client.get_policy,
                                 'p-1')

    def test_the_message_is_the_api_detail(self):
        self.answer(api_error(404, 'Backup policy p-1 could not be found.',
                              'dbaas_scheduler.policy_not_found'))
        error = self.call()
        self.assertEqual('Backup policy p-1 could not be found.', str(error))
        self.assertEqual((404, 'dbaas_scheduler.policy_not_found', 'req-1'),
                         (error.status, error.code, error.request_id))

    def test_keystonemiddleware_error(self):
        self.answer(make_response(401, {'error': {
            'code': 401, 'title': 'Unauthorized',
            'message': 'The request you have made requires '
                       'authentication.'}}))
        self.assertEqual('The request you have made requires '
                         'authentication.', str(self.call()))

    def test_plain_text_error(self):
        self.answer(make_response(502, text='upstream timed out\n'))
        self.assertEqual('upstream timed out', str(self.call()))

    def test_html_error_gives_the_status(self):
        self.answer(make_response(503, text='<html>busy</html>',
                                  reason='Service Unavailable'))
        self.assertEqual('The backup scheduler API answered 503 Service '
                         'Unavailable.', str(self.call()))

    def test_errors_without_detail_use_the_title(self):
        self.answer(make_response(400, {'errors': [{'title': 'Bad'}]}))
        self.assertEqual('Bad', str(self.call()))

    def test_a_success_that_is_not_json(self):
        response = make_response(200, text='<html>a web server</html>')
        response.url = ROOT + '/v1/backup-policies/p-1'
        self.answer(response)
        self.assertIn('body that is not JSON; is %s/v1/backup-policies/p-1 '
                      'its URL?' % ROOT, str(self.call()))


def version_document(min_version='1.0', version='1.0'):
    return make_response(200, {'versions': [{
        'id': 'v1.0', 'status': 'CURRENT', 'min_version': min_version,
        'version': version, 'updated': '2026-11-22T00:00:00Z',
        'links': [{'rel': 'self', 'href': ROOT + '/v1/'}]}]})


class TestMicroversions(base.TestCase):
    """The header every request sends, pinned or negotiated."""

    def setUp(self):
        super().setUp()
        self.http = mock.Mock(spec=requests.Session)
        self.session = ks_session.Session(session=self.http)

    def header(self, index=-1):
        return self.http.request.call_args_list[index][1]['headers'].get(
            'OpenStack-API-Version')

    def test_pinned_sends_the_header_without_discovery(self):
        self.http.request.side_effect = [make_response(200, {
            'services': []})]
        api = client.Client(self.session, endpoint=ROOT, api_version='1.0')
        api.list_services()
        self.assertEqual(1, self.http.request.call_count)
        self.assertEqual('backup-scheduler 1.0', self.header())

    def test_negotiated_once_from_the_version_document(self):
        self.http.request.side_effect = [
            version_document('1.0', '1.0'),
            make_response(200, {'services': []}),
            make_response(200, {'services': []})]
        api = client.Client(self.session, endpoint=ROOT + '/v1')
        api.list_services()
        api.list_services()
        urls = [call[0][1] for call in self.http.request.call_args_list]
        self.assertEqual(ROOT, urls[0].rstrip('/'))
        self.assertEqual([ROOT + '/v1/services'] * 2, urls[1:])
        self.assertEqual('backup-scheduler 1.0', self.header(1))
        self.assertEqual('backup-scheduler 1.0', self.header(2))
        self.assertEqual('1.0', api.api_version)

    @mock.patch.object(client, 'MAX_API_VERSION', '1.3')
    def test_the_newest_both_speak(self):
        self.http.request.side_effect = [version_document('1.0', '1.7'),
                                         make_response(200, {'x': 1})]
        api = client.Client(self.session, endpoint=ROOT)
        self.assertEqual('1.3', api.api_version)

    @mock.patch.object(client, 'MAX_API_VERSION', '1.3')
    def test_an_older_server(self):
        self.http.request.side_effect = [version_document('1.0', '1.1')]
        self.assertEqual('1.1', client.Client(
            self.session, endpoint=ROOT).api_version)

    def test_a_server_before_microversions_serves_1_0(self):
        self.http.request.side_effect = [version_document('', '')]
        self.assertEqual('1.0', client.Client(
            self.session, endpoint=ROOT).api_version)

    def test_nothing_in_common(self):
        self.http.request.side_effect = [version_document('2.0', '2.9')]
        api = client.Client(self.session, endpoint=ROOT)
        error = self.assertRaises(client.UnsupportedVersion,
                                  api.list_services)
        self.assertEqual(
            'This client speaks versions 1.0 to %s of the backup scheduler '
            'API, the server 2.0 to 2.9: no version is common to both. '
            'Upgrade python-dbaas-schedulerclient.' % client.MAX_API_VERSION,
            str(error))


class TestCheckAPIVersion(base.TestCase):

    def test_a_version_the_client_speaks(self):
        self.assertEqual('1.0', client.check_api_version('1.0'))

    def test_too_new_for_the_client(self):
        error = self.assertRaises(client.UnsupportedVersion,
                                  client.check_api_version, '1.999')
        self.assertIn('This client speaks versions 1.0 to %s of the backup '
                      'scheduler API, not 1.999' % client.MAX_API_VERSION,
                      str(error))
        self.assertRaises(client.UnsupportedVersion,
                          client.check_api_version, '2.0')

    def test_not_a_version(self):
        for text in ('one', '1.x', 'latest', '1.latest', ''):
            error = self.assertRaises(client.UnsupportedVersion,
                                      client.check_api_version, text)
            self.assertIn('is not a version: give one of the form 1.N',
                          str(error))
