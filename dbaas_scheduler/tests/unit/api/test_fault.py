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
"""Exceptions to HTTP statuses, in one place."""

import json
from unittest import mock

from oslo_db import exception as db_exc
from oslotest import base
import sqlalchemy.exc
from sqlalchemy.orm import exc as orm_exc

from dbaas_scheduler.api import fault
from dbaas_scheduler import exception
from dbaas_scheduler import keystone


class TestStatusOf(base.BaseTestCase):

    def answer(self, error):
        response = fault.FaultWrapper.response_for(error, 'req-1')
        return response.status_int, json.loads(response.text)['errors'][0]

    def test_keystone_unavailable_is_503(self):
        status, body = self.answer(exception.KeystoneUnavailable(
            consequence='The backup policy was not created.',
            reason='connection refused'))
        self.assertEqual(503, status)
        self.assertEqual(('dbaas_scheduler.keystone_unavailable',
                          'Service Unavailable', 'req-1'),
                         (body['code'], body['title'], body['request_id']))
        self.assertEqual('Keystone is unreachable, try again later. The '
                         'backup policy was not created. (connection '
                         'refused)', body['detail'])

    def test_keystone_refusing_a_trust_is_400(self):
        status, body = self.answer(keystone.TrustError(
            roles='admin', project_id='p', reason='Keystone answered 403'))
        self.assertEqual(400, status)
        self.assertEqual('dbaas_scheduler.trust_error', body['code'])


def _data_error(message, dbapi_class=Exception):
    """An error as oslo.db raises it for a driver's DataError."""
    class DataError(dbapi_class):
        pass
    inner = sqlalchemy.exc.DataError('INSERT ...', {}, DataError(message))
    return db_exc.DBError(inner)


class TestDatabaseErrors(base.BaseTestCase):

    def answer(self, error):
        with mock.patch.object(fault.LOG, 'warning', autospec=True) as warning:
            response = fault.FaultWrapper.response_for(error, 'req-1')
        body = json.loads(response.text)['errors'][0]
        self.assertEqual(1, warning.call_count)
        return response.status_int, body

    def test_values_that_do_not_fit_are_400(self):
        for error, column in (
                (db_exc.DBDataError(_data_error(
                    "(1406, \"Data too long for column 'user_id' at row "
                    "1\")")), 'user_id'),
                (_data_error("(1366, \"Incorrect string value: '\\xF0' for "
                             "column `api`.`backup_policy`.`name` at row "
                             "1\")"), 'name'),
                (_data_error('value too long for type character '
                             'varying(255)'), None),
                (db_exc.DBError(ValueError(
                    'A string literal cannot contain NUL (0x00) '
                    'characters.')), None),
                (db_exc.DBError(OverflowError(
                    'Python int too large to convert to SQLite INTEGER')),
                 None)):
            status, body = self.answer(error)
            self.assertEqual((400, 'dbaas_scheduler.invalid'),
                             (status, body['code']))
            self.assertEqual(
                'Invalid input: a value%s does not fit in the database '
                '(too long, out of range, or text it cannot store).'
                % (' of %s' % column if column else ''), body['detail'])

    def test_conflicts_are_409(self):
        for error in (db_exc.DBDuplicateEntry(columns=['id']),
                      db_exc.DBConstraintError('t', 'ck_x'),
                      db_exc.DBReferenceError('t', 'fk', 'k', 'kt'),
                      db_exc.DBDeadlock(),
                      orm_exc.StaleDataError('0 rows matched')):
            status, body = self.answer(error)
            self.assertEqual((409, 'dbaas_scheduler.conflict'),
                             (status, body['code']), error)
            self.assertIn('retry', body['detail'])

    def test_an_unreachable_database_is_503(self):
        status, body = self.answer(db_exc.DBConnectionError('refused'))
        self.assertEqual((503, 'dbaas_scheduler.service_unavailable'),
                         (status, body['code']))

    def test_other_database_errors_are_500(self):
        with mock.patch.object(fault.LOG, 'exception',
                               autospec=True) as logged:
            response = fault.FaultWrapper.response_for(
                db_exc.DBError(RuntimeError('no such table')), 'req-1')
        self.assertEqual(500, response.status_int)
        self.assertEqual(1, logged.call_count)


class TestDetail(base.BaseTestCase):

    def test_a_long_detail_is_cut_in_the_middle(self):
        error = exception.Invalid(
            reason='%s is wrong; write it so.' % ('x' * 600000))
        response = fault.FaultWrapper.response_for(error, 'req-1')
        detail = json.loads(response.text)['errors'][0]['detail']
        self.assertEqual(fault.MAX_DETAIL + len(
            ' [... 599006 characters left out ...] '), len(detail))
        self.assertTrue(detail.startswith('Invalid input: xxx'))
        self.assertTrue(detail.endswith('xxx is wrong; write it so.'))
        self.assertLess(len(response.body), 2000)
