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
"""Unit tests of the plugin's views, forms and words, without servers.

The scheduler API is replaced by mocks of dbaas_scheduler_dashboard.api;
the browser tests (tests/browser) run the same code against the real one.
"""

import datetime
from http import server as http_server
import json
import threading
from unittest import mock

import django
from django.core import exceptions as django_exceptions
from django.test import RequestFactory
import fixtures
import testtools

django.setup()

from dbaas_scheduler_dashboard.api import scheduler  # noqa: E402
from dbaas_scheduler_dashboard.api import trove  # noqa: E402
from dbaas_scheduler_dashboard.content.backup_policies import (  # noqa
    tables)
from dbaas_scheduler_dashboard.content.backup_policies import (  # noqa
    timeline)
from dbaas_scheduler_dashboard.content.backup_policies import (  # noqa
    views)
from dbaas_scheduler_dashboard.content.backup_policies import (  # noqa
    workflows)
from dbaas_scheduler_dashboard.content.backup_scheduler import (  # noqa
    views as admin_views)
from dbaas_scheduler_dashboard import utils  # noqa: E402


def error(status, code, detail):
    return scheduler.APIError(status, detail, code=code)


def execution(**values):
    base = {'id': 'e-1', 'status': 'SUCCEEDED', 'trigger': 'manual',
            'scheduled_at': '2026-11-27T10:00:00Z',
            'started_at': '2026-11-27T10:00:30Z',
            'finished_at': '2026-11-27T10:01:30Z'}
    base.update(values)
    return scheduler.Execution(base)


def policy(**values):
    base = {'id': 'p-1', 'name': 'nightly', 'project_id': 'a',
            'instance_id': 'notes', 'backend': 'local',
            'schedule_type': 'cron',
            'schedule': '30 2 * * *', 'timezone': 'Europe/Paris',
            'enabled': True, 'next_execution_time': None}
    base.update(values)
    return scheduler.Policy(base)


def edit(original, **changes):
    """What the edit workflow sends for ``original`` with ``changes``.

    ``[(policy id, changed fields)]``, one per update call.
    """
    sent = []
    flow = mock.Mock(
        context={'policy': original},
        values=lambda data: workflows._PolicyWorkflow.values(None, data),
        call=lambda request, function, *args: sent.append(args))
    data = {name: getattr(original, name, None) for name in workflows.FIELDS}
    data.update(changes)
    workflows.UpdatePolicy.handle(flow, None, data)
    return sent


class TestWords(testtools.TestCase):

    def test_cron_in_words(self):
        for expression, words in (
                ('30 2 * * *', 'Every day at 02:30'),
                ('@daily', 'Every day at 00:00'),
                ('0 4 * * 1', 'Every Monday at 04:00'),
                ('*/15 * * * *', 'Every 15 minutes'),
                ('5 * * * *', 'Every hour at minute 5'),
                ('0 1 15 * *', 'On day 15 of every month at 01:00'),
                ('H 1 * * 0', 'Every Sunday at a minute of 01:00-01:59 '
                 'that H picks for the policy')):
            self.assertEqual(words, utils.describe_cron(expression),
                             expression)
        self.assertIsNone(utils.describe_cron('0 0 1-7 * 1'))
        self.assertEqual('Cron: 0 0 1-7 * 1', utils.describe_schedule(
            {'schedule_type': 'cron', 'schedule': '0 0 1-7 * 1'}))

    def test_interval_and_once(self):
        self.assertEqual('Every 2 hours', utils.describe_schedule(
            {'schedule_type': 'interval', 'schedule': '7200'}))
        self.assertEqual('Every 90 seconds', utils.describe_schedule(
            {'schedule_type': 'interval', 'schedule': '90'}))

    def test_retention_in_words(self):
        self.assertEqual(
            'Keeps the last 3, 7 daily, 4 weekly backups, and deletes '
            'those older than 90 days.', utils.describe_retention(
                {'keep_last': 3, 'keep_daily': 7, 'keep_weekly': 4,
                 'max_age_days': 90}))
        self.assertEqual('Keeps every backup: none is deleted by this '
                         'policy.', utils.describe_retention({}))

    def test_times_in_a_zone(self):
        self.assertEqual('2026-11-28 02:30 CET', utils.in_zone(
            '2026-11-28T01:30:00Z', 'Europe/Paris'))
        self.assertEqual(30.0, utils.seconds_between(
            '2026-11-27T10:00:00Z', '2026-11-27T10:00:30+00:00'))


class TestFieldOfError(testtools.TestCase):

    def test_codes_name_their_field(self):
        for code, field in (
                ('dbaas_scheduler.invalid_cron_expression', 'schedule'),
                ('dbaas_scheduler.unknown_time_zone', 'timezone'),
                ('dbaas_scheduler.policy_name_exists', 'name'),
                ('dbaas_scheduler.invalid_instance', 'instance_id'),
                ('dbaas_scheduler.backend_not_enabled', 'backend')):
            self.assertEqual(field, workflows.field_of(
                error(400, code, 'x')))

    def test_a_validation_error_names_its_field(self):
        self.assertEqual('keep_daily', workflows.field_of(error(
            400, 'dbaas_scheduler.invalid',
            "keep_daily: -1 is less than the minimum of 0")))
        self.assertIsNone(workflows.field_of(error(
            409, 'dbaas_scheduler.conflict', 'Busy.')))

    def test_the_services_checks_name_their_field_too(self):
        for detail, field in (
                ('Invalid input: verify_schedule: 25 is not an hour',
                 'verify_schedule'),
                ('Invalid input: verify_every and verify_schedule exclude '
                 'each other: give one', 'verify_every'),
                ('verify_schedule: \'x\' is too long', 'verify_schedule')):
            self.assertEqual(field, workflows.field_of(error(
                400, 'dbaas_scheduler.invalid', detail)))


class TestVerificationFields(testtools.TestCase):

    def test_sent_when_given_left_out_when_empty(self):
        data = {'name': 'nightly', 'instance_id': 'notes',
                'schedule_type': 'cron', 'schedule': '30 2 * * *',
                'timezone': 'UTC', 'overlap_policy': 'skip',
                'verify_every': None, 'verify_schedule': '0 4 * * 0'}
        values = workflows._PolicyWorkflow.values(None, data)
        self.assertEqual('0 4 * * 0', values['verify_schedule'])
        self.assertNotIn('verify_every', values)
        data.update(verify_every=3, verify_schedule='')
        values = workflows._PolicyWorkflow.values(None, data)
        self.assertEqual(3, values['verify_every'])
        self.assertNotIn('verify_schedule', values)

    def test_emptied_on_an_edit_turns_it_off(self):
        original = policy(verify_schedule='0 4 * * 0', verify_every=None,
                          overlap_policy='skip')
        self.assertEqual([('p-1', {'verify_schedule': None,
                                   'verify_every': 2})],
                         edit(original, verify_schedule='', verify_every=2))

    def test_the_edit_form_starts_from_the_policy(self):
        self.assertIn('verify_schedule', workflows.FIELDS)
        self.assertEqual('0 4 * * 0', policy(
            verify_schedule='0 4 * * 0').verify_schedule)


class TestProtectionFields(testtools.TestCase):

    def test_sent_when_given_left_out_when_empty(self):
        data = {'name': 'nightly', 'instance_id': 'notes',
                'schedule_type': 'cron', 'schedule': '30 2 * * *',
                'timezone': 'UTC', 'overlap_policy': 'skip',
                'rpo': 90000, 'start_window': None,
                'completion_window': 14400}
        values = workflows._PolicyWorkflow.values(None, data)
        self.assertEqual(90000, values['rpo'])
        self.assertEqual(14400, values['completion_window'])
        self.assertNotIn('start_window', values)
        data.update(rpo=None, start_window=3600, completion_window=None)
        values = workflows._PolicyWorkflow.values(None, data)
        self.assertEqual(3600, values['start_window'])
        self.assertNotIn('rpo', values)
        self.assertNotIn('completion_window', values)

    def test_emptied_on_an_edit_is_derived_again(self):
        original = policy(rpo=90000, start_window=3600,
                          completion_window=None, overlap_policy='skip')
        self.assertEqual([('p-1', {'rpo': None,
                                   'completion_window': 7200})],
                         edit(original, rpo=None, start_window=3600,
                              completion_window=7200))

    def test_the_edit_form_starts_from_the_policy(self):
        found = policy(rpo=90000, start_window=3600,
                       completion_window=7200)
        for name, value in (('rpo', 90000), ('start_window', 3600),
                            ('completion_window', 7200)):
            self.assertIn(name, workflows.FIELDS)
            self.assertEqual(value, getattr(found, name))

    def test_the_bounds_are_the_apis(self):
        action = workflows.OptionsAction
        for name, low, high in (('rpo', 60, 10 * 366 * 86400),
                                ('start_window', 60, 7 * 86400),
                                ('completion_window', 60, 31 * 86400)):
            field = action.base_fields[name]
            self.assertFalse(field.clean(''))
            self.assertEqual(low, field.clean(str(low)))
            self.assertEqual(high, field.clean(str(high)))
            self.assertRaises(django_exceptions.ValidationError,
                              field.clean, str(low - 1))
            self.assertRaises(django_exceptions.ValidationError,
                              field.clean, str(high + 1))

    def test_the_services_checks_name_their_field(self):
        for detail, field in (
                ('Invalid input: rpo is a number of seconds from 60 to '
                 '316224000 (or null for the default, derived from the '
                 'schedule), not 10.', 'rpo'),
                ('Invalid input: completion_window (600 s) must not be '
                 'shorter than start_window (3600 s): both are counted '
                 'from the slot.', 'completion_window'),
                ('Invalid input: start_window must be a whole number of '
                 'seconds from 60 to 604800, not 30.', 'start_window')):
            self.assertEqual(field, workflows.field_of(error(
                400, 'dbaas_scheduler.invalid', detail)))


class _RequestTest(testtools.TestCase):

    def request(self, path='/', **params):
        request = RequestFactory().get(path, params)
        request.session = {}
        request.user = mock.Mock(token=mock.Mock(id='token'))
        return request


class TestPreviewView(_RequestTest):

    @mock.patch.object(scheduler, 'schedule_preview', autospec=True)
    def test_the_next_runs_in_the_policys_zone(self, preview):
        preview.return_value = {
            'next_runs': ['2026-11-28T01:30:00Z'], 'timezone':
            'Europe/Paris', 'example': False}
        response = views.PreviewView.as_view()(self.request(
            schedule='30 2 * * *', timezone='Europe/Paris',
            schedule_type='cron'))
        self.assertEqual(200, response.status_code)
        self.assertEqual({'runs': [{'utc': '2026-11-28T01:30:00Z',
                                    'policy': '2026-11-28 02:30 CET'}],
                          'timezone': 'Europe/Paris', 'example': False},
                         json.loads(response.content))
        preview.assert_called_once_with(
            mock.ANY, '30 2 * * *', schedule_type='cron',
            timezone='Europe/Paris', count=5)

    @mock.patch.object(scheduler, 'schedule_preview', autospec=True)
    def test_an_invalid_schedule_is_an_error_of_its_field(self, preview):
        preview.side_effect = error(
            400, 'dbaas_scheduler.invalid_cron_expression',
            'Invalid cron expression "61 * * * *": minute 61 is not in '
            '0-59.')
        response = views.PreviewView.as_view()(self.request(
            schedule='61 * * * *'))
        self.assertEqual(400, response.status_code)
        body = json.loads(response.content)
        self.assertEqual('schedule', body['field'])
        self.assertIn('minute 61', body['error'])
        preview.side_effect = error(
            400, 'dbaas_scheduler.unknown_time_zone', 'No time zone Mars.')
        response = views.PreviewView.as_view()(self.request(
            schedule='0 0 * * *', timezone='Mars'))
        self.assertEqual('timezone', json.loads(response.content)['field'])

    @mock.patch.object(scheduler, 'schedule_preview', autospec=True)
    def test_an_empty_schedule_asks_nothing(self, preview):
        response = views.PreviewView.as_view()(self.request(schedule=' '))
        self.assertEqual({'runs': [], 'example': False},
                         json.loads(response.content))
        preview.assert_not_called()


class TestScheduleForm(_RequestTest):

    def action(self, data):
        # An action binds the POST data of its request.
        request = RequestFactory().post('/', data)
        request.session = {}
        request.user = mock.Mock(token=mock.Mock(id='token'))
        return workflows.ScheduleAction(request, {})

    @mock.patch.object(scheduler, 'schedule_preview', autospec=True)
    def test_the_api_error_is_on_the_schedule_field(self, preview):
        preview.side_effect = error(
            400, 'dbaas_scheduler.invalid_cron_expression',
            'minute 61 is not in 0-59.')
        action = self.action({'schedule_type': 'cron',
                              'schedule': '61 * * * *',
                              'timezone': 'UTC'})
        self.assertFalse(action.is_valid())
        self.assertEqual(['minute 61 is not in 0-59.'],
                         action.errors['schedule'])

    @mock.patch.object(scheduler, 'schedule_preview', autospec=True)
    def test_an_unknown_zone_is_on_the_timezone_field(self, preview):
        preview.side_effect = error(
            400, 'dbaas_scheduler.unknown_time_zone', 'No zone Mars/Base.')
        action = self.action({'schedule_type': 'cron',
                              'schedule': '0 0 * * *',
                              'timezone': 'Mars/Base'})
        self.assertFalse(action.is_valid())
        self.assertEqual(['No zone Mars/Base.'], action.errors['timezone'])
        self.assertNotIn('schedule', action.errors)

    @mock.patch.object(scheduler, 'schedule_preview', autospec=True)
    def test_a_valid_schedule(self, preview):
        preview.return_value = {'next_runs': [], 'timezone': 'UTC'}
        action = self.action({'schedule_type': 'interval',
                              'schedule': '3600', 'timezone': 'UTC'})
        self.assertTrue(action.is_valid(), action.errors)


class TestTimelineAndHealth(testtools.TestCase):

    def test_one_mark_per_slot_oldest_first(self):
        drawn = timeline.build([
            execution(id='new', status='FAILED'),
            execution(id='old', status='SUCCEEDED',
                      finished_at='2026-11-27T10:00:40Z')])
        self.assertEqual(['old', 'new'],
                         [mark['id'] for mark in drawn['marks']])
        self.assertEqual(['#3c9a3c', '#d9534f'],
                         [mark['colour'] for mark in drawn['marks']])
        # The longer backup has the taller bar.
        self.assertGreater(drawn['marks'][1]['height'],
                           drawn['marks'][0]['height'])
        self.assertIsNone(timeline.build([]))

    def test_fleet_health(self):
        now = datetime.datetime(2026, 11, 27, 12, tzinfo=datetime.UTC)
        failing = policy(id='f', next_execution_time='2026-11-28T00:00:00Z')
        failing.last_execution = execution(status='FAILED')
        paused = policy(id='p', enabled=False)
        late = policy(id='l', next_execution_time='2026-11-27T11:00:00Z')
        self.assertEqual(
            {'total': 3, 'failing': 1, 'paused': 1, 'late': 1},
            admin_views.health([failing, paused, late], now=now))

    def test_table_cells(self):
        self.assertEqual('Every day at 02:30 (Europe/Paris)',
                         tables.get_schedule(policy()))
        self.assertEqual('Paused: maintenance', str(tables.get_state(
            policy(enabled=False, paused_reason='maintenance'))))
        self.assertEqual('Not while paused',
                         str(tables.get_next_run(policy(enabled=False))))


class TestRowsRefreshThemselves(_RequestTest):
    """Rows of running executions poll (Horizon's ajax row update)."""

    def setUp(self):
        super().setUp()
        # The row actions' menu needs a whole logged-in request context.
        for cls in (tables.PoliciesTable, tables.ExecutionsTable):
            self.useFixture(fixtures.MockPatchObject(
                cls, 'render_row_actions', return_value=''))

    def table(self, cls, data):
        table = cls(self.request('/project/backup_policies/'), data)
        return {row.datum.id: row for row in table.get_rows()}

    def test_a_policy_whose_backup_runs_is_refreshed(self):
        running = policy(id='running')
        running.last_execution = execution(status='RUNNING')
        done = policy(id='done')
        done.last_execution = execution(status='SUCCEEDED')
        never = policy(id='never')
        rows = self.table(tables.PoliciesTable, [running, done, never])
        self.assertIn('warning', rows['running'].classes)
        self.assertIn('/project/backup_policies/?action=row_update'
                      '&table=policies&obj_id=running',
                      rows['running'].attrs['data-update-url'])
        for name in ('done', 'never'):
            self.assertNotIn('warning', rows[name].classes)
            self.assertIn('status_up', rows[name].classes)
        # The marker column is hidden from the user.
        self.assertIn('hide', tables.PoliciesTable.base_columns[
            'activity'].get_final_attrs()['class'])

    def test_executions_poll_until_they_end(self):
        rows = self.table(tables.ExecutionsTable, [
            execution(id=status.lower(), status=status, backup_id=None,
                      deleted_backups=[], fault=None, status_reason=None)
            for status in ('PENDING', 'DISPATCHED', 'RUNNING', 'SUCCEEDED',
                           'FAILED', 'SKIPPED')])
        polling = sorted(name for name, row in rows.items()
                         if 'warning' in row.classes)
        self.assertEqual(['dispatched', 'pending', 'running'], polling)

    @mock.patch.object(scheduler, 'execution_get', autospec=True)
    @mock.patch.object(scheduler, 'policy_get', autospec=True)
    def test_the_row_update_answers_one_row(self, policy_get,
                                            execution_get):
        policy_get.return_value = policy(id='p-1', last_execution_id='e-1')
        execution_get.return_value = execution(status='SUCCEEDED')
        request = self.request('/project/backup_policies/',
                               action='row_update', table='policies',
                               obj_id='p-1')
        request.META['HTTP_X_REQUESTED_WITH'] = 'XMLHttpRequest'
        table = tables.PoliciesTable(request)
        response = table.maybe_preempt()
        self.assertEqual(200, response.status_code)
        body = response.content.decode()
        self.assertIn('id="policies__row__p-1"', body)
        self.assertIn('Succeeded', body)
        self.assertNotIn('ajax-update warning', body)
        policy_get.side_effect = error(404, 'dbaas_scheduler.not_found',
                                       'No such policy.')
        self.assertEqual(404, tables.PoliciesTable(
            request).maybe_preempt().status_code)


class TestLastExecutions(_RequestTest):
    """A page of policies reads its last executions in one request."""

    def setUp(self):
        super().setUp()
        self.execution_list = self.useFixture(fixtures.MockPatchObject(
            scheduler, 'execution_list', autospec=True)).mock
        self.execution_get = self.useFixture(fixtures.MockPatchObject(
            scheduler, 'execution_get', autospec=True)).mock
        self.execution_get.side_effect = (
            lambda request, execution_id: execution(id=execution_id))

    def policies(self, count):
        never_ran = policy(id='new', last_execution_id=None)
        return [policy(id='p-%d' % n, last_execution_id='e-%d' % n)
                for n in range(count)] + [never_ran]

    def test_one_request_for_the_page(self):
        policies = self.policies(30)
        self.execution_list.return_value = [
            execution(id='e-%d' % n, status='FAILED' if n == 7 else 'RUNNING')
            for n in range(30)] + [execution(id='e-older')]
        request = self.request('/project/backup_policies/')
        tables.attach_last_executions(request, policies)
        self.execution_list.assert_called_once_with(
            request, all_projects=False,
            limit=tables.LAST_EXECUTIONS_PER_POLICY * 30)
        self.assertEqual(0, self.execution_get.call_count)
        self.assertEqual(['e-%d' % n for n in range(30)] + [None], [
            p.last_execution and p.last_execution.id for p in policies])
        self.assertEqual('FAILED', policies[7].last_execution.status)

    def test_all_projects_are_read_for_the_admin_page(self):
        self.execution_list.return_value = []
        tables.attach_last_executions(self.request('/'), self.policies(2),
                                      all_projects=True)
        self.assertEqual(
            {'all_projects': True, 'limit': tables.LAST_EXECUTIONS_MIN},
            self.execution_list.call_args.kwargs)

    def test_only_those_not_listed_are_fetched_alone(self):
        policies = self.policies(4)
        self.execution_list.return_value = [execution(id='e-0'),
                                            execution(id='e-2')]
        self.execution_get.side_effect = [
            execution(id='e-1'), error(404, 'dbaas_scheduler.not_found',
                                       'No such execution.')]
        tables.attach_last_executions(self.request('/'), policies)
        self.assertEqual(1, self.execution_list.call_count)
        self.assertEqual(['e-1', 'e-3'], [
            c.args[1] for c in self.execution_get.call_args_list])
        self.assertEqual(['e-0', 'e-1', 'e-2', None, None], [
            p.last_execution and p.last_execution.id for p in policies])

    def test_one_policy_is_one_request(self):
        policies = self.policies(1)
        tables.attach_last_executions(self.request('/'), policies)
        self.assertEqual(0, self.execution_list.call_count)
        self.assertEqual(1, self.execution_get.call_count)
        self.assertEqual('e-0', policies[0].last_execution.id)

    def test_the_project_page_makes_one_request(self):
        self.useFixture(fixtures.MockPatchObject(
            scheduler, 'policy_list', autospec=True,
            return_value=self.policies(12)))
        self.useFixture(fixtures.MockPatchObject(
            tables, 'attach_instance_names', autospec=True))
        self.execution_list.return_value = [
            execution(id='e-%d' % n) for n in range(12)]
        view = views.IndexView()
        view.request = self.request('/project/backup_policies/')
        view.table = mock.Mock(**{'get_filter_field.return_value': None,
                                  'get_filter_string.return_value': None})
        listed = view.get_data()
        self.assertEqual(1, self.execution_list.call_count)
        self.assertEqual(0, self.execution_get.call_count)
        self.assertEqual(13, len(listed))


class _Trove(http_server.BaseHTTPRequestHandler):
    """Trove's GET /instances/{id}, on loopback: two instances."""

    instances = {'i-1': 'orders-db', 'i-2': 'users-db'}
    seen = []

    def do_GET(self):
        self.seen.append((self.path, self.headers.get('X-Auth-Token')))
        instance_id = self.path.rsplit('/', 1)[-1]
        if instance_id not in self.instances:
            self.send_response(404)
            self.end_headers()
            return
        body = json.dumps({'instance': {
            'id': instance_id, 'name': self.instances[instance_id]}})
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args):
        pass


class TestInstanceNames(_RequestTest):

    def setUp(self):
        super().setUp()
        server = http_server.ThreadingHTTPServer(('127.0.0.1', 0), _Trove)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.server_close)
        self.addCleanup(server.shutdown)
        _Trove.seen = []
        self.url = 'http://127.0.0.1:%d/v1.0/project-a' % (
            server.server_address[1])
        self.useFixture(fixtures.MockPatchObject(
            trove.base, 'url_for', side_effect=lambda request, kind: (
                self.url if kind == 'database' else None)))

    def test_trove_names_the_instances_the_user_sees(self):
        policies = [policy(id='a', backend='trove', instance_id='i-1'),
                    policy(id='b', backend='trove', instance_id='gone'),
                    policy(id='c', backend='local', instance_id='notes')]
        tables.attach_instance_names(self.request(), policies)
        self.assertEqual(['orders-db', 'gone', 'notes'],
                         [tables.get_instance(p) for p in policies])
        # With the user's token; only Trove instances are asked about.
        self.assertEqual(
            [('/v1.0/project-a/instances/gone', 'token'),
             ('/v1.0/project-a/instances/i-1', 'token')],
            sorted(_Trove.seen))

    def test_without_trove_the_id(self):
        self.url = 'http://127.0.0.1:1/v1.0/project-a'  # nothing listens
        subject = policy(backend='trove', instance_id='i-1')
        tables.attach_instance_names(self.request(), [subject])
        self.assertEqual('i-1', tables.get_instance(subject))
        trove.base.url_for.side_effect = Exception('no database endpoint')
        self.assertEqual({}, trove.instance_names(self.request(), ['i-1']))

    def test_a_link_only_with_trove_dashboard(self):
        subject = policy(backend='trove', instance_id='i-1')
        self.assertIsNone(tables.get_instance_link(subject))
        with mock.patch.object(trove, 'dashboard_installed', autospec=True,
                               return_value=True), mock.patch.object(
                trove, 'reverse', autospec=True,
                return_value='/project/databases/i-1/') as reverse:
            self.assertEqual('/project/databases/i-1/',
                             tables.get_instance_link(subject))
            reverse.assert_called_once_with(trove.DETAIL_URL, args=['i-1'])
            self.assertIsNone(tables.get_instance_link(
                policy(backend='local')))
