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
"""Trove's backup views as Backups, and the body of a create request."""

import datetime

from dbaas_scheduler.backends import base as backends
from dbaas_scheduler.backends.trove import views
from dbaas_scheduler.tests import base
from dbaas_scheduler.tests.unit.backends.trove import fakes

UTC = datetime.timezone.utc


class TestParsing(base.TestCase):

    def test_status(self):
        self.assertEqual('COMPLETED', views.parse_status('COMPLETED'))
        self.assertEqual('BUILDING', views.parse_status('building'))
        self.assertEqual('COMPLETED', views.parse_status('RESTORED'))
        self.assertEqual('DELETE_FAILED',
                         views.parse_status('DELETE_FAILED'))
        # Unknown statuses stay, and are not terminal.
        self.assertEqual('PAUSED', views.parse_status('PAUSED'))
        self.assertNotIn('PAUSED', backends.BackupStatus.TERMINAL)

    def test_time_without_offset_is_utc(self):
        self.assertEqual(datetime.datetime(2014, 10, 30, 12, 30, tzinfo=UTC),
                         views.parse_time('2014-10-30T12:30:00'))

    def test_time_with_offset_becomes_utc(self):
        parsed = views.parse_time('2015-08-27T09:49:58-05:00')
        self.assertEqual(datetime.datetime(2015, 8, 27, 14, 49, 58,
                                           tzinfo=UTC), parsed)
        self.assertEqual(UTC, parsed.tzinfo)
        self.assertEqual(
            datetime.datetime(2019, 12, 23, 22, 38, 42, 123456, tzinfo=UTC),
            views.parse_time('2019-12-23T22:38:42.123456Z'))

    def test_missing_or_bad_time(self):
        for value in (None, '', 'yesterday', '2014-13-45T00:00:00'):
            self.assertIsNone(views.parse_time(value), value)

    def test_size_gb_to_bytes(self):
        self.assertEqual(150323855, views.size_in_bytes(0.14))
        self.assertEqual(2 * 1024 ** 3, views.size_in_bytes('2'))
        self.assertEqual(0, views.size_in_bytes(0))
        for value in (None, '', 'big', float('inf')):
            self.assertIsNone(views.size_in_bytes(value), value)

    def test_backup_from_api_ref_sample(self):
        backup = views.backup_from_trove(fakes.TROVE_BACKUP)
        self.assertEqual(backends.Backup(
            id='a9832168-7541-4536-b8d9-a8a9b79cf1b4',
            instance_id=fakes.INSTANCE,
            status='COMPLETED',
            created_at=datetime.datetime(2014, 10, 30, 12, 30, tzinfo=UTC),
            updated_at=datetime.datetime(2014, 10, 30, 12, 30, tzinfo=UTC),
            name='snapshot', description='My Backup', parent_id=None,
            size_bytes=150323855, location='http://localhost/path/to/backup',
            fault=None), backup)
        self.assertTrue(backup.finished)

    def test_new_backup_has_no_size(self):
        backup = views.backup_from_trove(
            dict(fakes.TROVE_BACKUP, status='NEW', size=None,
                 locationRef=None))
        self.assertIsNone(backup.size_bytes)
        self.assertIsNone(backup.location)
        self.assertFalse(backup.finished)

    def test_failed_backup_reason(self):
        backup = views.backup_from_trove(dict(fakes.TROVE_BACKUP,
                                              status='FAILED'))
        self.assertIn('guest agent of instance %s' % fakes.INSTANCE,
                      backup.fault)
        given = views.backup_from_trove(dict(
            fakes.TROVE_BACKUP, status='FAILED',
            fault={'message': 'Swift is full'}))
        self.assertEqual('Swift is full', given.fault)

    def test_next_marker(self):
        # Trove's link: the request URL, https forced, a new marker.
        links = [{'rel': 'next',
                  'href': 'https://trove:8779/v1.0/p/backups?instance_id=i'
                          '&limit=100&marker=200'}]
        self.assertEqual('200', views.next_marker(links))
        self.assertIsNone(views.next_marker(None))
        self.assertIsNone(views.next_marker([]))
        self.assertIsNone(views.next_marker(
            [{'rel': 'self', 'href': 'https://t/backups?marker=5'}]))
        self.assertIsNone(views.next_marker(
            [{'rel': 'next', 'href': 'https://t/backups'}]))


class TestCreateRequest(base.TestCase):

    def test_minimal(self):
        self.assertEqual(
            {'backup': {'name': 'n', 'instance': fakes.INSTANCE,
                        'description': 'd'}},
            views.create_request(fakes.make_policy(), 'n', 'd'))

    def test_no_description(self):
        self.assertEqual({'backup': {'name': 'n', 'instance': fakes.INSTANCE}},
                         views.create_request(fakes.make_policy(), 'n', None))

    def test_backup_params(self):
        policy = fakes.make_policy(incremental=True, parent_id='p',
                                   swift_container='c',
                                   storage_driver='cinder')
        self.assertEqual(
            {'backup': {'name': 'n', 'instance': fakes.INSTANCE,
                        'description': 'd', 'incremental': 1,
                        'parent_id': 'p', 'swift_container': 'c'}},
            views.create_request(policy, 'n', 'd'))

    def test_incremental_is_an_integer(self):
        body = views.create_request(fakes.make_policy(incremental=False),
                                    'n', 'd')
        self.assertEqual(0, body['backup']['incremental'])
        self.assertNotIsInstance(body['backup']['incremental'], bool)

    def test_long_texts_keep_their_ends(self):
        tag = backends.execution_tag('0b0e7c4e-6a8e-4f0e-9d1c-3a0c1f1b9e11')
        name = 'p' * 300 + '-20270131T023000Z'
        description = 'Backup of policy %s. %s' % ('x' * 300, tag)
        backup = views.create_request(fakes.make_policy(), name,
                                      description)['backup']
        self.assertEqual(255, len(backup['name']))
        self.assertTrue(backup['name'].endswith('-20270131T023000Z'))
        self.assertEqual(255, len(backup['description']))
        self.assertTrue(backup['description'].endswith(tag))
        self.assertEqual('a' * 255, views.shorten('a' * 255, 10))
        self.assertEqual(255, len(views.shorten('a' * 400, 0)))


class TestRestoreRequest(base.TestCase):

    def test_a_new_instance_from_the_backup(self):
        self.assertEqual(
            {'instance': {'name': 'notes-restore-1', 'flavorRef': '7',
                          'volume': {'size': 20},
                          'restorePoint': {'backupRef': 'backup-1'},
                          'datastore': {'type': 'mysql',
                                        'version': '8.0'}}},
            views.restore_request('notes-restore-1', 7, '20', 'backup-1',
                                  {'type': 'mysql', 'version': '8.0',
                                   'name': 'ignored'}))

    def test_no_datastore_without_its_type(self):
        for datastore in (None, {}, {'version': '8.0'}):
            self.assertNotIn('datastore', views.restore_request(
                'n', '7', 20, 'backup-1', datastore)['instance'])
